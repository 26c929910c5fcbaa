//! Past one PostgreSQL server, against servers each test starts itself
//! (`common::pg_cluster`: a primary and a streaming standby made with
//! `pg_basebackup -R`), never the machine's shared server: OData reads run
//! on the replica (its statement log, not the primary's) and go on when it
//! stops; a failover (`pg_ctl promote`) needs no restart — every request in
//! the gap answers 503 with `Retry-After` within 2 s, none 500, a sign-in
//! succeeds within 5 s of the promotion, and a session made before it still
//! opens the dashboard; a statement that holds its connection when the
//! primary is lost runs to its end; a standby of another server is refused
//! as a replica at start.
//!
//! Without PostgreSQL's server binaries the tests skip with a message, and
//! fail when `CI` is set.

mod common;

use std::time::{Duration, Instant};

use common::pg_cluster::{Node, PgCluster};
use common::{PASSWORD, SECRET_KEY};
use gatehouse::{Accounts, Email};
use reqwest::header::{ACCEPT, COOKIE, RETRY_AFTER, SET_COOKIE};
use reqwest::{Client, StatusCode};
use secrecy::SecretString;
use serde_json::{json, Value};

const EMAIL: &str = "ada@example.org";

/// The reference host on `url`, its OData reads on `replicas`, with a
/// public set over `rep_items`, listening on a free port; answers its base
/// URL, its shutdown handle and its accounts.
async fn serve(url: &str, replicas: &[String]) -> (String, rocket::Shutdown, Accounts) {
    serve_with_lag(url, replicas, 2000).await
}

/// As [`serve`], skipping a replica `max_lag_ms` behind the primary.
async fn serve_with_lag(
    url: &str,
    replicas: &[String],
    max_lag_ms: u64,
) -> (String, rocket::Shutdown, Accounts) {
    let replicas: Vec<String> = replicas.iter().map(|r| format!("{r:?}")).collect();
    let sets = format!(
        "[odata]\nreplicas = [{}]\nmax_replica_lag_ms = {max_lag_ms}\n\n\
         [odata.sets.Items]\ntable = \"rep_items\"\npublic = true\n",
        replicas.join(", ")
    );
    let (figment, base) = common::served_figment(url, &sets);
    let rocket = gatehouse_host::rocket(figment)
        .ignite()
        .await
        .expect("the host ignites");
    let accounts = Accounts::of(&rocket).expect("Gatehouse is attached");
    let shutdown = common::launch(rocket, &base, "/login").await;
    (base, shutdown, accounts)
}

/// `gatehouse migrate` on `url`.
fn migrate(url: &str) -> common::Run {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    command
        .arg("migrate")
        .env(
            "ROCKET_CONFIG",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Rocket.toml"),
        )
        .env("ROCKET_DATABASES", format!("{{main={{url=\"{url}\"}}}}"))
        .env("ROCKET_SECRET_KEY", SECRET_KEY)
        .env("ROCKET_LOG_LEVEL", "off")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    common::run(command, None)
}

/// `gatehouse serve` on `url` with its OData reads on `replicas`, run to
/// its end (a start refused) or killed after two minutes.
fn serve_binary(url: &str, replicas: &[String]) -> common::Run {
    let replicas: Vec<String> = replicas.iter().map(|r| format!("{r:?}")).collect();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    command
        .arg("serve")
        .env(
            "ROCKET_CONFIG",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Rocket.toml"),
        )
        .env("ROCKET_DATABASES", format!("{{main={{url=\"{url}\"}}}}"))
        .env(
            "ROCKET_ODATA",
            format!("{{replicas=[{}]}}", replicas.join(", ")),
        )
        .env("ROCKET_SECRET_KEY", SECRET_KEY)
        .env("ROCKET_PORT", "0")
        .env("ROCKET_LOG_LEVEL", "off")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    common::run(command, None)
}

/// Creates `rep_items` with 20 rows on the primary.
fn fill(cluster: &PgCluster) {
    cluster.psql(
        Node::Primary,
        "CREATE TABLE rep_items (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL)",
    );
    cluster.psql(
        Node::Primary,
        "INSERT INTO rep_items SELECT i, 'item ' || i FROM generate_series(1, 20) AS i",
    );
}

/// The ids `GET /odata/Items` with `query` answers, or its status.
async fn ids(http: &Client, base: &str, query: &str) -> Result<Vec<i64>, StatusCode> {
    let response = http
        .get(format!("{base}/odata/Items?{query}"))
        .send()
        .await
        .expect("an answer");
    if response.status() != StatusCode::OK {
        return Err(response.status());
    }
    let body: Value = response.json().await.expect("JSON");
    Ok(body["value"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_i64().expect("an id"))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odata_reads_run_on_the_replica_and_go_on_when_it_stops() {
    let Some(cluster) = PgCluster::start(1) else {
        return;
    };
    for node in [Node::Primary, Node::Standby(0)] {
        cluster.set_config(node, "log_statement", "all");
    }
    fill(&cluster);
    cluster.wait_replayed(0);
    let (base, shutdown, _) =
        serve_with_lag(&cluster.primary_url(), &[cluster.standby_url(0)], 500).await;
    let http = Client::new();
    let all: Vec<i64> = (1..=20).collect();
    let probe = "$filter=name ne 'replica-probe'&$orderby=id";
    assert_eq!(ids(&http, &base, probe).await, Ok(all.clone()));
    assert!(
        cluster.log(Node::Standby(0)).contains("replica-probe"),
        "the read did not run on the replica"
    );
    assert!(
        !cluster.log(Node::Primary).contains("replica-probe"),
        "the read ran on the primary"
    );

    // A write on the primary reaches the reads once replayed.
    cluster.psql(
        Node::Primary,
        "INSERT INTO rep_items VALUES (21, 'item 21')",
    );
    cluster.wait_replayed(0);
    let mut more = all.clone();
    more.push(21);
    assert_eq!(ids(&http, &base, "$orderby=id").await, Ok(more.clone()));

    // The replica stops replaying while the primary writes: once it is
    // more than 500 ms behind, reads go to the primary and see the write;
    // when it has caught up, they go back to it.
    cluster.psql(Node::Standby(0), "SELECT pg_wal_replay_pause()");
    cluster.psql(
        Node::Primary,
        "INSERT INTO rep_items VALUES (22, 'item 22')",
    );
    more.push(22);
    let lagging = "$filter=name ne 'lag-probe'&$orderby=id";
    let seen = wait_for(Duration::from_secs(10), || async {
        ids(&http, &base, lagging).await == Ok(more.clone())
    })
    .await;
    assert!(seen, "reads kept going to a replica that stopped replaying");
    assert!(cluster.log(Node::Primary).contains("lag-probe"));
    // The metrics say so: the replica is out of use, and behind.
    let up = r#"gatehouse_db_replica_up{replica="0"}"#;
    assert_eq!(metric(&http, &base, up).await, Some(0.0));
    let lag = metric(
        &http,
        &base,
        r#"gatehouse_db_replica_lag_seconds{replica="0"}"#,
    )
    .await;
    assert!(lag.is_some_and(|s| s > 0.5), "{lag:?}");
    cluster.psql(Node::Standby(0), "SELECT pg_wal_replay_resume()");
    cluster.wait_replayed(0);
    let back = wait_for(Duration::from_secs(10), || async {
        let _ = ids(&http, &base, "$filter=name ne 'caught-up-probe'").await;
        cluster.log(Node::Standby(0)).contains("caught-up-probe")
    })
    .await;
    assert!(
        back,
        "reads did not go back to the replica once it caught up"
    );
    assert_eq!(metric(&http, &base, up).await, Some(1.0));

    // The replica stops: every read still answers, from the primary.
    cluster.stop(Node::Standby(0));
    let fallback = "$filter=name ne 'primary-probe'&$orderby=id";
    for _ in 0..10 {
        assert_eq!(ids(&http, &base, fallback).await, Ok(more.clone()));
    }
    assert!(
        cluster.log(Node::Primary).contains("primary-probe"),
        "the primary did not take the reads"
    );
    // Started again, it is used again.
    cluster.start_node(Node::Standby(0));
    cluster.wait_replayed(0);
    let back = wait_for(Duration::from_secs(10), || async {
        let _ = ids(&http, &base, "$filter=name ne 'restarted-probe'").await;
        cluster.log(Node::Standby(0)).contains("restarted-probe")
    })
    .await;
    assert!(back, "reads did not go back to the restarted replica");
    shutdown.notify();
}

/// Asks `check` every 100 ms until it holds or `within` has passed;
/// answers whether it held.
async fn wait_for<F, Fut>(within: Duration, check: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// `POST /auth/login` as JSON; answers the status and the session cookie.
async fn login(http: &Client, base: &str) -> (StatusCode, Option<String>) {
    let response = http
        .post(format!("{base}/auth/login"))
        .header(ACCEPT, "application/json")
        .json(&json!({"email": EMAIL, "password": PASSWORD}))
        .send()
        .await
        .expect("an answer");
    let session = response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|raw| raw.strip_prefix("gatehouse_session="))
        .and_then(|rest| rest.split(';').next())
        .map(str::to_owned);
    (response.status(), session)
}

/// `GET /dashboard` with `session`: its status, whether it came with
/// `Retry-After`, and how long it took.
async fn dashboard(http: &Client, base: &str, session: &str) -> (StatusCode, bool, Duration) {
    let started = Instant::now();
    let response = http
        .get(format!("{base}/dashboard"))
        .header(ACCEPT, "application/json")
        .header(COOKIE, format!("gatehouse_session={session}"))
        .send()
        .await
        .expect("an answer");
    let retry = response.headers().contains_key(RETRY_AFTER);
    (response.status(), retry, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_needs_no_restart() {
    let Some(cluster) = PgCluster::start(1) else {
        return;
    };
    fill(&cluster);
    // The command line takes the same URL (sqlx alone refuses several
    // hosts: "invalid port number").
    migrate(&cluster.multi_host_url()).assert_success();
    let (base, shutdown, accounts) = serve(&cluster.multi_host_url(), &[]).await;
    let email = Email::parse(EMAIL).expect("an address");
    accounts
        .add_user(&email, None, SecretString::from(PASSWORD))
        .await
        .expect("an account");
    let http = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let (status, session) = login(&http, &base).await;
    assert_eq!(status, StatusCode::OK);
    let session = session.expect("a session cookie");
    assert_eq!(dashboard(&http, &base, &session).await.0, StatusCode::OK);
    cluster.wait_replayed(0);

    // The primary fails: for three seconds, every request answers 503 with
    // Retry-After within 2 s.
    cluster.crash(Node::Primary);
    let gap = Instant::now();
    let mut slowest = Duration::ZERO;
    while gap.elapsed() < Duration::from_secs(3) {
        let (status, retry, took) = dashboard(&http, &base, &session).await;
        slowest = slowest.max(took);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "during the gap");
        assert!(retry, "a 503 without Retry-After");
        assert!(
            took <= Duration::from_millis(2500),
            "a request took {took:?}"
        );
        let read = ids(&http, &base, "$orderby=id").await;
        assert_eq!(
            read,
            Err(StatusCode::SERVICE_UNAVAILABLE),
            "an OData read in the gap"
        );
    }

    // The standby is promoted: a sign-in succeeds within 5 s, and the
    // session made before the failover opens the dashboard.
    cluster.promote(0);
    let promoted = Instant::now();
    loop {
        let (status, _) = login(&http, &base).await;
        if status == StatusCode::OK {
            break;
        }
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "before the host is found"
        );
        assert!(
            promoted.elapsed() < Duration::from_secs(5),
            "no sign-in within 5 s of the promotion"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = promoted.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the first sign-in came after {took:?}"
    );
    eprintln!("failover: slowest answer in the gap {slowest:?}; first sign-in {took:?} after the promotion");
    assert_eq!(dashboard(&http, &base, &session).await.0, StatusCode::OK);
    let all: Vec<i64> = (1..=20).collect();
    assert_eq!(ids(&http, &base, "$orderby=id").await, Ok(all));
    let failovers = metric(&http, &base, "gatehouse_db_failovers_total").await;
    assert_eq!(failovers, Some(1.0));
    shutdown.notify();
}

/// The value of the sample `series` (as the page writes it) on the host's
/// `/metrics`, if present.
async fn metric(http: &Client, base: &str, series: &str) -> Option<f64> {
    let page = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// What a statement on `db` answers, and how long it took.
async fn timed(db: &gatehouse::Db, sql: &'static str) -> (Result<u64, sqlx::Error>, Duration) {
    let asked = Instant::now();
    let done = db.execute(db.query(sql)).await;
    (done, asked.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_under_way_when_the_primary_is_lost_runs_to_its_end() {
    let Some(cluster) = PgCluster::start(1) else {
        return;
    };
    // A database of its own, whose connections can be closed to all.
    cluster.psql(Node::Primary, "CREATE DATABASE gate");
    let url = cluster.multi_host_url().replace("/postgres?", "/gate?");
    let db = gatehouse::Db::connect(&url).await.expect("connects");
    let statement = {
        let db = db.clone();
        tokio::spawn(async move {
            let under_way = db.query("SELECT 1 AS n FROM pg_sleep(3)");
            db.fetch_optional(under_way).await.map(|row| row.is_some())
        })
    };
    let running = "SELECT pid FROM pg_stat_activity \
                   WHERE datname = 'gate' AND state = 'active' AND query LIKE '%pg_sleep%'";
    assert!(
        wait_for(Duration::from_secs(5), || async {
            !cluster.psql(Node::Primary, running).is_empty()
        })
        .await,
        "the statement never started"
    );
    let pid = cluster.psql(Node::Primary, running);

    // The primary is lost to the watcher: nobody connects to the database
    // any more, and every connection but the statement's is closed.
    cluster.psql(Node::Primary, "ALTER DATABASE gate ALLOW_CONNECTIONS false");
    cluster.psql(
        Node::Primary,
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = 'gate' AND pid <> {pid}"
        ),
    );
    // Statements that still need a connection are refused at once.
    assert!(
        wait_for(Duration::from_secs(3), || async {
            let (done, took) = timed(&db, "SELECT 1").await;
            // `PoolTimedOut` is the 503 with `Retry-After`.
            matches!(done, Err(sqlx::Error::PoolTimedOut)) && took < Duration::from_millis(100)
        })
        .await,
        "the gate never closed"
    );
    assert!(
        !statement.is_finished(),
        "the statement under way did not outlast the gate closing"
    );

    // The one that held its connection runs to its end.
    let finished = statement.await.expect("the task ran");
    assert_eq!(
        finished.map_err(|e| e.to_string()),
        Ok(true),
        "the statement under way was cut off"
    );

    // The database takes connections again: so do statements.
    cluster.psql(Node::Primary, "ALTER DATABASE gate ALLOW_CONNECTIONS true");
    assert!(
        wait_for(Duration::from_secs(5), || async {
            timed(&db, "SELECT 1").await.0.is_ok()
        })
        .await,
        "statements did not run again once the primary was found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_of_another_server_is_refused_as_a_replica_at_start() {
    let Some(ours) = PgCluster::start(0) else {
        return;
    };
    let Some(theirs) = PgCluster::start(1) else {
        return;
    };
    let label = format!("127.0.0.1:{}", theirs.port(Node::Standby(0)));
    serve_binary(&ours.primary_url(), &[theirs.standby_url(0)]).assert_failure(&[
        "`odata.replicas`",
        &label,
        "a standby of another server",
    ]);
}

/// `GET /readyz`'s status and body.
async fn readyz(http: &Client, base: &str) -> (StatusCode, Value) {
    let response = http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .expect("an answer");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_primary_without_a_restart() {
    let Some(cluster) = PgCluster::start(0) else {
        return;
    };
    fill(&cluster);
    let (base, shutdown, _) = serve(&cluster.primary_url(), &[]).await;
    let http = Client::new();
    assert_eq!(
        readyz(&http, &base).await,
        (StatusCode::OK, json!({"status": "ready"}))
    );

    // The primary stops: the probe says so within 2 s, in words.
    cluster.stop(Node::Primary);
    let stopped = Instant::now();
    let said = wait_for(Duration::from_secs(2), || async {
        readyz(&http, &base).await.0 == StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    assert!(said, "503 within 2 s (waited {:?})", stopped.elapsed());
    let (_, body) = readyz(&http, &base).await;
    assert_eq!(body["status"], "unavailable", "{body}");
    let reason = body["checks"]["database"].as_str().unwrap_or_default();
    assert!(
        !reason.is_empty() && !reason.contains("postgres://"),
        "{body}"
    );
    // The liveness probe does not ask the database.
    let live = http
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(live.status(), StatusCode::OK);

    // It comes back: ready again, with no restart of the host.
    cluster.start_node(Node::Primary);
    let back = wait_for(Duration::from_secs(15), || async {
        readyz(&http, &base).await.0 == StatusCode::OK
    })
    .await;
    assert!(back, "ready again once the primary answers");
    shutdown.notify();
}
