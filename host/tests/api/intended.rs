//! `url.intended`: guarded pages bounce guests to `/login` and back, and
//! `GET /login?redirect=` accepts only same-site paths.

use rocket::http::Status;
use serde_json::{json, Value};

use crate::helpers::{json, location, spawn_app, TestApp, BASE_URL, PASSWORD};

/// `GET /login?redirect=<raw>`, with `raw` percent-encoded into the query.
async fn open_login_with_redirect(app: &TestApp, raw: &str) {
    let encoded: String = url::form_urlencoded::byte_serialize(raw.as_bytes()).collect();
    let response = app.get_html(&format!("/login?redirect={encoded}")).await;
    assert_eq!(response.status(), Status::Ok, "{raw:?}");
}

/// Every `url.intended` value stored in any session.
async fn stored_intended(app: &TestApp) -> Vec<Value> {
    app.sessions()
        .await
        .into_iter()
        .filter_map(|(_, _, payload)| payload["data"].get("url.intended").cloned())
        .collect()
}

async fn next_target(app: &TestApp) -> Value {
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    let body = json(response).await;
    assert_eq!(body["next"]["kind"], "redirect");
    body["next"]["payload"]["target"].clone()
}

#[rocket::async_test]
async fn guest_browser_on_dashboard_goes_to_login_and_back_after_sign_in() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let response = app.get_html("/dashboard?tab=2").await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    drop(response);
    assert_eq!(
        stored_intended(&app).await,
        vec![json!(format!("{BASE_URL}/dashboard?tab=2"))]
    );
    assert_eq!(
        next_target(&app).await,
        json!(format!("{BASE_URL}/dashboard?tab=2"))
    );
    assert!(
        stored_intended(&app).await.is_empty(),
        "the intended URL is taken once"
    );
}

#[rocket::async_test]
async fn guest_bounced_from_dashboard_lands_on_the_dashboard() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let response = app.get_html("/dashboard").await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    drop(response);
    assert_eq!(
        next_target(&app).await,
        json!(format!("{BASE_URL}/dashboard"))
    );
    assert_eq!(app.get_html("/dashboard").await.status(), Status::Ok);
}

#[rocket::async_test]
async fn json_caller_of_a_guarded_page_gets_401_unauthenticated() {
    let app = spawn_app().await;
    let response = app.get_json("/dashboard").await;
    assert_eq!(response.status(), Status::Unauthorized);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"unauthenticated"}"#
    );
    assert!(
        stored_intended(&app).await.is_empty(),
        "scripts set no intended URL"
    );
}

#[rocket::async_test]
async fn login_redirect_parameter_keeps_a_same_site_path_and_query() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let unencoded = app.get_html("/login?redirect=/reports?x=1").await;
    assert_eq!(unencoded.status(), Status::Ok);
    drop(unencoded);
    let expected = json!(format!("{BASE_URL}/reports?x=1"));
    assert_eq!(stored_intended(&app).await, vec![expected.clone()]);
    open_login_with_redirect(&app, "/reports?x=1").await;
    assert_eq!(stored_intended(&app).await, vec![expected.clone()]);
    assert_eq!(next_target(&app).await, expected);
}

#[rocket::async_test]
async fn login_redirect_parameter_ignores_open_redirects() {
    let app = spawn_app().await;
    for bad in [
        "//evil.example",
        "///evil.example",
        "https://evil.example",
        "http://evil.example/dashboard",
        "/\\evil.example",
        "\\\\evil.example",
        "/%2F%2Fevil.example",
        "/%5Cevil.example",
        "/a b",
        "/a\tb",
        "/a\r\nSet-Cookie: x=1",
        "/%0d%0aSet-Cookie:x=1",
        "/ok\u{7f}",
        " /dashboard",
        "javascript:alert(1)",
        "dashboard",
        "",
    ] {
        open_login_with_redirect(&app, bad).await;
        assert!(stored_intended(&app).await.is_empty(), "{bad:?} was stored");
    }
}

#[rocket::async_test]
async fn ignored_redirect_leaves_the_dashboard_as_next_step() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    open_login_with_redirect(&app, "//evil.example/phish").await;
    assert_eq!(
        next_target(&app).await,
        json!(format!("{BASE_URL}/dashboard"))
    );
}
