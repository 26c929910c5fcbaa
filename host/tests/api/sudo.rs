//! Sudo mode as a client sees it: a sign-in (or `POST /auth/confirm`)
//! opens a window in which the account's sensitive changes need no
//! password; a remember-me recall opens none; a wrong password is refused
//! even inside the window, and counted; the window closes after
//! `session.reauth_minutes`. And the devices named in words.

use rocket::figment::Figment;
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::helpers::{location, spawn_app, spawn_app_with, TestApp, PASSWORD};
use crate::passkeys::{add_passkey, passkeys_on, Authenticator};
use crate::second_step::{browser_with, events, post, remember_of, sign_in};

const ADA: &str = "ada@example.org";
const REMEMBER: &str = "gatehouse_remember";
/// A form's field asking for the account's own password.
const ASKS_PASSWORD: &str = r#"name="password" type="password" autocomplete="current-password""#;

/// A browser that signed in only by recalling `client`'s remember-me
/// cookie, on a host configured by `configure`.
async fn recalled(
    app: &TestApp,
    client: &Client,
    configure: impl FnOnce(Figment) -> Figment,
) -> Client {
    let browser = browser_with(app, configure).await;
    let recall = browser
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, remember_of(client)))
        .dispatch()
        .await;
    assert_eq!(
        recall.status(),
        Status::Ok,
        "the cookie signs the browser in"
    );
    drop(recall);
    browser
}

/// Ada's account, signed in on the app's own client with "remember me";
/// answers her id.
async fn remembered_ada(app: &TestApp) -> i64 {
    let ada = app.create_user(ADA, PASSWORD).await;
    let (status, _) = sign_in(&app.client, true).await;
    assert_eq!(status, Status::Ok);
    ada
}

/// Posts a wrong password to `path` from `client`: refused at the field
/// (422 `current_password`) and counted as a failed sign-in of `user_id`.
async fn refused_and_counted(app: &TestApp, user_id: i64, client: &Client, path: &str) {
    let failed_before = events(app, user_id, "failed").await.len();
    let (status, body) = post(client, path, json!({"password": "not it at all"})).await;
    assert_eq!(status, Status::UnprocessableEntity, "{path}");
    assert_eq!(
        body["errors"]["password"],
        json!(["current_password"]),
        "{body}"
    );
    assert_eq!(
        events(app, user_id, "failed").await.len(),
        failed_before + 1
    );
}

/// Seconds from now until the RFC 3339 `until` of a confirmation.
fn seconds_until(body: &Value) -> i64 {
    let until = body["until"].as_str().expect("until");
    let until = OffsetDateTime::parse(until, &Rfc3339).expect("RFC 3339");
    until.unix_timestamp() - OffsetDateTime::now_utc().unix_timestamp()
}

fn reauth_required(methods: &[&str]) -> Value {
    json!({"message": "reauth_required", "methods": methods})
}

#[rocket::async_test]
async fn a_fresh_sign_in_needs_no_password_for_a_while() {
    let app = spawn_app().await;
    app.create_user(ADA, PASSWORD).await;
    let (status, _) = sign_in(&app.client, false).await;
    assert_eq!(status, Status::Ok);

    let (status, body) = post(&app.client, "/auth/two-factor", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert!(body["secret"].is_string(), "{body}");
    let (status, body) = post(&app.client, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");

    // A password change always asks for the current password.
    let (status, body) = post(
        &app.client,
        "/auth/password",
        json!({"password": "a brand new passphrase", "password_confirmation": "a brand new passphrase"}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(
        body["errors"]["current_password"],
        json!(["required"]),
        "{body}"
    );
}

#[rocket::async_test]
async fn a_recalled_session_confirms_before_a_sensitive_change() {
    let app = spawn_app().await;
    let ada = remembered_ada(&app).await;
    let browser = recalled(&app, &app.client, |f| f).await;

    for path in [
        "/auth/sessions/end-others",
        "/auth/two-factor",
        "/auth/passkeys/options",
    ] {
        let (status, body) = post(&browser, path, json!({})).await;
        assert_eq!(status, Status::UnprocessableEntity, "{path}");
        assert_eq!(body, reauth_required(&["password"]), "{path}");
    }
    // A wrong password is refused and counted as a failed sign-in.
    refused_and_counted(&app, ada, &browser, "/auth/confirm").await;
    let (status, body) = post(&browser, "/auth/confirm", json!({})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body["errors"]["password"], json!(["required"]), "{body}");

    let (status, body) = post(&browser, "/auth/confirm", json!({"password": PASSWORD})).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["message"], "confirmed");
    let left = seconds_until(&body);
    assert!(
        (595..=600).contains(&left),
        "ten minutes by default: {left}"
    );

    let (status, body) = post(&browser, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");
    let first = app
        .client
        .get("/dashboard")
        .header(ContentType::JSON)
        .dispatch()
        .await;
    assert_eq!(
        first.status(),
        Status::Unauthorized,
        "the other browser was signed out"
    );
}

#[rocket::async_test]
async fn a_wrong_password_inside_the_window_is_refused_and_counted() {
    let app = spawn_app().await;
    let ada = remembered_ada(&app).await;
    let other = recalled(&app, &app.client, |f| f).await;

    refused_and_counted(&app, ada, &app.client, "/auth/sessions/end-others").await;
    let still = other
        .get("/dashboard")
        .header(ContentType::JSON)
        .dispatch()
        .await;
    assert_eq!(still.status(), Status::Ok, "nothing was ended");
}

#[rocket::async_test]
async fn the_window_closes_after_reauth_minutes() {
    let short = |f: Figment| f.merge(("session.reauth_minutes", 1));
    let app = spawn_app_with(short).await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let (status, _) = sign_in(&app.client, false).await;
    assert_eq!(status, Status::Ok);
    let (status, body) = post(&app.client, "/auth/confirm", json!({"password": PASSWORD})).await;
    assert_eq!(status, Status::Ok, "{body}");
    let left = seconds_until(&body);
    assert!((55..=60).contains(&left), "one minute: {left}");

    // The minute passes.
    let at = OffsetDateTime::now_utc().unix_timestamp() - 61;
    app.set_session_data(ada, "reauth", json!({"user": ada, "at": at}))
        .await;
    let (status, body) = post(&app.client, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body, reauth_required(&["password"]));

    // Another user's proof in the session does not count.
    let now = OffsetDateTime::now_utc().unix_timestamp();
    app.set_session_data(ada, "reauth", json!({"user": ada + 1, "at": now}))
        .await;
    let (status, _) = post(&app.client, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::UnprocessableEntity);
}

#[rocket::async_test]
async fn a_passkey_confirms_and_is_named_among_the_methods() {
    let app = spawn_app_with(passkeys_on).await;
    remembered_ada(&app).await;
    let mut key = Authenticator::new();
    let (credential_id, _) = add_passkey(&app.client, &mut key, "Laptop").await;
    let browser = recalled(&app, &app.client, passkeys_on).await;

    let (status, body) = post(&browser, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body, reauth_required(&["password", "passkey"]));

    // An answer without a challenge of its own is refused.
    let (_, options) = post(&browser, "/auth/confirm/passkey-options", json!({})).await;
    let answer = key
        .get(&options, &credential_id)
        .expect("the authenticator signs");
    let (status, _) = post(&browser, "/auth/confirm/passkey-options", json!({})).await;
    assert_eq!(status, Status::Ok);
    let (status, body) = post(&browser, "/auth/confirm", json!({"credential": answer})).await;
    assert_eq!(
        status,
        Status::UnprocessableEntity,
        "an older challenge: {body}"
    );
    assert_eq!(body["message"], "passkey_failed");

    let (status, options) = post(&browser, "/auth/confirm/passkey-options", json!({})).await;
    assert_eq!(status, Status::Ok, "{options}");
    let allowed = options["publicKey"]["allowCredentials"]
        .as_array()
        .expect("own passkeys");
    assert_eq!(allowed.len(), 1);
    let answer = key
        .get(&options, &credential_id)
        .expect("the authenticator signs");
    let (status, body) = post(&browser, "/auth/confirm", json!({"credential": answer})).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["message"], "confirmed");
    // The same answer again finds its challenge spent.
    let (status, _) = post(&browser, "/auth/confirm", json!({"credential": answer})).await;
    assert_eq!(status, Status::UnprocessableEntity);

    let (status, body) = post(&browser, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");
}

#[rocket::async_test]
async fn a_form_outside_the_window_goes_back_to_the_screen_that_asks() {
    let app = spawn_app().await;
    remembered_ada(&app).await;
    let browser = recalled(&app, &app.client, |f| f).await;
    let posted = browser
        .post("/auth/sessions/end-others")
        .header(ContentType::Form)
        .body("")
        .dispatch()
        .await;
    assert_eq!(posted.status(), Status::SeeOther);
    assert_eq!(location(&posted), "/account");
    drop(posted);
    let page = browser
        .get("/account")
        .header(Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    let html = page.into_string().await.unwrap_or_default();
    assert!(
        html.contains(r#"action="/auth/confirm""#),
        "the screen asks to confirm"
    );
    assert!(html.contains("Confirm it’s you"), "{html}");
    assert!(
        html.contains(ASKS_PASSWORD),
        "outside the window the forms ask"
    );

    // Confirmed by the form, the screen shows no password field for it.
    let confirmed = browser
        .post("/auth/confirm")
        .header(ContentType::Form)
        .body(format!("password={}", PASSWORD.replace(' ', "+")))
        .dispatch()
        .await;
    assert_eq!(confirmed.status(), Status::SeeOther);
    drop(confirmed);
    let page = browser
        .get("/account")
        .header(Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    let html = page.into_string().await.unwrap_or_default();
    assert!(
        !html.contains(ASKS_PASSWORD),
        "no password field in the window"
    );
    assert!(html.contains(r#"data-gatehouse="end-others""#));
}

#[rocket::async_test]
async fn sessions_name_their_device_in_words() {
    let app = spawn_app().await;
    app.create_user(ADA, PASSWORD).await;
    let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                  (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
    let signed_in = app
        .client
        .post("/auth/login")
        .header(ContentType::JSON)
        .header(Header::new("User-Agent", safari))
        .body(json!({"email": ADA, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(signed_in.status(), Status::Ok);
    drop(signed_in);
    let listed = app
        .client
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .header(Header::new("User-Agent", safari))
        .dispatch()
        .await;
    let body: Value = listed.into_json().await.expect("JSON");
    let session = &body["value"][0];
    assert_eq!(session["device"], "Safari on iPhone", "{body}");
    assert_eq!(session["user_agent"], safari, "the raw header stays");
}

#[rocket::async_test]
async fn an_empty_password_inside_the_window_is_judged_not_taken_for_none() {
    let app = spawn_app().await;
    app.create_user(ADA, PASSWORD).await;
    let (status, _) = sign_in(&app.client, false).await;
    assert_eq!(status, Status::Ok);
    // The window is open, but a body that carries a password is judged by it.
    let (status, body) = post(
        &app.client,
        "/auth/sessions/end-others",
        json!({"password": ""}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity, "{body}");
    assert_eq!(body["errors"]["password"], json!(["required"]), "{body}");
    // Without the field, the window lets it through.
    let (status, body) = post(&app.client, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");
}

#[rocket::async_test]
async fn a_passkey_answer_to_no_challenge_counts_nothing_against_the_owners_second_factor() {
    let app = spawn_app().await;
    app.create_user(ADA, PASSWORD).await;
    let (status, _) = sign_in(&app.client, true).await;
    assert_eq!(status, Status::Ok);
    let (secret, at) = crate::second_step::enrol(&app.client).await;
    // A copy of the remember-me cookie, recalled elsewhere, answers a
    // passkey challenge that was never issued (passkeys are off here), more
    // often than the second factor's limit.
    let thief = recalled(&app, &app.client, |f| f).await;
    for _ in 0..8 {
        let (status, body) = post(&thief, "/auth/confirm", json!({"credential": {}})).await;
        assert_eq!(status, Status::UnprocessableEntity);
        assert_eq!(body, json!({"message": "passkey_failed"}));
    }
    // The owner signs in in another browser: her right code is taken.
    let owner = browser_with(&app, |f| f).await;
    let (status, body) = sign_in(&owner, false).await;
    assert_eq!(body, json!({"message": "two_factor_required"}), "{status}");
    let next = crate::two_factor::code(&secret, at + 30);
    let (status, body) = post(&owner, "/auth/two-factor-challenge", json!({"code": next})).await;
    assert_eq!(status, Status::Ok, "{body}");
}
