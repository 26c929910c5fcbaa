//! Two-factor sign-in: enrolment, the two-step sign-in with a TOTP code or a
//! recovery code, replay refusal, the attempt limit, turning it off; codes
//! are computed here from the secret the enrolment answered, by an
//! independent TOTP implementation.

use std::time::{SystemTime, UNIX_EPOCH};

use gatehouse::db::TextColumn;
use rocket::http::Status;
use serde_json::{json, Value};
use totp_rs::{Algorithm, Secret, TOTP};

use crate::helpers::{json, location, spawn_app, TestApp, PASSWORD};

const EMAIL: &str = "ada@example.org";

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// The 6-digit code of `secret` (base32) at Unix time `at`.
pub(crate) fn code(secret: &str, at: u64) -> String {
    let bytes = Secret::Encoded(secret.to_owned())
        .to_bytes()
        .expect("base32 secret");
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, bytes).generate(at)
}

/// Signs in, turns two-factor sign-in on with the code of the current step,
/// signs out; answers the secret and the recovery codes.
async fn enrolled(app: &TestApp) -> (String, Vec<String>) {
    let (secret, codes, _) = enrolled_with(app).await;
    (secret, codes)
}

/// [`enrolled`], also answering the code that confirmed the enrolment.
async fn enrolled_with(app: &TestApp) -> (String, Vec<String>, String) {
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let response = app
        .post_json("/auth/two-factor", json!({"password": PASSWORD}))
        .await;
    assert_eq!(response.status(), Status::Ok);
    let enrolment = json(response).await;
    let secret = enrolment["secret"].as_str().expect("secret").to_owned();
    let first = code(&secret, now());
    let confirmed = app
        .post_json("/auth/two-factor/confirm", json!({"code": first}))
        .await;
    assert_eq!(confirmed.status(), Status::Ok);
    let body = json(confirmed).await;
    assert_eq!(body["message"], "two_factor_enabled");
    let codes: Vec<String> = body["recovery_codes"]
        .as_array()
        .expect("codes")
        .iter()
        .map(|c| c.as_str().expect("a code").to_owned())
        .collect();
    assert_eq!(app.logout().await, Status::SeeOther);
    (secret, codes, first)
}

async fn challenge(app: &TestApp, body: Value) -> (Status, Value) {
    let response = app.post_json("/auth/two-factor-challenge", body).await;
    let status = response.status();
    (status, json(response).await)
}

/// Ada's `users.id`.
async fn ada(app: &TestApp) -> i64 {
    let row = app
        .db
        .fetch_optional(
            app.db
                .query("SELECT id FROM users WHERE email = $1")
                .bind(EMAIL),
        )
        .await
        .expect("query")
        .expect("Ada");
    sqlx::Row::try_get(&row, "id").expect("id")
}

fn wrong_code() -> Value {
    json!({"message": "two_factor_failed", "errors": {"code": ["two_factor_failed"]}})
}

#[rocket::async_test]
async fn enrolment_answers_a_secret_its_url_and_a_qr_code_and_is_off_until_confirmed() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let wrong = app
        .post_json("/auth/two-factor", json!({"password": "not mine"}))
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(wrong).await["errors"],
        json!({"password": ["current_password"]})
    );

    let response = app
        .post_json("/auth/two-factor", json!({"password": PASSWORD}))
        .await;
    assert_eq!(response.status(), Status::Ok);
    let enrolment = json(response).await;
    let secret = enrolment["secret"].as_str().expect("secret");
    assert!(secret.len() >= 32, "{secret}");
    let url = enrolment["otpauth_url"].as_str().expect("url");
    assert!(url.starts_with("otpauth://totp/"), "{url}");
    assert!(url.contains(&format!("secret={secret}")), "{url}");
    assert!(enrolment["qr_svg"]
        .as_str()
        .is_some_and(|s| s.contains("<svg")));
    assert!(!enrolment["qr_svg"]
        .as_str()
        .unwrap_or_default()
        .contains("<script"));
    // Stored sealed, never as the secret itself.
    let row = app
        .db
        .fetch_optional(app.db.query("SELECT secret FROM gatehouse_two_factor"))
        .await
        .expect("query")
        .expect("a row");
    let stored = row
        .text("secret")
        .expect("secret column")
        .unwrap_or_default();
    assert!(!stored.contains(secret));

    // Pending: signing in still needs only the password.
    assert_eq!(app.logout().await, Status::SeeOther);
    let response = app
        .post_json("/auth/login", json!({"email": EMAIL, "password": PASSWORD}))
        .await;
    assert_eq!(json(response).await["message"], "login_success");

    let wrong = app
        .post_json("/auth/two-factor/confirm", json!({"code": "000000"}))
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    assert_eq!(json(wrong).await, wrong_code());
}

#[rocket::async_test]
async fn signing_in_takes_the_password_then_a_code_each_accepted_once() {
    let app = spawn_app().await;
    let (secret, _, confirming) = enrolled_with(&app).await;

    let first = app
        .post_json("/auth/login", json!({"email": EMAIL, "password": PASSWORD}))
        .await;
    assert_eq!(first.status(), Status::Ok);
    assert_eq!(json(first).await, json!({"message": "two_factor_required"}));
    assert!(!app.is_signed_in().await, "not signed in before the code");
    let pending_cookie = app.session_cookie();

    assert_eq!(
        challenge(&app, json!({"code": "123456"})).await,
        (Status::UnprocessableEntity, wrong_code())
    );
    // The step confirmed at enrolment is spent; the next one is accepted.
    let (status, _) = challenge(&app, json!({"code": confirming})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    let next = code(&secret, now() + 30);
    let (status, body) = challenge(&app, json!({"code": next})).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["message"], "login_success");
    // The intent loop starts now, as after any sign-in: this user has no
    // organisation yet.
    assert_eq!(body["next"]["kind"], "org_setup");
    assert!(app.is_signed_in().await);
    assert_ne!(app.session_cookie(), pending_cookie, "a new session id");

    // The same code again, in a new sign-in: refused.
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, _) = challenge(&app, json!({"code": next})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn a_recovery_code_signs_in_once_and_a_new_set_voids_the_old() {
    let app = spawn_app().await;
    let (_, codes) = enrolled(&app).await;
    assert_eq!(codes.len(), 10);
    let distinct: std::collections::BTreeSet<&String> = codes.iter().collect();
    assert_eq!(distinct.len(), 10);
    let stored = app.count("gatehouse_recovery_codes").await;
    assert_eq!(stored, 10);

    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, body) = challenge(&app, json!({"recovery_code": codes[0]})).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert!(app.is_signed_in().await);
    assert_eq!(app.logout().await, Status::SeeOther);

    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, body) = challenge(&app, json!({"recovery_code": codes[0]})).await;
    assert_eq!((status, body), (Status::UnprocessableEntity, wrong_code()));
    let (status, _) = challenge(&app, json!({"recovery_code": codes[1].to_uppercase()})).await;
    assert_eq!(status, Status::Ok, "codes are read without regard to case");
    let names = app.event_names(ada(&app).await).await;
    assert_eq!(
        names.iter().filter(|n| *n == "recovery_code_used").count(),
        2
    );
    assert_eq!(
        names.iter().filter(|n| *n == "two_factor_failed").count(),
        1
    );

    let renewed = app
        .post_json(
            "/auth/two-factor/recovery-codes",
            json!({"password": PASSWORD}),
        )
        .await;
    assert_eq!(renewed.status(), Status::Ok);
    let renewed = json(renewed).await;
    assert_eq!(renewed["recovery_codes"].as_array().map(Vec::len), Some(10));
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, _) = challenge(&app, json!({"recovery_code": codes[2]})).await;
    assert_eq!(status, Status::UnprocessableEntity, "the old set is void");
    let fresh = renewed["recovery_codes"][0].as_str().expect("code");
    let (status, _) = challenge(&app, json!({"recovery_code": fresh})).await;
    assert_eq!(status, Status::Ok);
}

#[rocket::async_test]
async fn five_wrong_codes_drop_the_pending_sign_in() {
    let app = spawn_app().await;
    let (secret, _) = enrolled(&app).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(challenge(&app, json!({"code": "000000"})).await.0);
    }
    assert_eq!(statuses[..4], [Status::UnprocessableEntity; 4]);
    assert_eq!(statuses[4], Status::TooManyRequests, "{statuses:?}");
    // The pending sign-in is gone: even the right code does not sign in.
    let (status, body) = challenge(&app, json!({"code": code(&secret, now() + 30)})).await;
    assert_eq!(status, Status::Unauthorized, "{body}");
    assert!(!app.is_signed_in().await);
    // A new sign-in still finds the user's budget spent.
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, body) = challenge(&app, json!({"code": code(&secret, now() + 30)})).await;
    assert_eq!(status, Status::TooManyRequests, "{body}");
    assert!(body["retry_after"].as_u64().is_some());
}

#[rocket::async_test]
async fn a_challenge_without_a_pending_sign_in_is_401() {
    let app = spawn_app().await;
    let (status, body) = challenge(&app, json!({"code": "123456"})).await;
    assert_eq!(status, Status::Unauthorized);
    assert_eq!(body, json!({"message": "unauthenticated"}));
    let guest = app
        .post_json("/auth/two-factor", json!({"password": PASSWORD}))
        .await;
    assert_eq!(guest.status(), Status::Unauthorized);
}

#[rocket::async_test]
async fn turning_it_off_takes_the_password_and_signing_in_needs_only_that_again() {
    let app = spawn_app().await;
    let (secret, _) = enrolled(&app).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let (status, _) = challenge(&app, json!({"code": code(&secret, now() + 30)})).await;
    assert_eq!(status, Status::Ok);

    let wrong = app
        .post_json("/auth/two-factor/disable", json!({"password": "nope"}))
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    let off = app
        .post_json("/auth/two-factor/disable", json!({"password": PASSWORD}))
        .await;
    assert_eq!(off.status(), Status::Ok);
    assert_eq!(json(off).await, json!({"message": "two_factor_disabled"}));
    assert_eq!(app.count("gatehouse_two_factor").await, 0);
    assert_eq!(app.count("gatehouse_recovery_codes").await, 0);
    let names = app.event_names(ada(&app).await).await;
    let two_factor: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with("two_factor"))
        .collect();
    assert_eq!(two_factor, ["two_factor_enabled", "two_factor_disabled"]);

    assert_eq!(app.logout().await, Status::SeeOther);
    let response = app
        .post_json("/auth/login", json!({"email": EMAIL, "password": PASSWORD}))
        .await;
    assert_eq!(json(response).await["message"], "login_success");
}

#[rocket::async_test]
async fn the_two_step_sign_in_works_without_javascript() {
    let app = spawn_app().await;
    let (secret, _) = enrolled(&app).await;
    let form = format!(
        "email={}&password={}",
        EMAIL.replace('@', "%40"),
        PASSWORD.replace(' ', "+")
    );
    let posted = app.post_form("/auth/login", &form).await;
    assert_eq!(posted.status(), Status::SeeOther);
    assert_eq!(location(&posted), "/login/two-factor");

    let screen = app.get_html("/login/two-factor?lang=de").await;
    assert_eq!(screen.status(), Status::Ok);
    let html = screen.into_string().await.expect("html");
    assert!(html.contains("action=\"/auth/two-factor-challenge\""));
    assert!(html.contains("Anmeldung in zwei Schritten"), "{html}");

    let wrong = app
        .post_form("/auth/two-factor-challenge", "code=000000")
        .await;
    assert_eq!(wrong.status(), Status::SeeOther);
    assert_eq!(location(&wrong), "/login/two-factor");
    let html = app
        .get_html("/login/two-factor?lang=en")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(html.contains("This code is not valid."), "{html}");

    let right = app
        .post_form(
            "/auth/two-factor-challenge",
            &format!("code={}", code(&secret, now() + 30)),
        )
        .await;
    assert_eq!(right.status(), Status::SeeOther);
    assert_eq!(location(&right), "/login/org-setup");
    assert!(app.is_signed_in().await);
    // No pending sign-in any more: the screen sends a guest back to /login.
    assert_eq!(app.logout().await, Status::SeeOther);
    let screen = app.get_html("/login/two-factor").await;
    assert_eq!(screen.status(), Status::SeeOther);
    assert_eq!(location(&screen), "/login");
}

#[rocket::async_test]
async fn the_account_screen_enrols_without_javascript_and_shows_the_codes_once() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let enable = app
        .post_form(
            "/auth/two-factor",
            &format!("password={}", PASSWORD.replace(' ', "+")),
        )
        .await;
    assert_eq!(
        enable.status(),
        Status::Ok,
        "the key is shown by this answer alone"
    );
    let html = enable.into_string().await.expect("html");
    assert!(html.contains("<svg"), "the QR code is shown");
    let secret = crate::second_step::shown_key(&html).expect("the key is shown");

    let confirmed = app
        .post_form(
            "/auth/two-factor/confirm",
            &format!("code={}", code(&secret, now())),
        )
        .await;
    assert_eq!(confirmed.status(), Status::Ok, "rendered in place");
    let html = confirmed.into_string().await.expect("html");
    assert_eq!(html.matches("<li><code>").count(), 10, "{html}");
    assert!(html.contains("Two-factor sign-in is on"));
    let again = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(!again.contains("<li><code>"), "the codes are shown once");
    let stored: Vec<String> = {
        let rows = app
            .db
            .fetch_all(app.db.query("SELECT payload FROM sessions"))
            .await
            .expect("sessions");
        rows.iter()
            .map(|r| r.text("payload").ok().flatten().unwrap_or_default())
            .collect()
    };
    assert!(stored.iter().all(|p| !p.contains("recovery")), "{stored:?}");
}
