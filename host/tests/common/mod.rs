//! Shared by the process-level test binaries (`tests/cli.rs`,
//! `tests/processes.rs`, `tests/browser.rs`): a fresh database per test
//! ([`TestDb`]) and the real `gatehouse` binary configured to use it.

#![allow(dead_code)] // each test binary uses its own subset

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use gatehouse::db::Db;
use sqlx::Row;

mod database;
pub mod pg_cluster;
#[allow(unused_imports)] // each test binary uses its own subset
pub use database::{server_url, TestDb};

/// A password that passes the policy.
pub const PASSWORD: &str = "correct horse battery staple";

/// A fixed `secret_key` (base64 of 32 bytes) for every process under test.
pub const SECRET_KEY: &str = "hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk=";

/// Every table the migration set creates.
pub const TABLES: &[&str] = &[
    "users",
    "password_reset_tokens",
    "sessions",
    "gatehouse_throttle",
    "personal_access_tokens",
    "organisations",
    "organisation_user",
    "gatehouse_security_events",
];

/// The `gatehouse` binary with a clean, fixed configuration on `db`: the
/// package's Rocket.toml, a fixed secret key, logging off, and nothing from the
/// caller's `ROCKET_*` environment.
pub fn gatehouse(db: &TestDb) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ROCKET_") {
            command.env_remove(key);
        }
    }
    command
        .current_dir(db.dir())
        .env_remove("RUST_LOG")
        .env(
            "ROCKET_CONFIG",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../Rocket.toml"),
        )
        .env("ROCKET_LOG_LEVEL", "off")
        .env("ROCKET_SECRET_KEY", SECRET_KEY)
        .env(
            "ROCKET_DATABASES",
            format!("{{main={{url=\"{}\"}}}}", db.url),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// `gatehouse serve` on `db`, listening on a free loopback port; answers
/// the command (not started) and its base URL.
pub fn serve_command(db: &TestDb) -> (Command, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let mut command = gatehouse(db);
    command
        .arg("serve")
        .env("ROCKET_ADDRESS", "127.0.0.1")
        .env("ROCKET_PORT", port.to_string())
        .env("ROCKET_BASE_URL", &base);
    (command, base)
}

/// What a finished command left behind.
#[derive(Debug)]
pub struct Run {
    /// The command line, for messages.
    pub what: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics (showing both streams) unless the command exited 0.
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.status.success(),
            "`{}` should succeed but exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.what,
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Panics unless the command exited non-zero with a message on standard
    /// error containing every one of `needles` (case-insensitive).
    pub fn assert_failure(&self, needles: &[&str]) -> &Self {
        assert!(
            !self.status.success() && self.status.code().is_some(),
            "`{}` should exit non-zero but exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.what,
            self.status,
            self.stdout,
            self.stderr
        );
        let stderr = self.stderr.to_lowercase();
        for needle in needles {
            assert!(
                stderr.contains(&needle.to_lowercase()),
                "`{}`: standard error should mention {needle:?}\n--- stderr\n{}",
                self.what,
                self.stderr
            );
        }
        self
    }
}

/// How long one command may run before the test gives up on it.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `command` to completion, feeding `stdin` (when given) to it. A command
/// still running after [`COMMAND_TIMEOUT`] is killed and the test fails.
pub fn run(mut command: Command, stdin: Option<&str>) -> Run {
    let what = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if stdin.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{what}`: {e}"));
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        // The command may exit before reading (e.g. on bad input): ignore EPIPE.
        let _ = pipe.write_all(input.as_bytes());
    }
    let stdout = drain(child.stdout.take().expect("stdout pipe"));
    let stderr = drain(child.stderr.take().expect("stderr pipe"));
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{what}` still running after {COMMAND_TIMEOUT:?}; killed\n--- stdout\n{}\n--- stderr\n{}",
                    stdout.join().unwrap_or_default(),
                    stderr.join().unwrap_or_default()
                );
            }
            Err(e) => panic!("`{what}` cannot be waited for: {e}"),
        }
    };
    Run {
        what,
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// Reads a pipe to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `gatehouse <args>` on `db`, with `stdin` as standard input.
pub fn cli(db: &TestDb, args: &[&str], stdin: Option<&str>) -> Run {
    let mut command = gatehouse(db);
    command.args(args);
    run(command, stdin)
}

/// Creates an account with the CLI (the password from standard input).
pub fn add_user(db: &TestDb, email: &str, name: &str, password: &str) {
    cli(
        db,
        &["user", "add", email, "--name", name, "--password-stdin"],
        Some(&format!("{password}\n")),
    )
    .assert_success();
}

/// A row of `users`, as the assertions need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub password: String,
    pub remember_token: Option<String>,
}

/// The `users` row with this (stored, lower-case) e-mail, if any.
pub async fn user_row(db: &Db, email: &str) -> Option<UserRow> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT id, name, email, password, remember_token FROM users WHERE email = $1",
            )
            .bind(email.to_owned()),
        )
        .await
        .expect("query users");
    row.map(|r| UserRow {
        id: r.try_get("id").expect("users.id"),
        name: r.try_get("name").expect("users.name"),
        email: r.try_get("email").expect("users.email"),
        password: r.try_get("password").expect("users.password"),
        remember_token: r.try_get("remember_token").expect("users.remember_token"),
    })
}

/// `SELECT COUNT(*) FROM <table>`; an error when the table does not exist.
pub async fn count(db: &Db, table: &str) -> Result<i64, sqlx::Error> {
    let sql = format!("SELECT COUNT(*) AS n FROM {table}");
    let row = db
        .fetch_optional(sqlx::query(&db.dialect().placeholders(&sql)))
        .await?;
    row.expect("COUNT(*) answers one row").try_get("n")
}

/// Launches `rocket` (ignited, listening on `base`) in the background and
/// waits until `base` + `ready_path` answers a success; answers its
/// shutdown handle.
pub async fn launch(
    rocket: rocket::Rocket<rocket::Ignite>,
    base: &str,
    ready_path: &str,
) -> rocket::Shutdown {
    let shutdown = rocket.shutdown();
    tokio::spawn(rocket.launch());
    assert!(launched(base, ready_path).await, "the host did not start");
    shutdown
}

/// Whether `base` + `ready_path` answers a success within 60 s, asked
/// every 100 ms.
pub async fn launched(base: &str, ready_path: &str) -> bool {
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http
        .get(format!("{base}{ready_path}"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// The configuration of the reference host served on a free loopback port
/// over the database at `url`, with `toml` merged last; answers it and
/// the host's base URL.
pub fn served_figment(url: &str, toml: &str) -> (rocket::figment::Figment, String) {
    use rocket::figment::providers::{Format, Toml};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let figment = rocket::Config::figment()
        .merge(("databases.main.url", url))
        .merge(("base_url", base.as_str()))
        .merge(("secret_key", SECRET_KEY))
        .merge(("log_level", "off"))
        .merge(("address", "127.0.0.1"))
        .merge(("port", port))
        .merge(("shutdown.ctrlc", false))
        .merge(Toml::string(toml));
    (figment, base)
}
