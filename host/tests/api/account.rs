//! The signed-in user's account: changing the password, listing and ending
//! sessions, and the account screen.

use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{json, location, spawn_app, TestApp, PASSWORD};
use crate::mailbox::spawn_mail_app;

const EMAIL: &str = "ada@example.org";
const NEW_PASSWORD: &str = "a brand new passphrase for ada";

/// Signs `email` in on `client` (an untracked client: another device) and
/// answers its session cookie.
async fn sign_in_elsewhere(app: &TestApp, client: &Client, email: &str) -> Cookie<'static> {
    let response = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": email, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let cookie = response
        .cookies()
        .get(&app.cookie_name)
        .expect("a session cookie")
        .clone()
        .into_owned();
    Cookie::new(app.cookie_name.clone(), cookie.value().to_owned())
}

/// Whether `cookie` still signs `client` in.
async fn still_signed_in(client: &Client, cookie: &Cookie<'static>) -> bool {
    let response = client
        .get("/dashboard")
        .header(Header::new("Accept", "application/json"))
        .cookie(cookie.clone())
        .dispatch()
        .await;
    match response.status() {
        Status::Ok => true,
        Status::Unauthorized => false,
        other => panic!("unexpected status {other}"),
    }
}

async fn sessions(app: &TestApp) -> Vec<Value> {
    let response = app.get_json("/auth/sessions").await;
    assert_eq!(response.status(), Status::Ok);
    json(response).await["value"]
        .as_array()
        .expect("a value array")
        .clone()
}

#[rocket::async_test]
async fn changing_the_password_ends_other_sessions_keeps_this_one_and_mails_the_user() {
    let (app, mailbox) = spawn_mail_app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    let phone = app.another_instance().await;
    let phone_cookie = sign_in_elsewhere(&app, &phone, EMAIL).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let remember_before = app.remember_token(user_id).await;
    let cookie_before = app.session_cookie();

    let response = app
        .post_json(
            "/auth/password",
            json!({"current_password": PASSWORD, "password": NEW_PASSWORD,
                   "password_confirmation": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(json(response).await, json!({"message": "password_changed"}));

    assert!(app.is_signed_in().await, "this browser stays signed in");
    assert_ne!(
        app.session_cookie(),
        cookie_before,
        "under a new session id"
    );
    assert!(
        !still_signed_in(&phone, &phone_cookie).await,
        "the other device is out"
    );
    assert_ne!(app.remember_token(user_id).await, remember_before);
    assert_eq!(sessions(&app).await.len(), 1);
    let mail = mailbox
        .wait_for_mail(EMAIL, "Your password was changed")
        .await;
    assert!(
        mail.text.contains("/login/forgot-password"),
        "{}",
        mail.text
    );

    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(
        app.login(EMAIL, PASSWORD).await,
        Status::UnprocessableEntity
    );
    assert_eq!(app.login(EMAIL, NEW_PASSWORD).await, Status::Ok);
}

#[rocket::async_test]
async fn a_wrong_current_password_or_a_weak_new_one_changes_nothing() {
    let app = spawn_app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let hash = app.password_hash(user_id).await;

    let wrong = app
        .post_json(
            "/auth/password",
            json!({"current_password": "not it at all", "password": NEW_PASSWORD,
                   "password_confirmation": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(wrong).await,
        json!({"message": "validation_failed",
               "errors": {"current_password": ["current_password"]}})
    );

    let weak = app
        .post_json(
            "/auth/password",
            json!({"current_password": PASSWORD, "password": "password",
                   "password_confirmation": "password"}),
        )
        .await;
    assert_eq!(weak.status(), Status::UnprocessableEntity);
    let body = json(weak).await;
    assert_eq!(body["message"], "validation_failed");
    assert!(body["errors"]["password"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));

    let mismatch = app
        .post_json(
            "/auth/password",
            json!({"current_password": PASSWORD, "password": NEW_PASSWORD,
                   "password_confirmation": "something else entirely"}),
        )
        .await;
    assert_eq!(
        json(mismatch).await["errors"]["password"],
        json!(["confirmed"])
    );
    assert_eq!(app.password_hash(user_id).await, hash);
    assert!(app.is_signed_in().await);
}

#[rocket::async_test]
async fn wrong_current_passwords_count_as_failed_sign_ins() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let attempt = || {
        app.post_json(
            "/auth/password",
            json!({"current_password": "guess", "password": NEW_PASSWORD,
                   "password_confirmation": NEW_PASSWORD}),
        )
    };
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(attempt().await.status());
    }
    assert_eq!(statuses[0], Status::UnprocessableEntity);
    assert_eq!(
        statuses.last(),
        Some(&Status::TooManyRequests),
        "{statuses:?}"
    );
    // The sign-in throttle is the same budget.
    let other = app.another_instance().await;
    let login = other
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": EMAIL, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(login.status(), Status::TooManyRequests);
}

#[rocket::async_test]
async fn sessions_are_listed_by_handles_that_are_not_cookies_and_end_one_by_one() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    app.create_user("eve@example.org", PASSWORD).await;
    let phone = app.another_instance().await;
    let phone_cookie = sign_in_elsewhere(&app, &phone, EMAIL).await;
    let eve_cookie = sign_in_elsewhere(&app, &phone, "eve@example.org").await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);

    let listed = sessions(&app).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    let current: Vec<&Value> = listed.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1);
    let mine = app.session_cookie().expect("cookie");
    for session in &listed {
        let id = session["id"].as_str().expect("id");
        assert_eq!(id.len(), 32);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(id, mine);
        assert_ne!(id, phone_cookie.value());
        assert!(session["last_activity"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')));
        assert!(session.get("ip_address").is_some() && session.get("user_agent").is_some());
    }
    // A handle used as a cookie signs nobody in.
    let handle = listed
        .iter()
        .find(|s| s["current"] == false)
        .and_then(|s| s["id"].as_str())
        .expect("the other session")
        .to_owned();
    let forged = Cookie::new(app.cookie_name.clone(), handle.clone());
    assert!(!still_signed_in(&phone, &forged).await);

    // Eve's session is not Ada's to end.
    let eve_handle = {
        let response = phone
            .get("/auth/sessions")
            .header(Header::new("Accept", "application/json"))
            .cookie(eve_cookie.clone())
            .dispatch()
            .await;
        json(response).await["value"][0]["id"]
            .as_str()
            .expect("eve's handle")
            .to_owned()
    };
    let refused = app
        .post_json(&format!("/auth/sessions/{eve_handle}/end"), json!({}))
        .await;
    assert_eq!(refused.status(), Status::NotFound);
    assert_eq!(json(refused).await, json!({"message": "not_found"}));
    assert!(still_signed_in(&phone, &eve_cookie).await);
    let unknown = app
        .post_json(
            "/auth/sessions/00000000000000000000000000000000/end",
            json!({}),
        )
        .await;
    assert_eq!(unknown.status(), Status::NotFound);

    let ended = app
        .post_json(&format!("/auth/sessions/{handle}/end"), json!({}))
        .await;
    assert_eq!(ended.status(), Status::NoContent);
    assert!(!still_signed_in(&phone, &phone_cookie).await);
    assert!(app.is_signed_in().await);
    assert_eq!(sessions(&app).await.len(), 1);
}

#[rocket::async_test]
async fn ending_all_other_sessions_asks_for_the_password_and_rotates_the_remember_token() {
    let app = spawn_app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    let phone = app.another_instance().await;
    let first = sign_in_elsewhere(&app, &phone, EMAIL).await;
    let second = sign_in_elsewhere(&app, &phone, EMAIL).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let remember_before = app.remember_token(user_id).await;

    let wrong = app
        .post_json("/auth/sessions/end-others", json!({"password": "nope"}))
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(wrong).await["errors"],
        json!({"password": ["current_password"]})
    );
    assert!(still_signed_in(&phone, &first).await);

    let response = app
        .post_json("/auth/sessions/end-others", json!({"password": PASSWORD}))
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await,
        json!({"message": "other_sessions_ended", "ended": 2})
    );
    assert!(!still_signed_in(&phone, &first).await);
    assert!(!still_signed_in(&phone, &second).await);
    assert!(app.is_signed_in().await);
    assert_ne!(app.remember_token(user_id).await, remember_before);
    let names = app.event_names(user_id).await;
    assert_eq!(
        names.iter().filter(|n| *n == "failed").count(),
        1,
        "{names:?}"
    );
    assert_eq!(names.last().map(String::as_str), Some("session_ended"));
}

#[rocket::async_test]
async fn guests_get_401_from_the_account_routes_and_the_sign_in_screen_for_the_account_screen() {
    let app = spawn_app().await;
    let list = app.get_json("/auth/sessions").await;
    assert_eq!(list.status(), Status::Unauthorized);
    for path in ["/auth/password", "/auth/sessions/end-others"] {
        let response = app.post_json(path, json!({"password": PASSWORD})).await;
        assert_eq!(response.status(), Status::Unauthorized, "{path}");
    }
    let screen = app.get_html("/account").await;
    assert_eq!(screen.status(), Status::SeeOther);
    assert!(location(&screen).starts_with("/login"));
}

#[rocket::async_test]
async fn the_account_screen_works_without_javascript() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);

    let page = app.get_html("/account?lang=de").await;
    assert_eq!(page.status(), Status::Ok);
    let html = page.into_string().await.expect("html");
    assert!(html.contains("Ihr Konto"), "{html}");
    assert!(html.contains("dieses Gerät"));
    assert!(html.contains("action=\"/auth/password\""));

    let failed = app
        .post_form(
            "/auth/password",
            &format!(
                "current_password=wrong&password={0}&password_confirmation={0}",
                NEW_PASSWORD.replace(' ', "+")
            ),
        )
        .await;
    assert_eq!(failed.status(), Status::SeeOther);
    assert_eq!(location(&failed), "/account");
    let html = app
        .get_html("/account?lang=en")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(
        html.contains("This is not your current password."),
        "{html}"
    );

    let body = format!(
        "current_password={}&password={}&password_confirmation={}",
        PASSWORD.replace(' ', "+"),
        NEW_PASSWORD.replace(' ', "+"),
        NEW_PASSWORD.replace(' ', "+")
    );
    let changed = app.post_form("/auth/password", &body).await;
    assert_eq!(changed.status(), Status::SeeOther);
    assert_eq!(location(&changed), "/account");
    let html = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(html.contains("Your password was changed."), "{html}");
}
