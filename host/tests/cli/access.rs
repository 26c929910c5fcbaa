//! What the operator commands do to an account's access, checked against the
//! reference host on the same database: `token list`, `token revoke`,
//! `user end-sessions` and `user set-password`, each recorded in the
//! security activity log as the command line's.

use gatehouse::db::{Db, TextColumn};
use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::json;
use sqlx::Row;

use crate::common::{add_user, cli, TestDb, PASSWORD, SECRET_KEY};

const ADA: &str = "ada@example.org";

/// The reference host on `test`'s database; its client keeps cookies.
async fn host(test: &TestDb) -> Client {
    let figment = rocket::Config::figment()
        .merge(("databases.main.url", test.url.as_str()))
        .merge(("secret_key", SECRET_KEY))
        .merge(("log_level", "off"));
    Client::tracked(gatehouse_host::rocket(figment))
        .await
        .expect("the host ignites")
}

/// Signs the client in as `email`, with a remember-me cookie if `remember`.
async fn sign_in(client: &Client, email: &str, remember: bool) {
    let response = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": email, "password": PASSWORD, "remember": remember}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok, "{email} signs in");
}

/// The status of `GET /dashboard` as a script, with the client's cookies.
async fn dashboard(client: &Client) -> Status {
    client
        .get("/dashboard")
        .header(Header::new("Accept", "application/json"))
        .dispatch()
        .await
        .status()
}

/// The status of `GET /odata/Users` with `token`.
async fn odata_with(client: &Client, token: &str) -> Status {
    client
        .get("/odata/Users")
        .header(Header::new("Authorization", format!("Bearer {token}")))
        .dispatch()
        .await
        .status()
}

/// `token create` for `email`: the token printed on the last line.
fn create_token(test: &TestDb, email: &str, name: &str) -> String {
    let out = cli(test, &["token", "create", email, "--name", name], None);
    out.assert_success();
    out.stdout.lines().last().expect("the token").to_owned()
}

/// The stored events as (event, user_id, ip_address, user_agent, detail).
type Stored = (
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
);

async fn events(db: &Db) -> Vec<Stored> {
    db.fetch_all(db.query(
        "SELECT event, user_id, ip_address, user_agent, detail \
         FROM gatehouse_security_events ORDER BY id",
    ))
    .await
    .expect("security events")
    .iter()
    .map(|row| {
        (
            row.text("event").unwrap().unwrap_or_default(),
            row.try_get("user_id").unwrap(),
            row.text("ip_address").unwrap(),
            row.text("user_agent").unwrap(),
            row.text("detail").unwrap(),
        )
    })
    .collect()
}

/// An event of the command line: no client address or user agent.
fn by_command(event: &str, user_id: i64, detail: &str) -> Stored {
    (
        event.to_owned(),
        Some(user_id),
        None,
        None,
        Some(detail.to_owned()),
    )
}

async fn user_id(db: &Db, email: &str) -> i64 {
    crate::common::user_row(db, email)
        .await
        .expect("user row")
        .id
}

/// The data lines of `token list` (after the header), split into columns.
fn listed(stdout: &str) -> Vec<Vec<String>> {
    let mut lines = stdout.lines();
    let header = lines.next().expect("a header line");
    assert!(
        header.starts_with("ID") && header.contains("NAME") && header.contains("LAST USED"),
        "{stdout}"
    );
    lines
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn token_list_shows_each_token_with_its_dates_and_never_the_token() {
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    add_user(&test, "bob@example.org", "Bob", PASSWORD);
    let deploy = create_token(&test, ADA, "ci deploy");
    create_token(&test, ADA, "reports");
    create_token(&test, "bob@example.org", "bob's");

    let out = cli(&test, &["token", "list", "Ada@Example.org"], None);
    out.assert_success();
    let rows = listed(&out.stdout);
    assert_eq!(rows.len(), 2, "only Ada's tokens: {}", out.stdout);
    assert_eq!(rows[0][1], "ci deploy");
    assert_eq!(rows[1][1], "reports");
    assert!(rows[0][0].parse::<i64>().is_ok(), "{:?}", rows[0]);
    let today = time::OffsetDateTime::now_utc().date().to_string();
    assert!(
        rows[0][2].starts_with(&today),
        "created today (UTC): {:?}",
        rows[0]
    );
    assert_eq!(rows[0][3], "never", "not used yet: {:?}", rows[0]);
    assert!(
        !out.stdout.contains(&deploy),
        "the token itself is never shown"
    );

    // Once presented, it shows when.
    let client = host(&test).await;
    assert_eq!(odata_with(&client, &deploy).await, Status::Ok);
    let out = cli(&test, &["token", "list", ADA], None);
    out.assert_success();
    let rows = listed(&out.stdout);
    assert!(rows[0][3].starts_with(&today), "{:?}", rows[0]);
    assert_eq!(rows[1][3], "never");

    cli(&test, &["token", "list", "ghost@example.org"], None)
        .assert_failure(&["ghost@example.org"]);
    let out = cli(&test, &["token", "list", "bob@example.org"], None);
    assert_eq!(listed(&out.stdout).len(), 1);
}

#[tokio::test]
async fn token_revoke_ends_the_tokens_access_and_records_it() {
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    let revoked = create_token(&test, ADA, "laptop");
    let kept = create_token(&test, ADA, "server");
    let client = host(&test).await;
    assert_eq!(odata_with(&client, &revoked).await, Status::Ok);

    let out = cli(&test, &["token", "list", ADA], None);
    let rows = listed(&out.stdout);
    let (id, kept_id) = (rows[0][0].clone(), rows[1][0].clone());
    let out = cli(&test, &["token", "revoke", &id], None);
    out.assert_success();
    assert!(out.stdout.contains(&id), "{}", out.stdout);

    assert_eq!(odata_with(&client, &revoked).await, Status::Unauthorized);
    assert_eq!(odata_with(&client, &kept).await, Status::Ok, "others stay");
    let rows = listed(&cli(&test, &["token", "list", ADA], None).stdout);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][1], "server");

    // A second time, or an id nobody has: an error naming it.
    cli(&test, &["token", "revoke", &id], None).assert_failure(&[&format!("token with id {id}")]);
    cli(&test, &["token", "revoke", "999999"], None).assert_failure(&["999999"]);
    let out = cli(&test, &["token", "revoke", "laptop"], None);
    assert_eq!(out.status.code(), Some(2), "not an id: a usage error");

    let db = test.connect().await;
    let ada = user_id(&db, ADA).await;
    assert_eq!(
        events(&db).await,
        [
            by_command(
                "token_created",
                ada,
                &format!("token {id} \"laptop\", command line")
            ),
            by_command(
                "token_created",
                ada,
                &format!("token {kept_id} \"server\", command line")
            ),
            // A script's first use of a token is a use from a new address.
            first_use(ada, &id),
            by_command("token_revoked", ada, &format!("token {id}, command line")),
            first_use(ada, &kept_id),
        ]
    );
}

/// The `token_used` event of a token's first use by the local client.
fn first_use(user_id: i64, token_id: &str) -> Stored {
    (
        "token_used".to_owned(),
        Some(user_id),
        Some("0.0.0.0".to_owned()),
        None,
        Some(format!("token {token_id}")),
    )
}

#[tokio::test]
async fn user_end_sessions_signs_the_user_out_everywhere() {
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    add_user(&test, "bob@example.org", "Bob", PASSWORD);
    let laptop = host(&test).await;
    let phone = host(&test).await;
    let bob = host(&test).await;
    // The laptop's remember-me cookie would sign it in again, were it not void.
    sign_in(&laptop, ADA, true).await;
    sign_in(&phone, ADA, false).await;
    sign_in(&bob, "bob@example.org", false).await;

    let out = cli(&test, &["user", "end-sessions", "ADA@example.org"], None);
    out.assert_success();
    assert!(
        out.stdout.contains("2 session(s) ended") && out.stdout.contains(ADA),
        "{}",
        out.stdout
    );
    assert_eq!(dashboard(&laptop).await, Status::Unauthorized);
    assert_eq!(dashboard(&phone).await, Status::Unauthorized);
    assert_eq!(dashboard(&bob).await, Status::Ok, "only Ada's sessions end");

    let out = cli(&test, &["user", "end-sessions", ADA], None);
    assert!(out.stdout.contains("0 session(s) ended"), "{}", out.stdout);
    cli(&test, &["user", "end-sessions", "ghost@example.org"], None)
        .assert_failure(&["ghost@example.org"]);

    let db = test.connect().await;
    let ada = user_id(&db, ADA).await;
    let ended: Vec<Stored> = events(&db)
        .await
        .into_iter()
        .filter(|e| e.0 == "session_ended")
        .collect();
    assert_eq!(
        ended,
        [
            by_command("session_ended", ada, "2 ended, command line"),
            by_command("session_ended", ada, "0 ended, command line"),
        ]
    );
}

#[tokio::test]
async fn user_set_password_ends_every_session_of_the_user() {
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    let laptop = host(&test).await;
    sign_in(&laptop, ADA, true).await;
    assert_eq!(dashboard(&laptop).await, Status::Ok);

    let out = cli(
        &test,
        &["user", "set-password", ADA, "--password-stdin"],
        Some("a completely different passphrase\n"),
    );
    out.assert_success();
    assert!(out.stdout.contains("1 session(s) ended"), "{}", out.stdout);
    assert_eq!(dashboard(&laptop).await, Status::Unauthorized);

    let db = test.connect().await;
    let ada = user_id(&db, ADA).await;
    let changed: Vec<Stored> = events(&db)
        .await
        .into_iter()
        .filter(|e| e.0 == "password_changed")
        .collect();
    assert_eq!(
        changed,
        [by_command("password_changed", ada, "command line")]
    );
}

#[tokio::test]
async fn passkey_list_and_remove_act_on_an_accounts_passkeys() {
    use webauthn_authenticator_rs::prelude::WebauthnAuthenticator;
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    let base = "http://localhost:8000";
    let figment = rocket::Config::figment()
        .merge(("databases.main.url", test.url.as_str()))
        .merge(("secret_key", SECRET_KEY))
        .merge(("base_url", base))
        .merge(("log_level", "off"));
    let client = Client::tracked(gatehouse_host::rocket(figment))
        .await
        .expect("the host ignites");
    sign_in(&client, ADA, false).await;
    let post = |path: &'static str, body: serde_json::Value| {
        client
            .post(path)
            .header(ContentType::JSON)
            .body(body.to_string())
            .dispatch()
    };
    let options = post("/auth/passkeys/options", json!({"password": PASSWORD}))
        .await
        .into_json::<webauthn_rs_proto::CreationChallengeResponse>()
        .await
        .expect("creation options");
    let mut options = options;
    if let Some(selection) = options.public_key.authenticator_selection.as_mut() {
        selection.require_resident_key = false;
        selection.resident_key = None;
    }
    let credential = webauthn_authenticator_rs::softpasskey::SoftPasskey::new(true)
        .do_registration(url::Url::parse(base).unwrap(), options)
        .expect("the soft passkey registers");
    let added = post(
        "/auth/passkeys",
        json!({"name": "Yubikey 5", "credential": credential}),
    )
    .await;
    assert_eq!(added.status(), Status::Created);

    let out = cli(&test, &["passkey", "list", ADA], None);
    out.assert_success();
    let rows = listed(&out.stdout);
    assert_eq!(rows.len(), 1, "{}", out.stdout);
    assert_eq!(rows[0][1], "Yubikey 5");
    assert_eq!(rows[0][3], "never");
    let id = rows[0][0].clone();

    let out = cli(&test, &["passkey", "remove", &id], None);
    out.assert_success();
    assert!(
        out.stdout.contains(&format!("passkey {id} removed")),
        "{}",
        out.stdout
    );
    let out = cli(&test, &["passkey", "list", ADA], None);
    assert!(out.stdout.contains("no passkeys"), "{}", out.stdout);
    cli(&test, &["passkey", "remove", &id], None)
        .assert_failure(&[&format!("passkey with id {id}")]);
    cli(&test, &["passkey", "list", "ghost@example.org"], None)
        .assert_failure(&["ghost@example.org"]);

    let db = test.connect().await;
    let ada = user_id(&db, ADA).await;
    let removed: Vec<Stored> = events(&db)
        .await
        .into_iter()
        .filter(|e| e.0 == "passkey_removed")
        .collect();
    assert_eq!(
        removed,
        [by_command(
            "passkey_removed",
            ada,
            &format!("passkey {id}, command line")
        )]
    );
}

#[tokio::test]
async fn oidc_list_and_unlink_act_on_an_accounts_provider_links() {
    let test = TestDb::new().await;
    add_user(&test, ADA, "Ada", PASSWORD);
    let db = test.connect().await;
    let ada = user_id(&db, ADA).await;
    // A link as a provider's callback stores it.
    db.execute(
        db.query(
            "INSERT INTO gatehouse_oidc_links \
             (user_id, provider, issuer, subject, created_at, last_used_at) \
             VALUES ($1, 'acme', 'https://id.acme.example', 'ada-sub', 1795521600, NULL)",
        )
        .bind(ada),
    )
    .await
    .expect("a link");

    let out = cli(&test, &["oidc", "list", ADA], None);
    out.assert_success();
    let rows = listed(&out.stdout);
    assert_eq!(rows.len(), 1, "{}", out.stdout);
    assert_eq!(rows[0][1], "acme");
    assert_eq!(rows[0][2], "2026-11-24 12:00:00");
    assert_eq!(rows[0][3], "never");
    let id = rows[0][0].clone();

    let out = cli(&test, &["oidc", "unlink", &id], None);
    out.assert_success();
    assert!(
        out.stdout.contains(&format!("provider link {id} removed")),
        "{}",
        out.stdout
    );
    let out = cli(&test, &["oidc", "list", ADA], None);
    assert!(out.stdout.contains("no provider links"), "{}", out.stdout);
    cli(&test, &["oidc", "unlink", &id], None)
        .assert_failure(&[&format!("provider link with id {id}")]);
    cli(&test, &["oidc", "list", "ghost@example.org"], None).assert_failure(&["ghost@example.org"]);
    let unlinked: Vec<Stored> = events(&db)
        .await
        .into_iter()
        .filter(|e| e.0 == "oidc_unlinked")
        .collect();
    assert_eq!(
        unlinked,
        [by_command("oidc_unlinked", ada, "oidc acme, command line")]
    );
}
