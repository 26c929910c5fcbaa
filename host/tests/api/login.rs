//! `POST /auth/login` and the sign-in screen: bodies, answers, validation.

use rocket::http::{Header, Status};
use serde_json::json;

use crate::helpers::{json, location, spawn_app, BASE_URL, PASSWORD};

fn credentials_do_not_match() -> serde_json::Value {
    json!({"message": "credentials_do_not_match", "errors": {"email": ["credentials_do_not_match"]}})
}

#[rocket::async_test]
async fn valid_login_answers_login_success_with_the_next_intent() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "Ada@Example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    let body = json(response).await;
    assert_eq!(body["message"], "login_success");
    assert_eq!(body["next"]["kind"], "org_setup");
    assert_eq!(body["next"]["version"], "1");
    assert_eq!(body["next"]["payload"]["personName"], "Test User");
    assert!(app.session_cookie().is_some());
}

#[rocket::async_test]
async fn json_login_of_a_user_with_an_organisation_redirects_to_the_dashboard() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await,
        json!({"message": "login_success", "next": {
            "kind": "redirect", "version": "1",
            "payload": {"target": format!("{BASE_URL}/dashboard")}
        }})
    );
}

#[rocket::async_test]
async fn form_login_goes_to_the_org_setup_screen_for_a_user_without_organisation() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login/org-setup");
    let screen = app.get_html("/login/org-setup").await;
    assert_eq!(screen.status(), Status::Ok);
    assert!(screen
        .into_string()
        .await
        .unwrap()
        .contains("Welcome, Test User."));
}

#[rocket::async_test]
async fn form_login_goes_to_the_redirect_target_for_a_user_with_organisation() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), format!("{BASE_URL}/dashboard"));
    assert!(app.is_signed_in().await);
}

#[rocket::async_test]
async fn wrong_password_is_credentials_do_not_match() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": "wrong password"}),
        )
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await, credentials_do_not_match());
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn unknown_email_is_credentials_do_not_match() {
    let app = spawn_app().await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "nobody@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await, credentials_do_not_match());
}

#[rocket::async_test]
async fn failed_form_login_goes_back_to_the_login_screen_with_the_message() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_form("/auth/login", "email=ada%40example.org&password=nope")
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    let screen = app.get_html("/login").await.into_string().await.unwrap();
    assert!(screen.contains("role=\"alert\""), "{screen}");
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn signed_in_browser_posting_login_goes_to_the_dashboard() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let before = app.session_cookie();
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/dashboard");
    assert_eq!(app.session_cookie(), before, "the session is left alone");
}

#[rocket::async_test]
async fn signed_in_browser_opening_the_login_screen_goes_to_the_dashboard() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    for path in ["/login", "/login?redirect=/reports"] {
        let response = app
            .client
            .get(path)
            .header(Header::new("Accept", "text/html"))
            .dispatch()
            .await;
        assert_eq!(response.status(), Status::SeeOther, "{path}");
        assert_eq!(location(&response), "/dashboard", "{path}");
    }
}

#[rocket::async_test]
async fn an_address_that_only_looks_alike_does_not_sign_in() {
    // MySQL's default collations hold `jose` and `josé` equal; sign-in must not.
    let app = spawn_app().await;
    app.create_user("josé@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "jose@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await, credentials_do_not_match());
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "José@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok, "ASCII letters fold");
    drop(response);
    assert_eq!(app.logout().await, Status::SeeOther);
    // A non-ASCII capital is never folded (Unicode folding can turn one
    // address into another): it is refused as no address.
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "JOSÉ@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(json(response).await["errors"]["email"], json!(["email"]));
}
