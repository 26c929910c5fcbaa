//! Remember-me: a long-lived cookie bound to `users.remember_token`.

use rocket::http::{ContentType, Cookie, Status};
use rocket::local::asynchronous::Client;
use rocket::time::Duration;
use serde_json::json;

use crate::helpers::{set_cookie, spawn_app, spawn_app_with, TestApp, PASSWORD};

const REMEMBER: &str = "gatehouse_remember";

/// Signs in with `remember: true` and answers the remember cookie as sent.
async fn login_remembered(app: &TestApp) -> Cookie<'static> {
    login_remembered_as(app, REMEMBER).await
}

/// [`login_remembered`] when the cookie is named `name`; no cookie of the
/// unprefixed name may come with it.
async fn login_remembered_as(app: &TestApp, name: &str) -> Cookie<'static> {
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD, "remember": true}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    if name != REMEMBER {
        assert!(set_cookie(&response, REMEMBER).is_none(), "only {name}");
    }
    set_cookie(&response, name).expect("remember cookie")
}

/// `GET /dashboard` from a browser holding only `cookie`.
async fn dashboard_with_only(client: &Client, cookie: &Cookie<'static>) -> Status {
    client
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, cookie.value().to_owned()))
        .dispatch()
        .await
        .status()
}

#[rocket::async_test]
async fn remember_me_issues_a_long_lived_http_only_cookie() {
    let app = spawn_app().await;
    let user_id = app.create_user("ada@example.org", PASSWORD).await;
    let cookie = login_remembered(&app).await;
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.path(), Some("/"));
    assert_eq!(cookie.max_age(), Some(Duration::days(30)));
    let token = app
        .remember_token(user_id)
        .await
        .expect("remember_token set");
    assert!(!cookie.value().contains(&token), "the cookie is encrypted");
}

#[rocket::async_test]
async fn remember_me_from_the_sign_in_form_issues_the_cookie() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple&remember=on",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert!(set_cookie(&response, REMEMBER).is_some());
}

#[rocket::async_test]
async fn remember_cookie_is_secure_and_host_prefixed_under_https() {
    let app = spawn_app_with(|f| f.merge(("base_url", "https://gatehouse.example"))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let cookie = login_remembered_as(&app, "__Host-gatehouse_remember").await;
    assert_eq!(cookie.secure(), Some(true));
    assert_eq!(cookie.path(), Some("/"));
    assert_eq!(cookie.domain(), None);
    // It alone signs a browser in again.
    let browser = app
        .another_instance_with(|f| f.merge(("base_url", "https://gatehouse.example")))
        .await;
    let status = browser
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(
            "__Host-gatehouse_remember",
            cookie.value().to_owned(),
        ))
        .dispatch()
        .await
        .status();
    assert_eq!(status, Status::Ok);
}

#[rocket::async_test]
async fn login_without_remember_issues_no_remember_cookie() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert!(set_cookie(&response, REMEMBER).is_none());
}

#[rocket::async_test]
async fn remember_cookie_alone_signs_the_user_in_again() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let cookie = login_remembered(&app).await;
    let browser = app.another_instance().await;
    let response = browser
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, cookie.value().to_owned()))
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let session = set_cookie(&response, "gatehouse_session").expect("a fresh session");
    assert_ne!(Some(session.value().to_owned()), app.session_cookie());
    drop(response);
    assert_eq!(app.count("sessions").await, 2, "one session per browser");
}

#[rocket::async_test]
async fn tampered_remember_cookie_is_ignored() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let cookie = login_remembered(&app).await;
    let mut forged = cookie.value().to_owned();
    let last = if forged.ends_with('A') { "B" } else { "A" };
    forged.replace_range(forged.len() - 1.., last);
    let browser = app.another_instance().await;
    let status = dashboard_with_only(&browser, &Cookie::new(REMEMBER, forged)).await;
    assert_eq!(status, Status::Unauthorized);
}

#[rocket::async_test]
async fn logout_rotates_remember_token_and_voids_the_remember_cookie() {
    let app = spawn_app().await;
    let user_id = app.create_user("ada@example.org", PASSWORD).await;
    let cookie = login_remembered(&app).await;
    let before = app.remember_token(user_id).await;
    let browser = app.another_instance().await;
    assert_eq!(dashboard_with_only(&browser, &cookie).await, Status::Ok);

    let response = app.post_form("/logout", "").await;
    assert_eq!(response.status(), Status::SeeOther);
    let dropped = set_cookie(&response, REMEMBER).expect("remember cookie dropped");
    assert_eq!(dropped.max_age(), Some(Duration::ZERO));
    drop(response);

    assert_ne!(
        app.remember_token(user_id).await,
        before,
        "remember_token rotated"
    );
    assert_eq!(
        dashboard_with_only(&browser, &cookie).await,
        Status::Unauthorized
    );
    assert!(!app.is_signed_in().await);
}
