//! Two real `gatehouse serve` processes sharing one database behave as one
//! server: a session made on one is honoured and ended on the other, and the
//! sign-in throttle counts failures made on both.

mod common;

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{add_user, cli, gatehouse, run, serve_command, TestDb, PASSWORD};
use reqwest::header::{ACCEPT, COOKIE, RETRY_AFTER, SET_COOKIE};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

const READY_TIMEOUT: Duration = Duration::from_secs(60);
const COOKIE_NAME: &str = "gatehouse_session";

/// A running `gatehouse serve`; killed when dropped, whatever the test's outcome.
struct Server {
    name: &'static str,
    child: Child,
    base: String,
    stdout_log: PathBuf,
    stderr_log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Server {
    /// Starts `gatehouse serve` on a free port, on `db`; not yet ready.
    fn spawn(db: &TestDb, name: &'static str) -> Self {
        Self::spawn_with(db, name, &[])
    }

    /// As [`Server::spawn`], with `env` added to the process's environment.
    fn spawn_with(db: &TestDb, name: &'static str, env: &[(&str, String)]) -> Self {
        let (mut command, base) = serve_command(db);
        let port = base.rsplit(':').next().unwrap_or_default().to_owned();
        let stdout_log = db.dir().join(format!("{name}-{port}.stdout.log"));
        let stderr_log = db.dir().join(format!("{name}-{port}.stderr.log"));
        command
            .stdout(Stdio::from(File::create(&stdout_log).expect("stdout log")))
            .stderr(Stdio::from(File::create(&stderr_log).expect("stderr log")));
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start instance {name}: {e}"));
        Self {
            name,
            child,
            base,
            stdout_log,
            stderr_log,
        }
    }

    /// What the process has written so far, for failure messages.
    fn logs(&self) -> String {
        let read = |path: &PathBuf| std::fs::read_to_string(path).unwrap_or_default();
        format!(
            "--- stderr of instance {}\n{}\n--- stdout\n{}",
            self.name,
            read(&self.stderr_log),
            read(&self.stdout_log)
        )
    }

    /// Polls `GET /login` until it answers 200; fails with the process's output
    /// if it exits or is not ready within [`READY_TIMEOUT`].
    async fn wait_ready(&mut self, http: &Client) {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!(
                    "instance {} exited with {status} before it was ready\n{}",
                    self.name,
                    self.logs()
                );
            }
            let last = match http.get(self.url("/login")).send().await {
                Ok(response) if response.status() == StatusCode::OK => return,
                Ok(response) => format!("status {}", response.status()),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                panic!(
                    "instance {} not ready after {READY_TIMEOUT:?} (last: {last})\n{}",
                    self.name,
                    self.logs()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `POST /auth/login` with a JSON body.
    async fn login(&self, http: &Client, email: &str, password: &str) -> reqwest::Response {
        http.post(self.url("/auth/login"))
            .header(ACCEPT, "application/json")
            .json(&json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("login on instance {}: {e}", self.name))
    }

    /// `GET /dashboard` with the session cookie `session` and `accept`.
    async fn dashboard(&self, http: &Client, session: &str, accept: &str) -> reqwest::Response {
        http.get(self.url("/dashboard"))
            .header(ACCEPT, accept)
            .header(COOKIE, format!("{COOKIE_NAME}={session}"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("dashboard on instance {}: {e}", self.name))
    }
}

/// Two instances on `db`, both ready.
async fn two_instances(db: &TestDb, http: &Client) -> (Server, Server) {
    let mut a = Server::spawn(db, "A");
    let mut b = Server::spawn(db, "B");
    a.wait_ready(http).await;
    b.wait_ready(http).await;
    (a, b)
}

/// One ready instance, named `name`, on a database with ada@example.org.
async fn one_instance(name: &'static str) -> (TestDb, Client, Server) {
    let db = database_with_user("ada@example.org").await;
    let http = http_client();
    let mut server = Server::spawn(&db, name);
    server.wait_ready(&http).await;
    (db, http, server)
}

/// A client that neither follows redirects nor keeps cookies: the test decides
/// which instance gets which cookie.
fn http_client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client")
}

/// A fresh database, migrated, with one account made by the CLI.
async fn database_with_user(email: &str) -> TestDb {
    let db = TestDb::new().await;
    cli(&db, &["migrate"], None).assert_success();
    add_user(&db, email, "Ada Lovelace", PASSWORD);
    db
}

/// The value of the session cookie set by `response`.
fn session_cookie(response: &reqwest::Response) -> String {
    let prefix = format!("{COOKIE_NAME}=");
    let set_cookies: Vec<_> = response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let value = set_cookies
        .iter()
        .find_map(|raw| raw.strip_prefix(&prefix))
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no {COOKIE_NAME} in Set-Cookie: {set_cookies:?}"));
    assert!(!value.is_empty(), "empty session cookie: {set_cookies:?}");
    value.to_owned()
}

#[tokio::test]
async fn session_from_one_instance_is_honoured_and_ended_on_the_other() {
    let email = "ada@example.org";
    let db = database_with_user(email).await;
    let http = http_client();
    let (a, b) = two_instances(&db, &http).await;

    let response = a.login(&http, email, PASSWORD).await;
    assert_eq!(response.status(), StatusCode::OK, "sign-in on A");
    let session = session_cookie(&response);
    let body: Value = response.json().await.expect("JSON login answer");
    assert_eq!(body["message"], "login_success", "{body}");

    // B knows the session A made.
    let page = b.dashboard(&http, &session, "text/html").await;
    assert_eq!(page.status(), StatusCode::OK, "dashboard on B");
    let html = page.text().await.expect("dashboard body");
    assert!(html.contains(email), "B shows the user's email: {html}");
    assert_eq!(
        a.dashboard(&http, &session, "application/json")
            .await
            .status(),
        StatusCode::OK,
        "still signed in on A"
    );

    // Signing out on B ends the session on A too.
    let logout = http
        .post(b.url("/logout"))
        .header(COOKIE, format!("{COOKIE_NAME}={session}"))
        .send()
        .await
        .expect("logout on B");
    assert_eq!(logout.status(), StatusCode::SEE_OTHER, "logout on B");
    for (instance, server) in [("A", &a), ("B", &b)] {
        assert_eq!(
            server
                .dashboard(&http, &session, "application/json")
                .await
                .status(),
            StatusCode::UNAUTHORIZED,
            "the signed-out cookie no longer works on {instance}"
        );
    }
    assert_eq!(
        a.dashboard(&http, &session, "text/html").await.status(),
        StatusCode::SEE_OTHER,
        "a browser on A is sent to sign in"
    );
}

#[tokio::test]
async fn login_throttle_counts_failures_on_every_instance() {
    let email = "ada@example.org";
    let db = database_with_user(email).await;
    let http = http_client();
    let (a, b) = two_instances(&db, &http).await;

    for (server, failures) in [(&a, 3), (&b, 2)] {
        for i in 1..=failures {
            let response = server.login(&http, email, "not the password at all").await;
            assert_eq!(
                response.status(),
                StatusCode::UNPROCESSABLE_ENTITY,
                "failure {i} on instance {} is counted, not refused",
                server.name
            );
        }
    }

    for server in [&a, &b] {
        let response = server.login(&http, email, PASSWORD).await;
        assert_eq!(
            response.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "after 3 failures on A and 2 on B, instance {} refuses even the right password",
            server.name
        );
        let retry_after: u64 = response
            .headers()
            .get(RETRY_AFTER)
            .unwrap_or_else(|| panic!("Retry-After from instance {}", server.name))
            .to_str()
            .expect("ASCII Retry-After")
            .parse()
            .expect("Retry-After in seconds");
        assert!(
            (1..=60).contains(&retry_after),
            "Retry-After {retry_after} within the window"
        );
        let body: Value = response.json().await.expect("JSON throttle answer");
        assert_eq!(body["message"], "auth_throttle", "{body}");
        assert_eq!(body["retry_after"], json!(retry_after), "{body}");
    }
}

/// Asks `server` to stop (SIGTERM) and answers how it exited.
fn terminate(server: &mut Server) -> std::process::ExitStatus {
    // SAFETY: kill only sends a signal to our own child process.
    let sent = unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM to instance {}", server.name);
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "instance {} still running after SIGTERM\n{}",
            server.name,
            server.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn a_server_that_answered_odata_stops_cleanly_on_sigterm() {
    let db = database_with_user("stop@example.org").await;
    let created = cli(
        &db,
        &["token", "create", "stop@example.org", "--name", "t"],
        None,
    );
    created.assert_success();
    let token = created
        .stdout
        .lines()
        .last()
        .expect("token line")
        .trim()
        .to_owned();
    let http = http_client();
    let mut server = Server::spawn(&db, "S");
    server.wait_ready(&http).await;
    let answer = http
        .get(server.url("/odata/Users"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("a page of users");
    assert_eq!(answer.status(), StatusCode::OK, "{}", server.logs());
    let status = terminate(&mut server);
    assert!(status.success(), "exit {status}\n{}", server.logs());
    assert!(!server.logs().contains("panicked"), "{}", server.logs());
}

#[tokio::test]
async fn the_server_log_never_shows_a_reset_token() {
    let (_db, http, server) = one_instance("logged").await;
    let token = "f00dfacef00dfacef00dfacef00dfacef00dfacef00dfacef00dfacef00dface";
    let link = server.url(&format!("/password/reset/{token}?email=ada%40example.org"));
    let response = http.get(&link).send().await.expect("the mailed link");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    // A method no route takes: Rocket's own line would name the path.
    let response = http
        .post(server.url(&format!("/password/reset/{token}")))
        .send()
        .await
        .expect("a POST to the link");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let screen = server.url(&format!("/login/set-password/{token}/ada%40example.org"));
    http.get(&screen)
        .send()
        .await
        .expect("the set-password screen");

    let deadline = Instant::now() + Duration::from_secs(10);
    let logs = loop {
        let logs = server.logs();
        if logs.matches("/password/reset/…").count() >= 2 || Instant::now() > deadline {
            break logs;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        !logs.contains(token),
        "a reset token reached the log:\n{logs}"
    );
    assert!(
        logs.contains("/password/reset/…"),
        "the request was logged:\n{logs}"
    );
    assert!(logs.contains("/login/set-password/…"), "{logs}");
}

#[tokio::test]
async fn set_password_from_the_command_line_ends_every_session() {
    let email = "ada@example.org";
    let (db, http, server) = one_instance("cli").await;
    let response = server.login(&http, email, PASSWORD).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = session_cookie(&response);
    assert_eq!(
        server
            .dashboard(&http, &session, "application/json")
            .await
            .status(),
        StatusCode::OK
    );

    let out = cli(
        &db,
        &["user", "set-password", email, "--password-stdin"],
        Some("a completely different passphrase\n"),
    );
    out.assert_success();
    assert!(out.stdout.contains("1 session(s) ended"), "{}", out.stdout);

    assert_eq!(
        server
            .dashboard(&http, &session, "application/json")
            .await
            .status(),
        StatusCode::UNAUTHORIZED,
        "the session ended with the password change"
    );
}

#[tokio::test]
async fn start_up_says_once_that_passkeys_are_off_on_an_ip_address() {
    let (_db, http, server) = one_instance("ip").await;
    let options = http
        .post(server.url("/auth/passkey/options"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(options.status(), StatusCode::NOT_FOUND);
    let logs = server.logs();
    assert_eq!(
        logs.matches("passkeys are off").count(),
        1,
        "one line saying why:\n{logs}"
    );
    assert!(logs.contains("IP address"), "{logs}");
}

#[tokio::test]
async fn odata_replicas_are_named_at_start_on_postgresql_and_refused_elsewhere() {
    let db = database_with_user("ada@example.org").await;
    // A replica nobody serves: PostgreSQL starts without it.
    let replica = format!("postgres://postgres@127.0.0.1:{}/test", free_port());
    let odata = format!("{{replicas=[\"{replica}\"]}}");
    if db.url.starts_with("postgres") {
        let http = http_client();
        let mut server = Server::spawn_with(&db, "replicas", &[("ROCKET_ODATA", odata)]);
        server.wait_ready(&http).await;
        let logs = server.logs();
        assert!(
            logs.contains("OData reads on 1 replica(s)") && logs.contains("(not in use yet)"),
            "start-up says how the replica stands:\n{logs}"
        );
        return;
    }
    let mut command = gatehouse(&db);
    command.arg("serve").env("ROCKET_ODATA", odata);
    run(command, None).assert_failure(&["`odata.replicas` is served on PostgreSQL only"]);
}

#[tokio::test]
async fn an_odata_replica_that_is_not_a_standby_is_refused_at_start() {
    let db = database_with_user("ada@example.org").await;
    if !db.url.starts_with("postgres") {
        // Elsewhere `odata.replicas` is refused whatever it names (above).
        return;
    }
    // The primary itself, under a password it does not ask for: it answers,
    // and it is not in recovery.
    let mut replica = url::Url::parse(&db.url).expect("a PostgreSQL URL");
    replica
        .set_password(Some("replica-secret"))
        .expect("a URL with a host");
    let label = format!(
        "{}:{}",
        replica.host_str().expect("a host"),
        replica.port().unwrap_or(5432)
    );
    let mut command = gatehouse(&db);
    command
        .arg("serve")
        .env("ROCKET_PORT", free_port().to_string())
        .env("ROCKET_ODATA", format!("{{replicas=[\"{replica}\"]}}"));
    let run = run(command, None);
    run.assert_failure(&["`odata.replicas`", &label, "not a standby"]);
    assert!(
        !format!("{}{}", run.stdout, run.stderr).contains("replica-secret"),
        "the password is never printed:\n{}",
        run.stderr
    );
}
