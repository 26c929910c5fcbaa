//! Access for scripts: personal access tokens a person makes, lists and
//! revokes from their account, used as a script would (a bearer token on
//! OData reads).

use gatehouse::auth::tokens::{self, NewToken};
use gatehouse::db::TextColumn;
use gatehouse::domain::SecretToken;
use rocket::http::Status;
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{figment, spawn_app, spawn_app_with, TestApp, PASSWORD};
use crate::mailbox::{request_link_via, reset, spawn_mail_app_with};
use crate::odata_fixture::{odata_uri, Answer};
use crate::second_step::{events, post};

const EMAIL: &str = "ada@example.org";

/// Ada, signed in on `app.client` (sudo mode's window open).
pub(crate) async fn ada(app: &TestApp) -> i64 {
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    user_id
}

/// `GET /odata/<set>` with `token` as a script sends it.
pub(crate) async fn read(app: &TestApp, token: &str, set: &str) -> Answer {
    let bearer = format!("Bearer {token}");
    app.get_uri(&odata_uri(set, &[]), &[("Authorization", bearer.as_str())])
        .await
}

/// `GET /auth/tokens` from `client`.
pub(crate) async fn listing(client: &Client) -> Value {
    let response = client
        .get("/auth/tokens")
        .header(rocket::http::ContentType::JSON)
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    serde_json::from_str(&response.into_string().await.unwrap()).unwrap()
}

/// Seconds from now until the RFC 3339 time `at`.
pub(crate) fn seconds_until(at: &Value) -> i64 {
    let at = time::OffsetDateTime::parse(
        at.as_str().expect("a time"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("RFC 3339");
    at.unix_timestamp() - time::OffsetDateTime::now_utc().unix_timestamp()
}

#[rocket::async_test]
async fn a_token_made_from_the_account_reads_its_sets_only_and_is_shown_once() {
    let app = spawn_app().await;
    let user_id = ada(&app).await;
    let (status, made) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "CI", "sets": ["Users"]}),
    )
    .await;
    assert_eq!(status, Status::Created, "{made}");
    let token = made["token"].as_str().expect("the token, once").to_owned();
    assert_eq!(made["sets"], json!(["Users"]));
    let days = seconds_until(&made["expires_at"]) as f64 / 86_400.0;
    assert!((29.9..=30.0).contains(&days), "30 days by default: {days}");

    read(&app, &token, "Users").await.ok();
    read(&app, &token, "Organisations")
        .await
        .assert_error(Status::Forbidden, None);

    let listed = listing(&app.client).await;
    let entry = &listed["value"][0];
    assert_eq!(entry["name"], json!("CI"));
    assert_eq!(entry["prefix"], json!(&token[..8]));
    assert_eq!(entry["sets"], json!(["Users"]));
    assert!(entry["last_used_at"].is_string(), "used: {entry}");
    assert!(
        !listed.to_string().contains(&token),
        "never the token again"
    );
    assert_eq!(events(&app, user_id, "token_created").await.len(), 1);

    // A token for every set the owner may read.
    let (status, every) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "all", "expires_days": 7}),
    )
    .await;
    assert_eq!(status, Status::Created, "{every}");
    assert_eq!(every["sets"], Value::Null);
    let days = seconds_until(&every["expires_at"]) as f64 / 86_400.0;
    assert!((6.9..=7.0).contains(&days), "{days}");
    let all = every["token"].as_str().unwrap();
    read(&app, all, "Organisations").await.ok();
}

#[rocket::async_test]
async fn a_token_is_stored_as_its_sha256_and_its_first_8_characters_only() {
    let app = spawn_app().await;
    ada(&app).await;
    let (status, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
    assert_eq!(status, Status::Created, "{made}");
    let token = made["token"].as_str().expect("the token, once");
    let row = app
        .db
        .fetch_optional(
            app.db
                .query("SELECT token, prefix, name, abilities FROM personal_access_tokens"),
        )
        .await
        .unwrap()
        .expect("the token's row");
    let column = |name: &str| row.text(name).unwrap().unwrap_or_default();
    assert_eq!(column("token"), gatehouse::domain::sha256_hex(token));
    assert_eq!(column("prefix"), token[..tokens::PREFIX_CHARS]);
    assert_eq!(column("prefix").len(), 8, "32 of the token's 256 bits");
    for name in ["token", "prefix", "name", "abilities"] {
        assert!(!column(name).contains(token), "{name} holds the token");
    }
}

#[rocket::async_test]
async fn a_token_asks_for_a_known_lifetime_and_sets_its_owner_may_read() {
    let app = spawn_app().await;
    ada(&app).await;
    for (body, field, code) in [
        (
            json!({"name": "x", "expires_days": 365}),
            "expires_days",
            "in",
        ),
        (
            json!({"name": "x", "expires_days": null}),
            "expires_days",
            "in",
        ),
        (
            json!({"name": "x", "sets": ["Nope"]}),
            "sets",
            "unknown_set",
        ),
        (json!({"name": "x", "sets": []}), "sets", "in"),
        (json!({"name": "x", "sets": "Users"}), "sets", "in"),
        (json!({"name": ""}), "name", "required"),
        (json!({"name": "x".repeat(65)}), "name", "max"),
    ] {
        let (status, answer) = post(&app.client, "/auth/tokens", body.clone()).await;
        assert_eq!(status, Status::UnprocessableEntity, "{body}: {answer}");
        assert_eq!(answer["errors"][field], json!([code]), "{body}: {answer}");
    }
    assert_eq!(listing(&app.client).await["value"], json!([]));

    let app = spawn_app_with(|f| f.merge(("tokens.allow_no_expiry", true))).await;
    ada(&app).await;
    let (status, made) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "x", "expires_days": null}),
    )
    .await;
    assert_eq!(status, Status::Created, "{made}");
    assert_eq!(made["expires_at"], Value::Null);
}

#[rocket::async_test]
async fn a_token_is_made_in_sudo_mode_and_a_wrong_password_makes_none() {
    let app = spawn_app().await;
    ada(&app).await;
    let (status, answer) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "x", "password": "not the password"}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity, "{answer}");
    assert_eq!(listing(&app.client).await["value"], json!([]));
}

#[rocket::async_test]
async fn a_revoked_or_expired_token_reads_nothing_and_only_the_owner_revokes() {
    let app = spawn_app().await;
    let user_id = ada(&app).await;
    let (_, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
    let (id, token) = (
        made["id"].as_i64().unwrap(),
        made["token"].as_str().unwrap().to_owned(),
    );
    read(&app, &token, "Users").await.ok();

    // Bob cannot revoke Ada's token: 404, as for one that does not exist.
    let bob = app.another_instance().await;
    app.create_user("bob@example.org", PASSWORD).await;
    let login = bob
        .post("/auth/login")
        .header(rocket::http::ContentType::JSON)
        .body(json!({"email": "bob@example.org", "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    let cookie = login
        .cookies()
        .get(&app.cookie_name)
        .unwrap()
        .clone()
        .into_owned();
    drop(login);
    let answer = bob
        .post(format!("/auth/tokens/{id}/revoke"))
        .header(rocket::http::ContentType::JSON)
        .cookie(cookie)
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::NotFound);
    drop(answer);
    read(&app, &token, "Users").await.ok();

    let (status, _) = post(
        &app.client,
        &format!("/auth/tokens/{id}/revoke"),
        Value::Null,
    )
    .await;
    assert_eq!(status, Status::NoContent);
    read(&app, &token, "Users")
        .await
        .assert_error(Status::Unauthorized, None);
    assert_eq!(events(&app, user_id, "token_revoked").await.len(), 1);

    let expired = SecretToken::generate();
    let new = NewToken {
        name: "old".to_owned(),
        sets: None,
        expires_at: Some(time::OffsetDateTime::now_utc().unix_timestamp() - 5),
    };
    tokens::create_with(&app.db, user_id, &new, &expired)
        .await
        .unwrap();
    read(&app, expired.expose(), "Users")
        .await
        .assert_error(Status::Unauthorized, None);
}

#[rocket::async_test]
async fn a_reset_password_ends_the_accounts_tokens_unless_configured_otherwise() {
    for revoke in [true, false] {
        let (app, mailbox) =
            spawn_mail_app_with(|f| f.merge(("tokens.revoke_on_password_reset", revoke))).await;
        ada(&app).await;
        let (_, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
        let token = made["token"].as_str().unwrap().to_owned();
        // A guest's browser, on an instance with the same mailbox and setting.
        let configured = mailbox
            .configure(figment(&app.database_url))
            .merge(("tokens.revoke_on_password_reset", revoke));
        let guest = Client::untracked(gatehouse_host::rocket(configured))
            .await
            .expect("ignites");
        let link = request_link_via(&guest, &mailbox, EMAIL).await;
        let answer = reset(&guest, &link.token, EMAIL, "a brand new passphrase").await;
        assert_eq!(answer.status(), Status::Ok);
        drop(answer);
        let expected = if revoke {
            Status::Unauthorized
        } else {
            Status::Ok
        };
        assert_eq!(
            read(&app, &token, "Users").await.status,
            expected,
            "revoke = {revoke}"
        );
    }
}

#[rocket::async_test]
async fn a_token_of_a_removed_account_reads_nothing() {
    let app = spawn_app().await;
    let user_id = ada(&app).await;
    let (_, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
    let token = made["token"].as_str().expect("the token, once").to_owned();
    read(&app, &token, "Users").await.ok();
    // The host removes the account (its own data first).
    for sql in [
        "DELETE FROM sessions WHERE user_id = $1",
        "DELETE FROM users WHERE id = $1",
    ] {
        app.execute(app.db.query(sql).bind(user_id)).await;
    }
    assert_eq!(
        read(&app, &token, "Users").await.status,
        Status::Unauthorized
    );
}

#[rocket::async_test]
async fn the_owner_is_mailed_when_a_token_is_made() {
    let (app, mailbox) = spawn_mail_app_with(|f| f).await;
    ada(&app).await;
    let (status, _) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "Nightly export"}),
    )
    .await;
    assert_eq!(status, Status::Created);
    let mail = mailbox
        .wait_for_mail(EMAIL, "A token for scripts was made for your account")
        .await;
    assert!(mail.text.contains("“Nightly export”"), "{}", mail.text);
}

#[rocket::async_test]
async fn a_tokens_use_from_a_new_address_is_an_event() {
    let app = spawn_app().await;
    let user_id = ada(&app).await;
    let (_, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
    let token = made["token"].as_str().unwrap().to_owned();
    let from = |address: &'static str| {
        let bearer = format!("Bearer {token}");
        app.client
            .get(odata_uri("Users", &[]))
            .header(rocket::http::Header::new("Authorization", bearer))
            .remote(address.parse().unwrap())
    };
    assert_eq!(
        from("192.0.2.10:4000").dispatch().await.status(),
        Status::Ok
    );
    assert_eq!(
        from("192.0.2.10:4001").dispatch().await.status(),
        Status::Ok
    );
    assert_eq!(
        events(&app, user_id, "token_used").await.len(),
        1,
        "one address"
    );
    assert_eq!(
        from("198.51.100.7:5000").dispatch().await.status(),
        Status::Ok
    );
    let used = events(&app, user_id, "token_used").await;
    assert_eq!(used.len(), 2, "a new address");
    let id = made["id"].as_i64().unwrap();
    assert_eq!(used[1].as_deref(), Some(format!("token {id}").as_str()));
}
