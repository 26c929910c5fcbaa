//! Hostile input answers in the documented shape: control characters,
//! passwords bcrypt would cut, and the headers every response carries.

use rocket::http::{ContentType, Header, Status};
use serde_json::json;

use crate::helpers::{header, json, spawn_app, spawn_app_with, PASSWORD};

#[rocket::async_test]
async fn control_characters_in_text_fields_are_refused() {
    let app = spawn_app().await;
    let user_id = app
        .create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    let _ = user_id;
    for (path, body, field) in [
        (
            "/auth/login",
            json!({"email": "ada\u{7}@example.org", "password": PASSWORD}),
            "email",
        ),
        (
            "/auth/forgot-password",
            json!({"email": "ada@example.org\u{0}"}),
            "email",
        ),
        (
            "/auth/login",
            json!({"email": "ada@example.org", "password": "pass\u{0}word"}),
            "password",
        ),
    ] {
        let response = app.post_json(path, body).await;
        assert_eq!(response.status(), Status::UnprocessableEntity, "{path}");
        let body = json(response).await;
        assert_eq!(body["message"], "validation_failed");
        assert_eq!(body["errors"][field], json!(["invalid"]), "{path}");
    }
}

#[rocket::async_test]
async fn a_nul_byte_in_the_organisation_name_is_a_validation_error() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let organisations = app.count("organisations").await;
    for name in ["Acme\u{0}Corp", "Acme\tCorp", "Acme\u{1b}[31m"] {
        let response = app
            .post_json(
                "/auth/intents/org-setup",
                json!({"org_name": name, "legal_form": 1, "company_size": "solo",
                       "function": "developer"}),
            )
            .await;
        assert_eq!(response.status(), Status::UnprocessableEntity, "{name:?}");
        let body = json(response).await;
        assert_eq!(body["errors"]["org_name"], json!(["invalid"]), "{name:?}");
    }
    assert_eq!(
        app.count("organisations").await,
        organisations,
        "nothing stored"
    );
}

#[rocket::async_test]
async fn passwords_keep_every_character_but_nul() {
    let app = spawn_app().await;
    let tabbed = "correct\thorse battery staple";
    app.create_user("ada@example.org", tabbed).await;
    assert_eq!(app.login("ada@example.org", tabbed).await, Status::Ok);
}

#[rocket::async_test]
async fn bcrypt_mode_refuses_passwords_it_would_cut() {
    let (app, mailbox) =
        crate::mailbox::spawn_mail_app_with(|f| f.merge(("auth.hash", "bcrypt"))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let link = crate::mailbox::request_link(&app, &mailbox, "ada@example.org").await;
    // Within 128 characters, over bcrypt's 72 bytes (an `ü` is two).
    let fits = "Tq8#mW2!vR5@kL9$xP3^nB7&jH4*cF6(gD1)sA0-zE8+yU2=iO5_eK9~rT3;wQ7:lM4,";
    let fits = format!("{fits}{}", &"uvwxyz"[..72 - fits.len()]);
    assert_eq!(fits.len(), 72);
    let long = format!("{}ü", &fits[..71]);
    assert_eq!((long.len(), long.chars().count()), (73, 72));
    let response = crate::mailbox::reset(&app.client, &link.token, "ada@example.org", &long).await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(response).await["errors"]["password"],
        json!(["max_length"])
    );
    let response = crate::mailbox::reset(&app.client, &link.token, "ada@example.org", &fits).await;
    assert_eq!(response.status(), Status::Ok);
    // A longer password that starts with the same 72 bytes does not sign in.
    assert_eq!(
        app.login("ada@example.org", &format!("{fits}!")).await,
        Status::UnprocessableEntity
    );
    assert_eq!(app.login("ada@example.org", &fits).await, Status::Ok);
}

/// The three headers every response carries.
fn assert_safety_headers(response: &rocket::local::asynchronous::LocalResponse<'_>, what: &str) {
    assert_eq!(
        header(response, "X-Content-Type-Options").as_deref(),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(
        header(response, "Referrer-Policy").as_deref(),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(
        header(response, "X-Frame-Options").as_deref(),
        Some("DENY"),
        "{what}"
    );
}

#[rocket::async_test]
async fn every_response_carries_the_safety_headers() {
    let app = spawn_app().await;
    let cases = [
        ("/", Status::Ok),
        ("/odata/", Status::Unauthorized),
        ("/odata/Users", Status::Unauthorized),
        ("/dashboard", Status::SeeOther),
        ("/no/such/page", Status::NotFound),
        ("/gatehouse/app.js", Status::Ok),
        ("/login", Status::Ok),
    ];
    for (path, status) in cases {
        let response = app.get_html(path).await;
        assert_eq!(response.status(), status, "{path}");
        assert_safety_headers(&response, path);
        assert_eq!(
            header(&response, "Strict-Transport-Security"),
            None,
            "http: {path}"
        );
    }
    let error = app
        .client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body("{not json")
        .dispatch()
        .await;
    assert_eq!(error.status(), Status::BadRequest);
    assert_safety_headers(&error, "a malformed body");
}

#[rocket::async_test]
async fn https_adds_hsts_everywhere() {
    let app = spawn_app_with(|f| f.merge(("base_url", "https://gatehouse.example"))).await;
    for path in ["/", "/odata/", "/login", "/no/such/page"] {
        let response = app
            .client
            .get(path)
            .header(Header::new("Accept", "application/json"))
            .dispatch()
            .await;
        assert_safety_headers(&response, path);
        assert_eq!(
            header(&response, "Strict-Transport-Security").as_deref(),
            Some("max-age=31536000"),
            "{path}"
        );
    }
}
