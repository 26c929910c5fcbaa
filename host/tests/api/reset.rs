//! Password reset by mail: the reset rows of the wire table, as a client sees
//! them — `POST /auth/forgot-password`, the mailed link
//! `GET /password/reset/{token}?email=`, and `POST /auth/reset-password`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use gatehouse::state::GatehouseState;
use gatehouse::{AuthEvent, AuthEventListener, AuthUser, Gatehouse};
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use rocket::{get, routes};
use serde_json::{json, Value};
use sqlx::Row;

use crate::helpers::{
    header, json, location, set_cookie, spawn_app, spawn_host, TestApp, BASE_URL, PASSWORD,
};
use crate::mailbox::{
    forgot, request_link, request_link_via, reset, reset_with_headers, second_instance,
    spawn_mail_app, spawn_mail_app_with, Mailbox, ResetLink, CHANGED_SUBJECT, RESET_SUBJECT,
};

const ADA: &str = "ada@example.org";
const BOB: &str = "bob@example.org";
const NEW_PASSWORD: &str = "violet meadow lantern orbit";
const REMEMBER: &str = "gatehouse_remember";

fn reset_failed() -> Value {
    json!({"message": "reset_failed", "errors": {"email": ["reset_failed"]}})
}

fn validation_failed(field: &str, code: &str) -> Value {
    json!({"message": "validation_failed", "errors": {field: [code]}})
}

/// The stored `token` column of every `password_reset_tokens` row for `email`.
async fn token_rows(app: &TestApp, email: &str) -> Vec<String> {
    let select = app
        .db
        .query("SELECT token FROM password_reset_tokens WHERE email = $1")
        .bind(email.to_owned());
    app.db
        .fetch_all(select)
        .await
        .expect("select tokens")
        .into_iter()
        .map(|row| row.try_get::<String, _>("token").expect("token"))
        .collect()
}

async fn backdate_tokens(app: &TestApp) {
    app.execute(
        app.db
            .query("UPDATE password_reset_tokens SET created_at = '2000-01-01 00:00:00'"),
    )
    .await;
}

/// `GET` of the mailed link: answers the `Location` of its 303.
async fn follow(app: &TestApp, path_and_query: &str) -> String {
    let response = app.get_html(path_and_query).await;
    assert_eq!(response.status(), Status::SeeOther, "{path_and_query}");
    location(&response)
}

async fn assert_reset_failed(response: LocalResponse<'_>) {
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await, reset_failed());
}

async fn assert_validation_failed(response: LocalResponse<'_>, field: &str, code: &str) {
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await, validation_failed(field, code));
}

/// `POST /auth/forgot-password` (JSON) from the client address `peer`.
async fn forgot_from<'c>(client: &'c Client, email: &str, peer: &str) -> LocalResponse<'c> {
    client
        .post("/auth/forgot-password")
        .header(ContentType::JSON)
        .remote(peer.parse::<SocketAddr>().unwrap())
        .body(json!({ "email": email }).to_string())
        .dispatch()
        .await
}

// ---------------------------------------------------------------------------
// POST /auth/forgot-password

#[rocket::async_test]
async fn forgot_password_answers_reset_link_sent_and_mails_a_link() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let response = forgot(&app.client, ADA).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"reset_link_sent"}"#
    );
    let mails = mailbox.wait_for(1).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, ADA);
    assert_eq!(mails[0].subject, RESET_SUBJECT);
    let link = mails[0].reset_link();
    assert_eq!(link.email, ADA);
    assert!(link.url.starts_with(&format!("{BASE_URL}/password/reset/")));
}

#[rocket::async_test]
async fn forgot_password_for_an_unknown_address_sends_no_mail() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let response = forgot(&app.client, "nobody@example.org").await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(json(response).await, json!({"message": "reset_link_sent"}));
    assert!(mailbox.after_quiet_wait().await.is_empty());
    assert_eq!(app.count("password_reset_tokens").await, 0);
}

#[rocket::async_test]
async fn forgot_password_without_email_is_422_required() {
    let (app, _mailbox) = spawn_mail_app().await;
    for body in [json!({}), json!({"email": ""}), json!({"email": "   "})] {
        let response = app.post_json("/auth/forgot-password", body.clone()).await;
        assert_eq!(response.status(), Status::UnprocessableEntity, "{body}");
        assert_eq!(
            json(response).await,
            validation_failed("email", "required"),
            "{body}"
        );
    }
}

#[rocket::async_test]
async fn forgot_password_with_malformed_email_is_422_email() {
    let (app, mailbox) = spawn_mail_app().await;
    for email in [
        "ada",
        "ada@",
        "@example.org",
        "ada@example",
        "ada example@x.org",
    ] {
        assert_validation_failed(forgot(&app.client, email).await, "email", "email").await;
    }
    assert!(mailbox.after_quiet_wait().await.is_empty());
}

#[rocket::async_test]
async fn second_request_within_the_quiet_period_answers_the_same_and_sends_no_mail() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let first = request_link(&app, &mailbox, ADA).await;
    let stored = token_rows(&app, ADA).await;

    let response = forgot(&app.client, ADA).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(json(response).await, json!({"message": "reset_link_sent"}));

    assert_eq!(mailbox.after_quiet_wait().await.len(), 1, "no second mail");
    assert_eq!(
        token_rows(&app, ADA).await,
        stored,
        "the token is unchanged"
    );
    assert!(
        follow(&app, &first.path_and_query)
            .await
            .starts_with("/login/set-password/"),
        "the first link still works"
    );
}

#[rocket::async_test]
async fn double_submit_sends_one_mail_whose_link_works() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    for _ in 0..2 {
        let (a, b) = futures::join!(forgot(&app.client, ADA), forgot(&app.client, ADA));
        assert_eq!((a.status(), b.status()), (Status::Ok, Status::Ok));
    }
    let mails = mailbox.after_quiet_wait().await;
    assert_eq!(mails.len(), 1, "one mail for overlapping requests");
    let link = mails[0].reset_link();
    assert!(follow(&app, &link.path_and_query)
        .await
        .starts_with("/login/set-password/"));
}

#[rocket::async_test]
async fn request_after_the_quiet_period_replaces_the_live_token() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.reset_throttle_seconds", 0))).await;
    app.create_user(ADA, PASSWORD).await;
    let first = request_link(&app, &mailbox, ADA).await;
    let second = request_link(&app, &mailbox, ADA).await;
    assert_ne!(first.token, second.token);
    assert_eq!(
        token_rows(&app, ADA).await.len(),
        1,
        "one live token per address"
    );

    assert_eq!(follow(&app, &first.path_and_query).await, "/login");
    assert_reset_failed(reset(&app.client, &first.token, ADA, NEW_PASSWORD).await).await;
    let response = reset(&app.client, &second.token, ADA, NEW_PASSWORD).await;
    assert_eq!(response.status(), Status::Ok);
}

#[rocket::async_test]
async fn reset_token_has_256_random_bits_and_only_its_hash_is_stored() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.reset_throttle_seconds", 0))).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert!(
        link.token.len() >= 64 && link.token.chars().all(|c| c.is_ascii_hexdigit()),
        "at least 256 bits as hex: {}",
        link.token
    );
    let stored = token_rows(&app, ADA).await;
    assert_eq!(stored.len(), 1);
    assert_ne!(stored[0], link.token);
    assert!(!stored[0].contains(&link.token));
    let digest = gatehouse::domain::sha256_hex(&link.token);
    assert_eq!(stored[0], digest, "SHA-256 of the mailed token");

    let again = request_link(&app, &mailbox, ADA).await;
    assert_ne!(again.token, link.token, "tokens are not repeated");
}

#[rocket::async_test]
async fn forgot_password_is_throttled_after_five_requests_per_address_and_ip() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.reset_throttle_seconds", 0))).await;
    app.create_user(ADA, PASSWORD).await;
    const PEER: &str = "1.2.3.4:5000";
    for i in 1..=5 {
        let response = forgot_from(&app.client, ADA, PEER).await;
        assert_eq!(response.status(), Status::Ok, "request {i}");
        mailbox.wait_for(i).await;
    }

    let response = forgot_from(&app.client, ADA, PEER).await;
    assert_eq!(response.status(), Status::TooManyRequests);
    let retry_after: u64 = header(&response, "Retry-After")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(
        json(response).await,
        json!({
            "message": "auth_throttle",
            "errors": {"email": ["auth_throttle"]},
            "retry_after": retry_after,
        })
    );
    assert_eq!(
        forgot_from(&app.client, "ADA@Example.org", PEER)
            .await
            .status(),
        Status::TooManyRequests,
        "the address is lower-cased"
    );
    assert_eq!(
        mailbox.after_quiet_wait().await.len(),
        5,
        "a refused request sends nothing"
    );

    assert_eq!(
        forgot_from(&app.client, ADA, "5.6.7.8:5000").await.status(),
        Status::Ok,
        "another client address has its own counter"
    );
    assert_eq!(
        forgot_from(&app.client, BOB, PEER).await.status(),
        Status::Ok,
        "another address has its own counter"
    );
}

#[rocket::async_test]
async fn forgot_password_throttles_an_unknown_address_like_a_known_one() {
    let (app, _mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    const PEER: &str = "1.2.3.4:5000";
    for email in [ADA, "nobody@example.org"] {
        for _ in 0..5 {
            assert_eq!(
                forgot_from(&app.client, email, PEER).await.status(),
                Status::Ok
            );
        }
        let response = forgot_from(&app.client, email, PEER).await;
        assert_eq!(response.status(), Status::TooManyRequests, "{email}");
        assert_eq!(json(response).await["message"], "auth_throttle");
    }
}

#[rocket::async_test]
async fn forgot_form_post_goes_back_to_its_screen_for_known_and_unknown_addresses() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let mut locations = Vec::new();
    for email in ["ada%40example.org", "nobody%40example.org"] {
        let response = app
            .post_form("/auth/forgot-password", &format!("email={email}"))
            .await;
        assert_eq!(response.status(), Status::SeeOther);
        locations.push(location(&response));
    }
    assert_eq!(
        locations,
        ["/login/forgot-password", "/login/forgot-password"]
    );
    assert_eq!(mailbox.wait_for(1).await[0].to, ADA);
}

// ---------------------------------------------------------------------------
// GET /password/reset/{token}?email=E

#[rocket::async_test]
async fn reset_link_with_a_live_token_redirects_to_the_set_password_screen() {
    let (app, mailbox) = spawn_mail_app().await;
    let email = "ada+reset@example.org";
    app.create_user(email, PASSWORD).await;
    let link = request_link(&app, &mailbox, email).await;

    let target = follow(&app, &link.path_and_query).await;
    assert_eq!(
        target,
        format!(
            "/login/set-password/{}/ada%2Breset%40example%2Eorg",
            link.token
        ),
        "token and address percent-encoded"
    );
    assert_eq!(app.get_html(&target).await.status(), Status::Ok);

    assert_eq!(token_rows(&app, email).await.len(), 1, "nothing consumed");
    let response = reset(&app.client, &link.token, email, NEW_PASSWORD).await;
    assert_eq!(response.status(), Status::Ok, "the token still works");
}

#[rocket::async_test]
async fn reset_link_with_a_wrong_token_redirects_to_login_and_consumes_nothing() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let wrong = "0".repeat(64);
    assert_eq!(
        follow(&app, &format!("/password/reset/{wrong}?email={ADA}")).await,
        "/login"
    );
    assert_eq!(token_rows(&app, ADA).await.len(), 1, "nothing consumed");
    assert_eq!(
        follow(&app, &link.path_and_query).await,
        format!("/login/set-password/{}/ada%40example%2Eorg", link.token)
    );
}

#[rocket::async_test]
async fn reset_link_for_a_missing_user_redirects_to_login_and_consumes_nothing() {
    let (app, mailbox) = spawn_mail_app().await;
    let user_id = app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        follow(
            &app,
            &format!("/password/reset/{}?email=nobody%40example.org", link.token)
        )
        .await,
        "/login",
        "no such user"
    );

    app.execute(
        app.db
            .query("DELETE FROM users WHERE id = $1")
            .bind(user_id),
    )
    .await;
    assert_eq!(
        follow(&app, &link.path_and_query).await,
        "/login",
        "the user is gone, the token row is not"
    );
    assert_eq!(token_rows(&app, ADA).await.len(), 1, "nothing consumed");
}

#[rocket::async_test]
async fn reset_link_with_an_expired_token_redirects_to_login() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    backdate_tokens(&app).await;
    assert_eq!(follow(&app, &link.path_and_query).await, "/login");
}

#[rocket::async_test]
async fn reset_link_without_a_usable_email_redirects_to_login() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let base = format!("/password/reset/{}", link.token);
    assert_eq!(follow(&app, &base).await, "/login");
    assert_eq!(follow(&app, &format!("{base}?email=")).await, "/login");
    assert_eq!(
        follow(&app, &format!("{base}?email=not-an-address")).await,
        "/login"
    );
    assert_eq!(token_rows(&app, ADA).await.len(), 1, "nothing consumed");
}

// ---------------------------------------------------------------------------
// POST /auth/reset-password

#[rocket::async_test]
async fn reset_replaces_the_password_and_answers_reset_success() {
    let (app, mailbox) = spawn_mail_app().await;
    let user_id = app.create_user(ADA, PASSWORD).await;
    let old_hash = app.password_hash(user_id).await;
    let link = request_link(&app, &mailbox, ADA).await;

    let response = reset(&app.client, &link.token, &link.email, NEW_PASSWORD).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await,
        json!({"message": "reset_success", "redirect": format!("{BASE_URL}/login")})
    );
    assert_ne!(app.password_hash(user_id).await, old_hash);
    assert!(app.password_hash(user_id).await.starts_with("$argon2id$"));
    assert_eq!(app.count("password_reset_tokens").await, 0, "token deleted");

    assert_eq!(app.login(ADA, PASSWORD).await, Status::UnprocessableEntity);
    assert_eq!(app.login(ADA, NEW_PASSWORD).await, Status::Ok);
}

#[rocket::async_test]
async fn reset_redirect_uses_base_url() {
    let (app, mailbox) =
        spawn_mail_app_with(|f| f.merge(("base_url", "https://accounts.example.com"))).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let forged = [
        ("Host", "evil.example"),
        ("X-Forwarded-Host", "evil.example"),
    ];
    let response = reset_with_headers(&app.client, &link.token, ADA, NEW_PASSWORD, &forged).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await["redirect"],
        "https://accounts.example.com/login"
    );
}

#[rocket::async_test]
async fn reset_token_works_only_once() {
    let (app, mailbox) = spawn_mail_app().await;
    let user_id = app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    let hash = app.password_hash(user_id).await;

    assert_reset_failed(reset(&app.client, &link.token, ADA, "another fine horse saddle").await)
        .await;
    assert_eq!(app.password_hash(user_id).await, hash, "unchanged");
    assert_eq!(follow(&app, &link.path_and_query).await, "/login");
}

#[rocket::async_test]
async fn expired_token_is_reset_failed() {
    let (app, mailbox) = spawn_mail_app().await;
    let user_id = app.create_user(ADA, PASSWORD).await;
    let hash = app.password_hash(user_id).await;
    let link = request_link(&app, &mailbox, ADA).await;
    backdate_tokens(&app).await;
    assert_reset_failed(reset(&app.client, &link.token, ADA, NEW_PASSWORD).await).await;
    assert_eq!(app.password_hash(user_id).await, hash);
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
}

#[rocket::async_test]
async fn token_lives_reset_token_minutes() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.reset_token_minutes", 2))).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    // Issued 90 seconds ago: live for a 2-minute lifetime.
    app.set_utc_moment("password_reset_tokens", "created_at", -90)
        .await;
    assert!(follow(&app, &link.path_and_query)
        .await
        .starts_with("/login/set-password/"));
    backdate_tokens(&app).await;
    assert_eq!(follow(&app, &link.path_and_query).await, "/login");
}

#[rocket::async_test]
async fn valid_token_with_a_wrong_email_is_reset_failed_and_not_consumed() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let bob = app.create_user(BOB, PASSWORD).await;
    let (ada_hash, bob_hash) = (app.password_hash(ada).await, app.password_hash(bob).await);
    let link = request_link(&app, &mailbox, ADA).await;

    for email in [BOB, "nobody@example.org"] {
        assert_reset_failed(reset(&app.client, &link.token, email, NEW_PASSWORD).await).await;
    }
    assert_eq!(app.password_hash(ada).await, ada_hash);
    assert_eq!(app.password_hash(bob).await, bob_hash);
    assert_eq!(token_rows(&app, ADA).await.len(), 1, "not consumed");
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
}

#[rocket::async_test]
async fn bad_token_is_reset_failed() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let mut tampered = link.token.clone();
    let last = if tampered.ends_with('0') { "1" } else { "0" };
    tampered.replace_range(tampered.len() - 1.., last);
    for token in [tampered.as_str(), "x", &"f".repeat(64)] {
        assert_reset_failed(reset(&app.client, token, ADA, NEW_PASSWORD).await).await;
    }
    let stored = token_rows(&app, ADA).await;
    assert_reset_failed(reset(&app.client, &stored[0], ADA, NEW_PASSWORD).await).await;
    assert_eq!(token_rows(&app, ADA).await.len(), 1, "not consumed");
}

#[rocket::async_test]
async fn reset_without_any_token_for_the_address_is_reset_failed() {
    let (app, _mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    assert_reset_failed(reset(&app.client, &"a".repeat(64), ADA, NEW_PASSWORD).await).await;
}

#[rocket::async_test]
async fn reset_ends_every_session_of_the_user_and_voids_remember_cookies() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    app.create_user(BOB, PASSWORD).await;
    let other = second_instance(&app, &mailbox).await;

    // Browser 1 (tracked) and browser 2 (with remember-me) as Ada; Bob elsewhere.
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let ada2 = sign_in(&other, &app.cookie_name, ADA, true).await;
    let bob = sign_in(&other, &app.cookie_name, BOB, false).await;
    assert!(app.is_signed_in().await);
    assert_eq!(dashboard_status(&other, &ada2).await, Status::Ok);
    let remember_only: Vec<Cookie<'static>> = ada2
        .iter()
        .filter(|c| c.name() == REMEMBER)
        .cloned()
        .collect();
    assert_eq!(remember_only.len(), 1, "a remember cookie was issued");
    assert_eq!(dashboard_status(&other, &remember_only).await, Status::Ok);
    let ada_sessions = |sessions: Vec<(String, Option<i64>, Value)>| {
        sessions.iter().filter(|s| s.1 == Some(ada)).count()
    };
    // Browser 1, browser 2, and the session the remember cookie restored.
    assert_eq!(ada_sessions(app.sessions().await), 3);

    // A guest (a third browser, no cookies) resets Ada's password.
    let link = request_link_via(&other, &mailbox, ADA).await;
    let response = reset(&other, &link.token, ADA, NEW_PASSWORD).await;
    assert_eq!(response.status(), Status::Ok);

    assert_eq!(
        ada_sessions(app.sessions().await),
        0,
        "every session row gone"
    );
    assert!(!app.is_signed_in().await, "browser 1 is signed out");
    assert_eq!(dashboard_status(&other, &ada2).await, Status::Unauthorized);
    assert_eq!(
        dashboard_status(&other, &remember_only).await,
        Status::Unauthorized,
        "the remember cookie is void"
    );
    assert_eq!(
        dashboard_status(&other, &bob).await,
        Status::Ok,
        "other users keep their sessions"
    );
}

/// Signs in on `client` (untracked) and answers the cookies it was given.
async fn sign_in(
    client: &Client,
    cookie_name: &str,
    email: &str,
    remember: bool,
) -> Vec<Cookie<'static>> {
    let response = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": email, "password": PASSWORD, "remember": remember}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    [cookie_name, REMEMBER]
        .iter()
        .filter_map(|name| set_cookie(&response, name))
        .map(|c| Cookie::new(c.name().to_owned(), c.value().to_owned()))
        .collect()
}

/// `GET /dashboard` (JSON) with exactly `cookies`.
async fn dashboard_status(client: &Client, cookies: &[Cookie<'static>]) -> Status {
    client
        .get("/dashboard")
        .header(ContentType::JSON)
        .header(Header::new("Accept", "application/json"))
        .cookies(cookies.to_vec())
        .dispatch()
        .await
        .status()
}

#[rocket::async_test]
async fn reset_rotates_remember_token() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    assert_eq!(
        app.post_json(
            "/auth/login",
            json!({"email": ADA, "password": PASSWORD, "remember": true})
        )
        .await
        .status(),
        Status::Ok
    );
    let before = app.remember_token(ada).await.expect("remember_token set");
    assert_eq!(app.logout().await, Status::SeeOther);
    let before_reset = app.remember_token(ada).await.expect("remember_token set");
    assert_ne!(before_reset, before, "logout rotates too");

    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    let after = app.remember_token(ada).await.expect("remember_token set");
    assert_ne!(after, before_reset);
    assert!(after.len() >= 32, "a fresh random value: {after}");
}

#[rocket::async_test]
async fn reset_rotates_a_remember_token_that_was_never_set() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    assert_eq!(app.remember_token(ada).await, None);
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    assert!(app.remember_token(ada).await.is_some());
}

#[rocket::async_test]
async fn reset_sends_a_password_changed_mail() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    let mail = mailbox.wait_for_mail(ADA, CHANGED_SUBJECT).await;
    assert!(mail.text.contains("your password at once"), "{}", mail.text);
    assert!(
        !mail.text.contains(NEW_PASSWORD),
        "the password is never mailed"
    );
    assert!(!mail.html.contains(NEW_PASSWORD));
}

#[rocket::async_test]
async fn failed_reset_sends_no_mail_and_fires_no_event() {
    let recorder = Recorder::default();
    let (app, mailbox) = spawn_recorded_host(&recorder).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_reset_failed(reset(&app.client, &link.token, BOB, NEW_PASSWORD).await).await;
    assert_eq!(mailbox.after_quiet_wait().await.len(), 1, "only the link");
    assert!(recorder.events().is_empty());
}

/// Keeps every event it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<AuthEvent>>>);

impl AuthEventListener for Recorder {
    fn on_event(&self, event: &AuthEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Recorder {
    fn events(&self) -> Vec<AuthEvent> {
        self.0.lock().unwrap().clone()
    }
}

#[get("/")]
fn home() -> &'static str {
    "home"
}

#[get("/dashboard")]
fn dashboard(user: AuthUser) -> String {
    user.email
}

/// A host of its own with `recorder` listening, mail in a fresh mailbox.
async fn spawn_recorded_host(recorder: &Recorder) -> (TestApp, Mailbox) {
    let mailbox = Mailbox::new();
    let listener = recorder.clone();
    let app = spawn_host(|f| {
        rocket::custom(mailbox.configure(f))
            .mount("/", routes![home, dashboard])
            .attach(Gatehouse::new().listener(listener))
    })
    .await;
    (app, mailbox)
}

#[rocket::async_test]
async fn reset_fires_password_reset_event() {
    let recorder = Recorder::default();
    let (app, mailbox) = spawn_recorded_host(&recorder).await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert!(
        recorder.events().is_empty(),
        "requesting a link fires nothing"
    );

    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    assert_eq!(
        recorder.events(),
        [AuthEvent::PasswordReset { user_id: ada }]
    );
    assert_eq!(recorder.events()[0].name(), "PasswordReset");
}

#[rocket::async_test]
async fn reset_with_missing_fields_is_422_required() {
    let (app, _mailbox) = spawn_mail_app().await;
    let response = app.post_json("/auth/reset-password", json!({})).await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    let body = json(response).await;
    assert_eq!(body["message"], "validation_failed");
    for field in ["token", "email", "password"] {
        assert_eq!(
            body["errors"][field],
            json!(["required"]),
            "{field}: {body}"
        );
    }
}

#[rocket::async_test]
async fn reset_with_a_malformed_email_is_422_email() {
    let (app, _mailbox) = spawn_mail_app().await;
    assert_validation_failed(
        reset(&app.client, &"a".repeat(64), "not-an-address", NEW_PASSWORD).await,
        "email",
        "email",
    )
    .await;
}

/// `POST /auth/reset-password` with a password and its confirmation.
async fn reset_with<'c>(
    client: &'c Client,
    link: &ResetLink,
    password: &str,
    confirmation: Option<&str>,
) -> LocalResponse<'c> {
    let mut body = json!({"token": link.token, "email": link.email, "password": password});
    if let Some(confirmation) = confirmation {
        body["password_confirmation"] = json!(confirmation);
    }
    client
        .post("/auth/reset-password")
        .header(ContentType::JSON)
        .body(body.to_string())
        .dispatch()
        .await
}

#[rocket::async_test]
async fn password_rules_are_distinct_codes_and_consume_no_token() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let hash = app.password_hash(ada).await;
    let link = request_link(&app, &mailbox, ADA).await;

    let too_long = "qZ7!vK2@mP9#xL4$".repeat(9); // 144 characters
    let cases: [(&str, Option<&str>, &str); 6] = [
        ("Tr0ub4dor&3", Some("Tr0ub4dor&3"), "min_length"), // 11 < 12
        (&too_long, Some(&too_long), "max_length"),
        (
            NEW_PASSWORD,
            Some("violet meadow lantern orbiT"),
            "confirmed",
        ),
        (NEW_PASSWORD, None, "confirmed"),
        ("password1234", Some("password1234"), "too_common"),
        ("aaaaaaaaaaaaaaaa", Some("aaaaaaaaaaaaaaaa"), "too_common"),
    ];
    for (password, confirmation, code) in cases {
        let response = reset_with(&app.client, &link, password, confirmation).await;
        assert_eq!(response.status(), Status::UnprocessableEntity, "{code}");
        assert_eq!(
            json(response).await,
            validation_failed("password", code),
            "{password:?}"
        );
    }
    assert_eq!(app.password_hash(ada).await, hash, "unchanged");
    assert_eq!(
        token_rows(&app, ADA).await.len(),
        1,
        "the token is not consumed"
    );
    assert_eq!(
        reset_with(&app.client, &link, NEW_PASSWORD, Some(NEW_PASSWORD))
            .await
            .status(),
        Status::Ok
    );
}

#[rocket::async_test]
async fn password_of_exactly_128_characters_is_accepted_as_typed() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let password = format!("  {}  ", "kV8#rQ2!wN5@".repeat(10) + "zX3$");
    assert_eq!(password.chars().count(), 128);
    let response = reset_with(&app.client, &link, &password, Some(&password)).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        app.login(ADA, password.trim()).await,
        Status::UnprocessableEntity,
        "not trimmed"
    );
    assert_eq!(app.login(ADA, &password).await, Status::Ok);
}

#[rocket::async_test]
async fn password_min_length_comes_from_configuration() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.password_min_length", 30))).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let response = reset_with(&app.client, &link, NEW_PASSWORD, Some(NEW_PASSWORD)).await;
    assert_eq!(
        json(response).await,
        validation_failed("password", "min_length")
    );
    let long = "violet meadow lantern orbit quietly";
    assert_eq!(
        reset_with(&app.client, &link, long, Some(long))
            .await
            .status(),
        Status::Ok
    );
}

#[rocket::async_test]
async fn reset_form_post_redirects_to_login_or_back_to_its_screen() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let screen = format!("/login/set-password/{}/ada%40example%2Eorg", link.token);
    let form = |password: &str, confirmation: &str| {
        format!(
            "token={}&email=ada%40example.org&password={}&password_confirmation={}",
            link.token,
            password.replace(' ', "+"),
            confirmation.replace(' ', "+")
        )
    };

    let response = app
        .post_form("/auth/reset-password", &form(NEW_PASSWORD, "mismatch"))
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), screen);

    let response = app
        .post_form("/auth/reset-password", &form(NEW_PASSWORD, NEW_PASSWORD))
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    assert_eq!(app.login(ADA, NEW_PASSWORD).await, Status::Ok);
}

#[rocket::async_test]
async fn signed_in_browser_posting_a_reset_goes_to_dashboard() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let hash = app.password_hash(ada).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let response = app
        .post_form(
            "/auth/reset-password",
            &format!(
                "token={}&email=ada%40example.org&password=a+b&password_confirmation=a+b",
                link.token
            ),
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/dashboard");
    assert_eq!(app.password_hash(ada).await, hash);
    assert_eq!(token_rows(&app, ADA).await.len(), 1);
}

// ---------------------------------------------------------------------------
// The background sweep

#[rocket::async_test]
async fn sweep_removes_expired_reset_tokens_and_idle_sessions_only() {
    let (app, mailbox) = spawn_mail_app().await;
    // Started first: each instance also sweeps once at launch.
    let other = second_instance(&app, &mailbox).await;
    let ada = app.create_user(ADA, PASSWORD).await;
    app.create_user(BOB, PASSWORD).await;
    sign_in(&other, &app.cookie_name, BOB, false).await;
    request_link(&app, &mailbox, ADA).await;
    backdate_tokens(&app).await; // Ada's token is now long expired.
    let bob_link = request_link(&app, &mailbox, BOB).await;

    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let idle: Vec<String> = app
        .sessions()
        .await
        .into_iter()
        .filter(|s| s.1 == Some(ada))
        .map(|s| s.0)
        .collect();
    assert_eq!(idle.len(), 1);
    app.execute(
        app.db
            .query("UPDATE sessions SET last_activity = 0 WHERE id = $1")
            .bind(idle[0].clone()),
    )
    .await;
    assert_eq!(app.count("sessions").await, 2);

    let gh = app
        .client
        .rocket()
        .state::<GatehouseState>()
        .expect("Gatehouse state");
    let swept = gatehouse::sweep::Sweeper::from(gh)
        .once()
        .await
        .expect("sweep");
    assert_eq!(swept.reset_tokens, 1);
    assert_eq!(swept.sessions, 1);

    assert!(
        token_rows(&app, ADA).await.is_empty(),
        "expired token removed"
    );
    assert_eq!(token_rows(&app, BOB).await.len(), 1, "live token kept");
    let left = app.sessions().await;
    assert_eq!(left.len(), 1);
    assert_ne!(left[0].0, idle[0], "the idle session went");
    assert!(follow(&app, &bob_link.path_and_query)
        .await
        .starts_with("/login/set-password/"));
}

#[rocket::async_test]
async fn tokens_for_many_addresses_are_issued_at_once() {
    // Each request issues its token on a background job: many run together,
    // and none may fail for another address's sake (row-lock deadlocks).
    let app = spawn_app().await;
    let emails: Vec<_> = (0..24)
        .map(|i| gatehouse::domain::Email::parse(&format!("user{i}@example.org")).unwrap())
        .collect();
    let issued = futures::future::join_all(
        emails
            .iter()
            .map(|email| gatehouse::auth::reset::broker::issue(&app.db, email, 60)),
    )
    .await;
    for (email, outcome) in emails.iter().zip(issued) {
        let token = outcome.unwrap_or_else(|e| panic!("{email}: {e}"));
        assert!(token.is_some(), "{email}: no token");
    }
    assert_eq!(app.count("password_reset_tokens").await, 24);
}
