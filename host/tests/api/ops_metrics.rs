//! `GET /metrics` as an operator's Prometheus reads it: counters that move
//! exactly with what happened, served to loopback, to `ops.metrics_allow`
//! and to `ops.metrics_token` only, and no label holding an address.

use std::net::SocketAddr;

use rocket::http::{Header, Status};

use crate::helpers::{spawn_app, spawn_app_with, TestApp, PASSWORD};

/// `/metrics` asked from `from`, with `authorization` when given.
async fn scrape(app: &TestApp, from: &str, authorization: Option<&str>) -> (Status, String) {
    let remote: SocketAddr = from.parse().expect("a socket address");
    let mut request = app.client.get("/metrics").remote(remote);
    if let Some(value) = authorization {
        request = request.header(Header::new("Authorization", value.to_owned()));
    }
    let response = request.dispatch().await;
    let status = response.status();
    (status, response.into_string().await.unwrap_or_default())
}

/// The value of the sample `name{labels}` on `page` (labels as the page
/// writes them, sorted by name), if present.
fn sample(page: &str, series: &str) -> Option<f64> {
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[rocket::async_test]
async fn sign_ins_move_the_counters_exactly() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let (_, before) = scrape(&app, "127.0.0.1:9000", None).await;
    let failed = r#"gatehouse_auth_events_total{event="failed",method="password"}"#;
    let login = r#"gatehouse_auth_events_total{event="login",method="password"}"#;
    let base = |s| sample(&before, s).unwrap_or(0.0);
    let (failed_before, login_before) = (base(failed), base(login));
    for _ in 0..3 {
        let status = app.login("ada@example.org", "not the password").await;
        assert_eq!(status, Status::UnprocessableEntity);
    }
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);

    let (status, page) = scrape(&app, "127.0.0.1:9000", None).await;
    assert_eq!(status, Status::Ok);
    assert_eq!(sample(&page, failed), Some(failed_before + 3.0), "{page}");
    assert_eq!(sample(&page, login), Some(login_before + 1.0), "{page}");
    let answered =
        r#"gatehouse_http_requests_total{method="POST",route="/auth/login",status="422"}"#;
    assert_eq!(sample(&page, answered), Some(3.0), "{page}");
    assert_eq!(
        sample(&page, "gatehouse_sessions_active"),
        Some(1.0),
        "{page}"
    );
    assert_eq!(sample(&page, "gatehouse_ready"), Some(1.0), "{page}");
    assert_eq!(
        sample(&page, "gatehouse_db_pool_waiting"),
        Some(0.0),
        "{page}"
    );
    assert_eq!(
        sample(&page, "gatehouse_db_failovers_total"),
        Some(0.0),
        "{page}"
    );
    assert!(page.contains("gatehouse_build_info{version="), "{page}");
    assert!(
        page.contains("gatehouse_password_hash_duration_seconds_count"),
        "{page}"
    );
}

#[rocket::async_test]
async fn every_refused_attempt_is_counted_by_its_throttle() {
    let app = spawn_app_with(|f| f.merge(("auth.ip_throttle_attempts", 2))).await;
    let per_address = r#"gatehouse_throttle_refusals_total{kind="login-ip"}"#;
    // Two failures from one address spend its budget; the next attempts,
    // each for another account, are refused by the address's budget: the
    // first from the database, the second from this instance's memory.
    for (n, status) in [
        (1, Status::UnprocessableEntity),
        (2, Status::UnprocessableEntity),
        (3, Status::TooManyRequests),
        (4, Status::TooManyRequests),
    ] {
        let email = format!("nobody{n}@example.org");
        assert_eq!(app.login(&email, "not the password").await, status, "{n}");
    }
    let (_, page) = scrape(&app, "127.0.0.1:9000", None).await;
    assert_eq!(sample(&page, per_address), Some(2.0), "{page}");
    let per_account = r#"gatehouse_throttle_refusals_total{kind="login"}"#;
    assert_eq!(sample(&page, per_account), None, "{page}");
}

#[rocket::async_test]
async fn only_loopback_allowed_networks_and_the_token_read_the_metrics() {
    let app = spawn_app_with(|figment| {
        figment
            .merge(("ops.metrics_allow", vec!["10.20.0.0/16"]))
            .merge(("ops.metrics_token", "scrape-secret-0123456789"))
    })
    .await;
    assert_eq!(scrape(&app, "127.0.0.1:9000", None).await.0, Status::Ok);
    assert_eq!(scrape(&app, "[::1]:9000", None).await.0, Status::Ok);
    assert_eq!(scrape(&app, "10.20.3.4:9000", None).await.0, Status::Ok);
    let outside = "203.0.113.9:9000";
    let (status, body) = scrape(&app, outside, None).await;
    assert_eq!(status, Status::NotFound);
    assert!(!body.contains("gatehouse_"), "{body}");
    let wrong = scrape(&app, outside, Some("Bearer scrape-secret-012345678")).await;
    assert_eq!(wrong.0, Status::NotFound);
    let right = scrape(&app, outside, Some("Bearer scrape-secret-0123456789")).await;
    assert_eq!(right.0, Status::Ok);

    let off = spawn_app_with(|figment| figment.merge(("ops.metrics", false))).await;
    assert_eq!(
        scrape(&off, "127.0.0.1:9000", None).await.0,
        Status::NotFound
    );
}

#[rocket::async_test]
async fn no_label_holds_an_address_a_path_or_a_set_name_a_caller_made_up() {
    let app = spawn_app().await;
    app.create_user("o'brien+tag@例え.example", PASSWORD).await;
    for email in [
        "o'brien+tag@例え.example",
        "x\"}@evil.example",
        "203.0.113.77@ip.example",
    ] {
        let _ = app
            .client
            .post("/auth/login")
            .remote("198.51.100.23:4000".parse().expect("an address"))
            .header(rocket::http::ContentType::JSON)
            .body(serde_json::json!({"email": email, "password": "wrong"}).to_string())
            .dispatch()
            .await;
    }
    let _ = app.client.get("/odata/Made%20Up('x')/y").dispatch().await;
    let _ = app.client.get("/no/such/path/4711").dispatch().await;
    let _ = app.get_html("/login?redirect=/dashboard").await;
    let (status, page) = scrape(&app, "127.0.0.1:9000", None).await;
    assert_eq!(status, Status::Ok);
    for leak in [
        "@",
        "198.51.100",
        "203.0.113",
        "Made",
        "4711",
        "evil",
        "brien",
    ] {
        assert!(!page.contains(leak), "{leak} is on the page:\n{page}");
    }
    assert!(page.contains(r#"route="unmatched""#), "{page}");
    let screen = r#"gatehouse_http_requests_total{method="GET",route="/login",status="200"}"#;
    assert_eq!(
        sample(&page, screen),
        Some(1.0),
        "the path's template alone: {page}"
    );
    assert!(!page.contains("redirect"), "no query template: {page}");
}

#[rocket::async_test]
async fn a_scraper_asking_for_openmetrics_gets_openmetrics() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(
        app.login("ada@example.org", "not it").await,
        Status::UnprocessableEntity
    );
    let response = app
        .client
        .get("/metrics")
        .remote("127.0.0.1:9000".parse().expect("an address"))
        .header(Header::new(
            "Accept",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        ))
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let content_type = response.content_type().expect("a content type");
    assert_eq!(
        content_type.to_string(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    let page = response.into_string().await.unwrap_or_default();
    assert!(page.ends_with("# EOF\n"), "{page}");
    assert!(
        page.contains("# TYPE gatehouse_auth_events counter"),
        "{page}"
    );
    let failed = r#"gatehouse_auth_events_total{event="failed",method="password"}"#;
    assert_eq!(sample(&page, failed), Some(1.0), "{page}");

    let (_, plain) = scrape(&app, "127.0.0.1:9000", None).await;
    assert!(!plain.contains("# EOF"), "{plain}");
    assert!(
        plain.contains("# TYPE gatehouse_auth_events_total counter"),
        "{plain}"
    );
}
