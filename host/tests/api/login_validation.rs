//! `POST /auth/login`: field validation, and bodies that cannot be read.

use rocket::http::{ContentType, Status};
use serde_json::json;

use crate::helpers::{json, location, spawn_app, spawn_app_with, PASSWORD};

#[rocket::async_test]
async fn missing_login_fields_are_required() {
    let app = spawn_app().await;
    let response = app.post_json("/auth/login", json!({})).await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(response).await,
        json!({"message": "validation_failed",
               "errors": {"email": ["required"], "password": ["required"]}})
    );
    let response = app
        .post_json("/auth/login", json!({"email": "", "password": PASSWORD}))
        .await;
    assert_eq!(
        json(response).await,
        json!({"message": "validation_failed", "errors": {"email": ["required"]}})
    );
    let response = app
        .post_form("/auth/login", "email=ada%40example.org")
        .await;
    assert_eq!(
        response.status(),
        Status::SeeOther,
        "a form post goes back to its screen"
    );
    assert_eq!(location(&response), "/login");
}

#[rocket::async_test]
async fn malformed_email_fails_validation_with_email_code() {
    let app = spawn_app().await;
    for bad in ["not-an-address", "ada@", "@example.org", "ada@example"] {
        let response = app
            .post_json("/auth/login", json!({"email": bad, "password": PASSWORD}))
            .await;
        assert_eq!(response.status(), Status::UnprocessableEntity, "{bad}");
        assert_eq!(
            json(response).await,
            json!({"message": "validation_failed", "errors": {"email": ["email"]}}),
            "{bad}"
        );
    }
}

#[rocket::async_test]
async fn overlong_password_and_non_boolean_remember_fail_validation() {
    let app = spawn_app().await;
    let long = "a".repeat(129);
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": long}),
        )
        .await;
    assert_eq!(
        json(response).await,
        json!({"message": "validation_failed", "errors": {"password": ["max_length"]}})
    );
    let body = json!({"email": "ada@example.org", "password": PASSWORD, "remember": "yes"});
    let response = app.post_json("/auth/login", body).await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(response).await,
        json!({"message": "validation_failed", "errors": {"remember": ["in"]}})
    );
}

#[rocket::async_test]
async fn malformed_json_is_400_malformed_body() {
    let app = spawn_app().await;
    for body in [r#"{"email": "ada@example.org", "#, "[1, 2]", "not json", ""] {
        let response = app
            .client
            .post("/auth/login")
            .header(ContentType::JSON)
            .body(body)
            .dispatch()
            .await;
        assert_eq!(response.status(), Status::BadRequest, "{body:?}");
        assert_eq!(
            response.into_string().await.unwrap(),
            r#"{"message":"malformed_body"}"#
        );
    }
    let not_utf8 = app
        .client
        .post("/auth/login")
        .header(ContentType::Form)
        .body(b"email=\xff\xfe&password=x".as_slice())
        .dispatch()
        .await;
    assert_eq!(
        not_utf8.status(),
        Status::BadRequest,
        "a form body that is not UTF-8"
    );
    let no_type = app
        .client
        .post("/auth/login")
        .body("email=a")
        .dispatch()
        .await;
    assert_eq!(
        no_type.status(),
        Status::BadRequest,
        "neither JSON nor a form"
    );
}

#[rocket::async_test]
async fn body_over_the_configured_limit_is_413() {
    let app = spawn_app_with(|f| f.merge(("limits.json", 128)).merge(("limits.form", 128))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let padding = "x".repeat(400);
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD, "pad": padding}),
        )
        .await;
    assert_eq!(response.status(), Status::PayloadTooLarge);
    let response = app
        .client
        .post("/auth/login")
        .header(ContentType::Form)
        .body(format!("email=ada%40example.org&password=x&pad={padding}"))
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::PayloadTooLarge);
    assert!(!app.is_signed_in().await);
    assert_eq!(
        app.login("ada@example.org", PASSWORD).await,
        Status::Ok,
        "small bodies pass"
    );
}
