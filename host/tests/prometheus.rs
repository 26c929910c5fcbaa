//! A real Prometheus (Debian's `prometheus` package) scrapes a running
//! reference host: after known sign-ins and OData reads its query API
//! answers the counts that happened; `promtool check metrics` accepts the
//! page; the alerting rules shipped in `docs/alerts/` pass
//! `promtool check rules` and their unit tests (`promtool test rules`).
//!
//! Without `prometheus` and `promtool` the tests skip with a message, and
//! fail when `CI` is set.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::PASSWORD;
use gatehouse::{Accounts, Email};
use reqwest::Client;
use secrecy::SecretString;
use serde_json::{json, Value};

const EMAIL: &str = "ada@example.org";

/// Whether `tool` runs here; without it, skips (outside CI) or fails (CI).
fn present(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "`{tool}` is required in CI (apt-get install prometheus)"
        );
        eprintln!("skipped: `{tool}` is not installed (apt-get install prometheus)");
    }
    found
}

/// A running Prometheus, killed when dropped.
struct Prometheus {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Prometheus scraping `target` (`host:port`) every second.
    fn start(target: &str) -> Prometheus {
        let dir = tempfile::tempdir().expect("a temp dir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: gatehouse\n    metrics_path: /metrics\n    \
                 static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("the config is written");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("a log file");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(log.try_clone().expect("the log"))
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        Prometheus {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        }
    }

    /// What `pick` reads of the answer of `GET /api/v1/<api>?<param>`, once
    /// `done` accepts it (asked again until then, at most 30 s); the last
    /// reading otherwise.
    async fn asked<T>(
        &self,
        http: &Client,
        api: &str,
        param: (&str, &str),
        pick: impl Fn(&Value) -> Option<T>,
        done: impl Fn(&Option<T>) -> bool,
    ) -> Option<T> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = async {
                let body: Value = http
                    .get(format!("{}/api/v1/{api}", self.base))
                    .query(&[param])
                    .send()
                    .await
                    .ok()?
                    .json()
                    .await
                    .ok()?;
                pick(&body)
            }
            .await;
            if done(&answer) || Instant::now() > deadline {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The value of the instant query `query`, once Prometheus answers it
    /// with `expected`; the last answer otherwise.
    async fn value_once(&self, http: &Client, query: &str, expected: f64) -> Option<f64> {
        let value = |body: &Value| body["data"]["result"][0]["value"][1].as_str()?.parse().ok();
        self.asked(http, "query", ("query", query), value, |a| {
            *a == Some(expected)
        })
        .await
    }

    /// The type Prometheus's scrapes recorded for the metric family `name`
    /// (`/api/v1/metadata`), once it has one.
    async fn family_type(&self, http: &Client, name: &str) -> Option<String> {
        let kind = |body: &Value| Some(body["data"][name][0]["type"].as_str()?.to_owned());
        self.asked(http, "metadata", ("metric", name), kind, Option::is_some)
            .await
    }
}

/// Runs `promtool` with `args` (and `stdin`), asserting it succeeds.
fn promtool(args: &[&str], dir: &Path, stdin: Option<&str>) -> String {
    let mut child = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("promtool reads");
    }
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?} failed:\n{said}");
    said
}

#[tokio::test(flavor = "multi_thread")]
async fn prometheus_scrapes_the_counts_of_what_happened() {
    if !present("prometheus") || !present("promtool") {
        return;
    }
    let db = common::TestDb::new().await;
    let (figment, base) = common::served_figment(&db.url, "");
    let rocket = gatehouse_host::rocket(figment)
        .ignite()
        .await
        .expect("the host ignites");
    let accounts = Accounts::of(&rocket).expect("Gatehouse is attached");
    let email = Email::parse(EMAIL).expect("an address");
    accounts
        .add_user(&email, None, SecretString::from(PASSWORD.to_owned()))
        .await
        .expect("the user is added");
    let shutdown = common::launch(rocket, &base, "/login").await;

    let http = Client::builder()
        .cookie_store(true)
        .build()
        .expect("a client");
    for password in ["wrong 1", "wrong 2", "wrong 3", PASSWORD] {
        http.post(format!("{base}/auth/login"))
            .json(&json!({"email": EMAIL, "password": password}))
            .send()
            .await
            .expect("the host answers");
    }
    let events: Value = http
        .get(format!("{base}/odata/SecurityEvents"))
        .send()
        .await
        .expect("the host answers")
        .json()
        .await
        .expect("JSON");
    let rows = events["value"].as_array().expect("a collection").len();
    assert!(rows >= 4, "{events}");

    // The page as it is, for promtool.
    let page = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("the host answers")
        .text()
        .await
        .expect("text");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    promtool(&["check", "metrics"], here, Some(&page));

    let prometheus = Prometheus::start(base.trim_start_matches("http://"));
    let expect = [
        (
            r#"gatehouse_auth_events_total{event="failed",method="password"}"#,
            3.0,
        ),
        (
            r#"gatehouse_auth_events_total{event="login",method="password"}"#,
            1.0,
        ),
        (
            r#"gatehouse_odata_requests_total{set="SecurityEvents",kind="collection",status="200"}"#,
            1.0,
        ),
        (
            r#"gatehouse_odata_rows_total{set="SecurityEvents"}"#,
            rows as f64,
        ),
        (r#"gatehouse_ready"#, 1.0),
        (r#"up{job="gatehouse"}"#, 1.0),
    ];
    for (query, expected) in expect {
        let value = prometheus.value_once(&http, query, expected).await;
        assert_eq!(value, Some(expected), "{query}");
    }
    // Prometheus asks for OpenMetrics first and got it: there, a counter's
    // family is named without its `_total` (in the text format, with it).
    let family = prometheus.family_type(&http, "gatehouse_auth_events").await;
    assert_eq!(family.as_deref(), Some("counter"));
    shutdown.notify();
}

#[test]
fn the_shipped_alerting_rules_check_and_pass_their_unit_tests() {
    if !present("promtool") {
        return;
    }
    let alerts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/alerts");
    let checked = promtool(&["check", "rules", "gatehouse.rules.yml"], &alerts, None);
    assert!(checked.contains("SUCCESS: 6 rules found"), "{checked}");
    let tested = promtool(
        &["test", "rules", "gatehouse.rules.test.yml"],
        &alerts,
        None,
    );
    assert!(tested.contains("SUCCESS"), "{tested}");
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_are_served_on_a_listener_of_their_own() {
    let db = common::TestDb::new().await;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (figment, base) = common::served_figment(
        &db.url,
        &format!("[ops]\nmetrics_address = \"127.0.0.1:{port}\"\n"),
    );
    let rocket = gatehouse_host::rocket(figment)
        .ignite()
        .await
        .expect("the host ignites");
    let shutdown = common::launch(rocket, &base, "/login").await;
    let apart = format!("http://127.0.0.1:{port}");
    let http = Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        if let Ok(answer) = http.get(format!("{apart}/metrics")).send().await {
            assert_eq!(answer.status(), reqwest::StatusCode::OK);
            break answer.text().await.expect("text");
        }
        assert!(
            Instant::now() < deadline,
            "the metrics listener did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(page.contains("gatehouse_build_info{version="), "{page}");
    // It serves the metrics alone.
    let login = http
        .get(format!("{apart}/login"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(login.status(), reqwest::StatusCode::NOT_FOUND);
    shutdown.notify();
    // It ends with the server.
    let ended = Instant::now() + Duration::from_secs(15);
    while http.get(format!("{apart}/metrics")).send().await.is_ok() {
        assert!(
            Instant::now() < ended,
            "the metrics listener outlived the server"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
