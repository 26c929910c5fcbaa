//! The `gatehouse` command line, run as a real process against a fresh database
//! (SQLite, or a PostgreSQL schema when `GATEHOUSE_TEST_DATABASE_URL` is set).

#[path = "cli/access.rs"]
mod access;
#[path = "cli/breached.rs"]
mod breached;
#[path = "cli/check.rs"]
mod check;
mod common;

use argon2::{Argon2, PasswordHash, PasswordVerifier};
use common::{add_user, cli, count, gatehouse, run, user_row, TestDb, PASSWORD, TABLES};
use gatehouse::db::TextColumn;
use gatehouse::domain::sha256_hex;
use sqlx::Row;

/// Whether `password` matches the stored argon2id `hash`.
fn argon2_verifies(hash: &str, password: &str) -> bool {
    let parsed = PasswordHash::new(hash).unwrap_or_else(|e| panic!("not a PHC hash {hash:?}: {e}"));
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

fn assert_argon2id(hash: &str) {
    assert!(
        hash.starts_with("$argon2id$"),
        "password stored as an argon2id hash, got {hash:?}"
    );
}

#[tokio::test]
async fn migrate_creates_every_table_and_can_run_again() {
    let test = TestDb::new().await;
    let db = test.connect().await;
    assert!(
        count(&db, "users").await.is_err(),
        "a fresh database has no users table yet"
    );

    let first = cli(&test, &["migrate"], None);
    first.assert_success();
    for table in TABLES {
        assert_eq!(
            count(&db, table)
                .await
                .unwrap_or_else(|e| panic!("table {table} should exist after migrate: {e}")),
            0,
            "table {table} starts empty"
        );
    }
    cli(&test, &["migrate"], None).assert_success();
    assert_eq!(count(&db, "users").await.unwrap(), 0);
}

#[tokio::test]
async fn user_add_creates_the_account_with_an_argon2id_hash() {
    let test = TestDb::new().await;
    let out = cli(
        &test,
        &[
            "user",
            "add",
            "Ada@Example.org",
            "--name",
            "Ada Lovelace",
            "--password-stdin",
        ],
        Some(&format!("{PASSWORD}\n")),
    );
    out.assert_success();
    assert!(
        out.stdout.contains("ada@example.org"),
        "confirms the account: {}",
        out.stdout
    );
    assert!(
        !out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD),
        "the password is never echoed"
    );

    let db = test.connect().await;
    let user = user_row(&db, "ada@example.org")
        .await
        .expect("the user row exists under the lower-cased address");
    assert_eq!(user.name, "Ada Lovelace");
    assert_eq!(user.email, "ada@example.org");
    assert_argon2id(&user.password);
    assert!(argon2_verifies(&user.password, PASSWORD));
    assert!(!argon2_verifies(
        &user.password,
        "correct horse battery stapler"
    ));
    assert_eq!(count(&db, "users").await.unwrap(), 1);
}

#[tokio::test]
async fn user_add_without_name_uses_the_local_part() {
    let test = TestDb::new().await;
    cli(
        &test,
        &["user", "add", "grace@example.org", "--password-stdin"],
        Some(&format!("{PASSWORD}\n")),
    )
    .assert_success();
    let db = test.connect().await;
    let user = user_row(&db, "grace@example.org").await.expect("user row");
    assert_eq!(user.name, "grace");
}

#[tokio::test]
async fn user_add_refuses_a_duplicate_email_naming_it() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    let db = test.connect().await;
    let original = user_row(&db, "ada@example.org").await.expect("user row");

    for email in ["ada@example.org", "ADA@Example.ORG"] {
        cli(
            &test,
            &["user", "add", email, "--name", "Other", "--password-stdin"],
            Some("another fine passphrase 42\n"),
        )
        .assert_failure(&["ada@example.org", "exists"]);
    }
    assert_eq!(count(&db, "users").await.unwrap(), 1);
    assert_eq!(
        user_row(&db, "ada@example.org").await,
        Some(original),
        "the existing account is untouched"
    );
}

#[tokio::test]
async fn user_add_refuses_a_short_password_naming_the_minimum() {
    let test = TestDb::new().await;
    cli(
        &test,
        &["user", "add", "ada@example.org", "--password-stdin"],
        Some("Xq7#pL2!vR\n"), // 10 characters, minimum is 12
    )
    .assert_failure(&["at least 12"]);
    // A changed minimum is the one reported.
    let mut command = gatehouse(&test);
    command
        .env("ROCKET_AUTH", "{password_min_length=40}")
        .args(["user", "add", "ada@example.org", "--password-stdin"]);
    run(command, Some(&format!("{PASSWORD}\n"))).assert_failure(&["at least 40"]);

    let db = test.connect().await;
    assert_eq!(count(&db, "users").await.unwrap(), 0);
}

#[tokio::test]
async fn user_add_refuses_a_password_over_128_characters() {
    let test = TestDb::new().await;
    let long = "Xq7#pL2!vR".repeat(13); // 130 characters
    cli(
        &test,
        &["user", "add", "ada@example.org", "--password-stdin"],
        Some(&format!("{long}\n")),
    )
    .assert_failure(&["at most 128"]);
    let db = test.connect().await;
    assert_eq!(count(&db, "users").await.unwrap(), 0);
}

#[tokio::test]
async fn user_add_refuses_a_common_password() {
    let test = TestDb::new().await;
    cli(
        &test,
        &["user", "add", "ada@example.org", "--password-stdin"],
        Some("password1234\n"),
    )
    .assert_failure(&["common"]);
    let db = test.connect().await;
    assert_eq!(count(&db, "users").await.unwrap(), 0);
}

#[tokio::test]
async fn user_add_refuses_a_malformed_email() {
    let test = TestDb::new().await;
    for email in ["not-an-email", "ada@", "@example.org", "ada@localhost"] {
        cli(
            &test,
            &["user", "add", email, "--password-stdin"],
            Some(&format!("{PASSWORD}\n")),
        )
        .assert_failure(&[email, "not an e-mail address"]);
    }
    // Nothing was created (the table may not even exist: no command got that far).
    let db = test.connect().await;
    assert!(count(&db, "users").await.map_or(true, |n| n == 0));
}

#[tokio::test]
async fn password_stdin_strips_the_line_ending() {
    let test = TestDb::new().await;
    add_user(&test, "unix@example.org", "Unix", PASSWORD);
    cli(
        &test,
        &["user", "add", "dos@example.org", "--password-stdin"],
        Some(&format!("{PASSWORD}\r\n")),
    )
    .assert_success();
    cli(
        &test,
        &["user", "add", "eof@example.org", "--password-stdin"],
        Some(PASSWORD), // no line ending at all
    )
    .assert_success();

    let db = test.connect().await;
    for email in ["unix@example.org", "dos@example.org", "eof@example.org"] {
        let user = user_row(&db, email).await.expect("user row");
        assert!(
            argon2_verifies(&user.password, PASSWORD),
            "{email}: the password is exactly what was typed"
        );
        for with_ending in [format!("{PASSWORD}\n"), format!("{PASSWORD}\r")] {
            assert!(!argon2_verifies(&user.password, &with_ending));
        }
    }
}

#[tokio::test]
async fn password_stdin_keeps_inner_and_leading_whitespace() {
    let test = TestDb::new().await;
    let typed = "  correct horse battery staple ";
    cli(
        &test,
        &["user", "add", "ada@example.org", "--password-stdin"],
        Some(&format!("{typed}\n")),
    )
    .assert_success();
    let db = test.connect().await;
    let user = user_row(&db, "ada@example.org").await.expect("user row");
    assert!(argon2_verifies(&user.password, typed));
    assert!(!argon2_verifies(&user.password, typed.trim()));
}

#[tokio::test]
async fn user_set_password_replaces_the_hash() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    let db = test.connect().await;
    let before = user_row(&db, "ada@example.org").await.expect("user row");

    let new_password = "a completely different passphrase";
    let out = cli(
        &test,
        &[
            "user",
            "set-password",
            "ADA@example.org",
            "--password-stdin",
        ],
        Some(&format!("{new_password}\r\n")),
    );
    out.assert_success();
    assert!(out.stdout.contains("ada@example.org"), "{}", out.stdout);

    let after = user_row(&db, "ada@example.org").await.expect("user row");
    assert_eq!(after.id, before.id);
    assert_ne!(after.password, before.password);
    assert_argon2id(&after.password);
    assert!(argon2_verifies(&after.password, new_password));
    assert!(
        !argon2_verifies(&after.password, PASSWORD),
        "the old password no longer signs in"
    );
    assert_ne!(
        after.remember_token, before.remember_token,
        "remember-me cookies are voided"
    );
    assert!(after.remember_token.is_some());
}

#[tokio::test]
async fn user_set_password_ends_the_accounts_tokens_unless_configured_otherwise() {
    for revoke in [true, false] {
        let test = TestDb::new().await;
        add_user(&test, "ada@example.org", "Ada", PASSWORD);
        cli(
            &test,
            &["token", "create", "ada@example.org", "--name", "ci"],
            None,
        )
        .assert_success();
        let mut command = gatehouse(&test);
        command
            .env(
                "ROCKET_TOKENS",
                format!("{{revoke_on_password_reset={revoke}}}"),
            )
            .args([
                "user",
                "set-password",
                "ada@example.org",
                "--password-stdin",
            ]);
        run(command, Some("a completely different passphrase\n")).assert_success();
        let db = test.connect().await;
        let left = count(&db, "personal_access_tokens").await.unwrap();
        assert_eq!(left, if revoke { 0 } else { 1 }, "revoke = {revoke}");
    }
}

#[tokio::test]
async fn user_set_password_applies_the_password_policy() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    let db = test.connect().await;
    let before = user_row(&db, "ada@example.org").await.expect("user row");

    cli(
        &test,
        &[
            "user",
            "set-password",
            "ada@example.org",
            "--password-stdin",
        ],
        Some("short\n"),
    )
    .assert_failure(&["at least 12"]);
    cli(
        &test,
        &[
            "user",
            "set-password",
            "ada@example.org",
            "--password-stdin",
        ],
        Some("password1234\n"),
    )
    .assert_failure(&["common"]);
    assert_eq!(
        user_row(&db, "ada@example.org").await,
        Some(before),
        "a refused password changes nothing"
    );
}

#[tokio::test]
async fn user_set_password_fails_for_an_unknown_user() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    cli(
        &test,
        &[
            "user",
            "set-password",
            "ghost@example.org",
            "--password-stdin",
        ],
        Some("a completely different passphrase\n"),
    )
    .assert_failure(&["ghost@example.org"]);
    let db = test.connect().await;
    assert_eq!(count(&db, "users").await.unwrap(), 1);
    assert!(user_row(&db, "ghost@example.org").await.is_none());
}

#[tokio::test]
async fn token_create_prints_the_token_once_and_stores_only_its_sha256() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    let out = cli(
        &test,
        &["token", "create", "Ada@Example.org", "--name", "ci deploy"],
        None,
    );
    out.assert_success();
    assert!(
        out.stdout.ends_with('\n'),
        "stdout ends with a newline: {:?}",
        out.stdout
    );
    let token = out.stdout.lines().last().expect("a last line");
    assert_eq!(
        token,
        token.trim(),
        "the last line holds the token alone: {token:?}"
    );
    assert!(
        token.len() >= 43 && !token.contains(' '),
        "the token has at least 256 bits: {token:?}"
    );

    let db = test.connect().await;
    let user = user_row(&db, "ada@example.org").await.expect("user row");
    assert_eq!(count(&db, "personal_access_tokens").await.unwrap(), 1);
    let row = db
        .fetch_optional(db.query("SELECT tokenable_id, name, token FROM personal_access_tokens"))
        .await
        .unwrap()
        .expect("token row");
    let stored: String = row.try_get("token").unwrap();
    let name = row.text("name").unwrap().expect("a name");
    let owner: i64 = row.try_get("tokenable_id").unwrap();
    assert_eq!(stored, sha256_hex(token), "the row holds the SHA-256 hex");
    assert_ne!(stored, token, "the token itself is not stored");
    assert_eq!(stored.len(), 64);
    assert_eq!(name, "ci deploy");
    assert_eq!(owner, user.id);

    // A second token is a different one.
    let again = cli(
        &test,
        &["token", "create", "ada@example.org", "--name", "ci deploy"],
        None,
    );
    again.assert_success();
    assert_ne!(again.stdout.lines().last(), Some(token));
    assert_eq!(count(&db, "personal_access_tokens").await.unwrap(), 2);
}

#[tokio::test]
async fn token_create_fails_for_an_unknown_user() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    let out = cli(
        &test,
        &["token", "create", "ghost@example.org", "--name", "ci"],
        None,
    );
    out.assert_failure(&["ghost@example.org"]);
    assert!(
        out.stdout.trim().is_empty(),
        "no token is printed: {:?}",
        out.stdout
    );
    let db = test.connect().await;
    assert_eq!(count(&db, "personal_access_tokens").await.unwrap(), 0);
}

#[tokio::test]
async fn token_create_refuses_a_malformed_email_or_empty_name() {
    let test = TestDb::new().await;
    add_user(&test, "ada@example.org", "Ada", PASSWORD);
    cli(&test, &["token", "create", "ada", "--name", "ci"], None)
        .assert_failure(&["`ada`", "not an e-mail address"]);
    cli(
        &test,
        &["token", "create", "ada@example.org", "--name", "  "],
        None,
    )
    .assert_failure(&["--name"]);
    let db = test.connect().await;
    assert_eq!(count(&db, "personal_access_tokens").await.unwrap(), 0);
}

/// Each command, with what it needs on standard input.
const COMMANDS: &[(&[&str], Option<&str>)] = &[
    (&["migrate"], None),
    (
        &["user", "add", "ada@example.org", "--password-stdin"],
        Some("correct horse battery staple\n"),
    ),
    (
        &[
            "user",
            "set-password",
            "ada@example.org",
            "--password-stdin",
        ],
        Some("correct horse battery staple\n"),
    ),
    (
        &["token", "create", "ada@example.org", "--name", "ci"],
        None,
    ),
    (&["token", "list", "ada@example.org"], None),
    (&["token", "revoke", "1"], None),
    (&["user", "end-sessions", "ada@example.org"], None),
    (&["serve"], None),
];

#[tokio::test]
async fn invalid_auth_setting_is_refused_naming_the_key() {
    let test = TestDb::new().await;
    for (args, stdin) in COMMANDS {
        let mut command = gatehouse(&test);
        command
            .env("ROCKET_AUTH", "{throttle_attempts=0}")
            .env("ROCKET_PORT", "0")
            .args(*args);
        run(command, *stdin).assert_failure(&["auth.throttle_attempts"]);
    }
    let db = test.connect().await;
    assert!(
        count(&db, "users").await.is_err(),
        "nothing touched the database"
    );
}

#[tokio::test]
async fn unsupported_database_scheme_is_refused_naming_the_key() {
    let test = TestDb::new().await;
    for (args, stdin) in COMMANDS {
        let mut command = gatehouse(&test);
        command
            .env(
                "ROCKET_DATABASES",
                "{main={url=\"oracle://db.example.org/main\"}}",
            )
            .env("ROCKET_PORT", "0")
            .args(*args);
        run(command, *stdin).assert_failure(&["databases.main.url", "oracle"]);
    }
}

#[tokio::test]
async fn unknown_subcommand_is_a_usage_error() {
    let test = TestDb::new().await;
    let out = cli(&test, &["user", "delete", "ada@example.org"], None);
    assert_eq!(out.status.code(), Some(2), "clap's usage error: {out:?}");
    assert!(out.stderr.contains("delete"), "{}", out.stderr);
}
