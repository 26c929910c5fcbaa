//! What operators' tooling sees: the probes an orchestrator polls
//! (`/healthz` while the process serves, `/readyz` while the database
//! answers with current migrations; neither sets a cookie), and the
//! `X-Request-Id` every response carries.

use rocket::http::{Header, Status};
use serde_json::json;

use crate::helpers::{json, spawn_app};

#[rocket::async_test]
async fn healthz_answers_ok_and_sets_no_cookie() {
    let app = spawn_app().await;
    let response = app
        .client
        .get("/healthz")
        .header(Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(response.headers().get("Set-Cookie").count(), 0);
    assert_eq!(json(response).await, json!({"status": "ok"}));
}

#[rocket::async_test]
async fn readyz_is_ready_with_current_migrations_and_says_why_not_without() {
    let app = spawn_app().await;
    let ready = app.get_json("/readyz").await;
    assert_eq!(ready.status(), Status::Ok);
    assert_eq!(ready.headers().get("Set-Cookie").count(), 0);
    assert_eq!(json(ready).await, json!({"status": "ready"}));

    // The newest migration is taken back: this build expects it.
    app.execute(app.db.query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT v FROM \
         (SELECT MAX(version) AS v FROM _sqlx_migrations) newest)",
    ))
    .await;
    let behind = app.get_json("/readyz").await;
    assert_eq!(behind.status(), Status::ServiceUnavailable);
    let body = json(behind).await;
    assert_eq!(body["status"], "unavailable", "{body}");
    let reason = body["checks"]["database"].as_str().expect("a reason");
    assert!(reason.starts_with("migrations are behind"), "{reason}");
    assert!(!reason.contains("://"), "no URL: {reason}");
    // The liveness probe asks no database.
    assert_eq!(app.get_json("/healthz").await.status(), Status::Ok);
}

#[rocket::async_test]
async fn every_response_carries_a_request_id_kept_only_when_it_fits() {
    let app = spawn_app().await;
    let with_id = |id: &str| {
        app.client
            .get("/login")
            .header(Header::new("X-Request-Id", id.to_owned()))
            .dispatch()
    };
    let kept = with_id("edge-7f3a.b_2").await;
    assert_eq!(
        kept.headers().get_one("X-Request-Id"),
        Some("edge-7f3a.b_2")
    );
    drop(kept);
    // Spaces, 65 characters, a control character: replaced, never echoed.
    let long = "a".repeat(65);
    for unfit in ["two words", long.as_str(), "bell\u{7}"] {
        let answer = with_id(unfit).await;
        let id = answer
            .headers()
            .get_one("X-Request-Id")
            .expect("an id")
            .to_owned();
        assert_ne!(id, unfit);
        assert!(
            (1..=64).contains(&id.len())
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{id}"
        );
    }
    // Without one, each response gets its own; errors and probes too.
    let first = app.get_json("/healthz").await;
    let second = app.get_json("/odata/Nothing").await;
    let (a, b) = (
        first.headers().get_one("X-Request-Id").map(str::to_owned),
        second.headers().get_one("X-Request-Id").map(str::to_owned),
    );
    assert!(a.is_some() && b.is_some() && a != b, "{a:?} {b:?}");
}
