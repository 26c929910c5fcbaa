//! Cross-origin refusal of state changes, and the screens' security headers.

use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::LocalResponse;
use serde_json::json;

use crate::helpers::{header, spawn_app, TestApp, BASE_URL, PASSWORD};

/// `POST path` (JSON sign-in body) with the given browser headers.
async fn post_with<'c>(
    app: &'c TestApp,
    path: &str,
    headers: &[(&str, &str)],
) -> LocalResponse<'c> {
    let mut request = app
        .client
        .post(path.to_owned())
        .header(ContentType::JSON)
        .body(json!({"email": "ada@example.org", "password": PASSWORD}).to_string());
    for (name, value) in headers {
        request = request.header(Header::new(name.to_string(), value.to_string()));
    }
    request.dispatch().await
}

#[rocket::async_test]
async fn cross_site_login_post_is_forbidden() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    for site in ["cross-site", "same-site"] {
        let response = post_with(&app, "/auth/login", &[("Sec-Fetch-Site", site)]).await;
        assert_eq!(response.status(), Status::Forbidden, "{site}");
    }
    let sneaky = [("Sec-Fetch-Site", "cross-site"), ("Origin", BASE_URL)];
    assert_eq!(
        post_with(&app, "/auth/login", &sneaky).await.status(),
        Status::Forbidden
    );
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn cross_site_logout_post_is_forbidden() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let response = post_with(&app, "/logout", &[("Sec-Fetch-Site", "cross-site")]).await;
    assert_eq!(response.status(), Status::Forbidden);
    drop(response);
    let response = post_with(&app, "/logout", &[("Origin", "https://evil.example")]).await;
    assert_eq!(response.status(), Status::Forbidden);
    drop(response);
    assert!(app.is_signed_in().await, "the session survived");
    assert_eq!(app.count("sessions").await, 1);
}

#[rocket::async_test]
async fn foreign_origin_without_fetch_metadata_is_forbidden() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    for origin in [
        "https://evil.example",
        "null",
        "http://127.0.0.1:8001",
        "https://127.0.0.1:8000",
    ] {
        let response = post_with(&app, "/auth/login", &[("Origin", origin)]).await;
        assert_eq!(response.status(), Status::Forbidden, "{origin}");
    }
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn same_origin_requests_and_scripts_may_sign_in_and_out() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let cases: [&[(&str, &str)]; 5] = [
        &[("Sec-Fetch-Site", "same-origin")],
        &[("Sec-Fetch-Site", "none")],
        &[("Origin", BASE_URL)],
        &[("Sec-Fetch-Site", "same-origin"), ("Origin", BASE_URL)],
        &[],
    ];
    for headers in cases {
        let response = post_with(&app, "/auth/login", headers).await;
        assert_eq!(response.status(), Status::Ok, "login with {headers:?}");
        drop(response);
        let response = post_with(&app, "/logout", headers).await;
        assert_eq!(
            response.status(),
            Status::SeeOther,
            "logout with {headers:?}"
        );
        drop(response);
        assert!(!app.is_signed_in().await);
    }
}

#[rocket::async_test]
async fn login_screen_sends_security_headers() {
    let app = spawn_app().await;
    let response = app.get_html("/login").await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        header(&response, "Referrer-Policy").as_deref(),
        Some("no-referrer")
    );
    assert_eq!(
        header(&response, "X-Content-Type-Options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(
        header(&response, "Cache-Control").as_deref(),
        Some("no-store")
    );
    let csp = header(&response, "Content-Security-Policy").expect("CSP");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
}

#[rocket::async_test]
async fn auth_answers_are_not_cached() {
    let app = spawn_app().await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "x@example.org", "password": "y"}),
        )
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(
        header(&response, "Cache-Control").as_deref(),
        Some("no-store")
    );
    assert_eq!(
        header(&response, "Referrer-Policy").as_deref(),
        Some("no-referrer")
    );
}
