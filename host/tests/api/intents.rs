//! `POST /auth/intents/<kind>` on the reference host.

use rocket::http::Status;
use serde_json::{json, Map, Value};
use sqlx::Row;

use crate::helpers::{json, location, spawn_app, TestApp, BASE_URL, PASSWORD};

fn valid() -> Value {
    json!({
        "org_name": "Acme Ltd",
        "legal_form": 1,
        "company_size": "small",
        "function": "tech_lead",
        "billing_email": "billing@acme.example",
        "marketing_consent": true
    })
}

/// `valid()` with `changes` applied (`null` removes the field).
fn with(changes: Value) -> Value {
    let mut body = valid();
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            body.as_object_mut().unwrap().remove(key);
        } else {
            body[key] = value.clone();
        }
    }
    body
}

async fn signed_in() -> TestApp {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    app
}

async fn validation_errors(app: &TestApp, body: Value) -> Value {
    let response = app.post_json("/auth/intents/org-setup", body).await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    let body = json(response).await;
    assert_eq!(body["message"], "validation_failed");
    body["errors"].clone()
}

#[rocket::async_test]
async fn org_setup_as_guest_is_401_unauthenticated() {
    let app = spawn_app().await;
    let response = app.post_json("/auth/intents/org-setup", valid()).await;
    assert_eq!(response.status(), Status::Unauthorized);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"unauthenticated"}"#
    );
    assert_eq!(app.count("organisations").await, 0);
}

#[rocket::async_test]
async fn valid_org_setup_creates_the_organisation_and_answers_the_next_intent() {
    let app = signed_in().await;
    let response = app.post_json("/auth/intents/org-setup", valid()).await;
    assert_eq!(response.status(), Status::Ok);
    let body = json(response).await;
    let mut keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["errors", "next", "next_step", "status"]);
    assert_eq!(body["status"], "satisfied");
    assert_eq!(body["next_step"], Value::Null);
    assert_eq!(body["errors"], Value::Null);
    assert_eq!(
        body["next"],
        json!({"kind": "redirect", "version": "1",
               "payload": {"target": format!("{BASE_URL}/dashboard")}})
    );
    let row = app
        .db
        .fetch_optional(app.db.query(
            "SELECT name, legal_form, company_size, function, billing_email FROM organisations",
        ))
        .await
        .unwrap()
        .expect("organisations row");
    assert_eq!(row.try_get::<String, _>("name").unwrap(), "Acme Ltd");
    assert_eq!(row.try_get::<i64, _>("legal_form").unwrap(), 1);
    assert_eq!(row.try_get::<String, _>("company_size").unwrap(), "small");
    assert_eq!(row.try_get::<String, _>("function").unwrap(), "tech_lead");
    assert_eq!(
        row.try_get::<String, _>("billing_email").unwrap(),
        "billing@acme.example"
    );
    assert_eq!(app.count("organisation_user").await, 1);
}

#[rocket::async_test]
async fn handler_refusal_answers_200_with_errors_and_no_next() {
    let app = signed_in().await;
    assert_eq!(
        app.post_json("/auth/intents/org-setup", valid())
            .await
            .status(),
        Status::Ok
    );
    let response = app.post_json("/auth/intents/org-setup", valid()).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await,
        json!({"status": "error", "next_step": null, "next": null,
               "errors": {"org_name": ["already_member"]}})
    );
    assert_eq!(app.count("organisations").await, 1);
}

#[rocket::async_test]
async fn org_setup_form_post_goes_to_the_next_screen() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple",
        )
        .await;
    assert_eq!(location(&response), "/login/org-setup");
    drop(response);
    let response = app
        .post_form(
            "/auth/intents/org-setup",
            "org_name=Acme&legal_form=2&company_size=solo&function=other&billing_email=&marketing_consent=on",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), format!("{BASE_URL}/dashboard"));
    assert_eq!(app.count("organisations").await, 1);
}

#[rocket::async_test]
async fn invalid_org_setup_form_goes_back_to_its_screen_with_the_errors() {
    let app = signed_in().await;
    let response = app
        .post_form("/auth/intents/org-setup", "org_name=&legal_form=7")
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login/org-setup");
    drop(response);
    let screen = app
        .get_html("/login/org-setup")
        .await
        .into_string()
        .await
        .unwrap();
    assert!(screen.contains("id=\"org_name-error\""), "{screen}");
    assert!(screen.contains("id=\"legal_form-error\""), "{screen}");
    assert_eq!(app.count("organisations").await, 0);
}

#[rocket::async_test]
async fn org_setup_missing_fields_are_required() {
    let app = signed_in().await;
    assert_eq!(
        validation_errors(&app, json!({})).await,
        json!({"org_name": ["required"], "legal_form": ["required"],
               "company_size": ["required"], "function": ["required"]})
    );
    let blank = with(json!({"org_name": "   ", "billing_email": "", "marketing_consent": null}));
    assert_eq!(
        validation_errors(&app, blank).await,
        json!({"org_name": ["required"]})
    );
    assert_eq!(
        app.count("organisations").await,
        0,
        "the handler is not called"
    );
}

#[rocket::async_test]
async fn org_setup_rejects_values_outside_the_allowed_sets() {
    let app = signed_in().await;
    let cases = [
        (json!({"legal_form": 3}), "legal_form", "in"),
        (json!({"legal_form": "1"}), "legal_form", "in"),
        (json!({"legal_form": 1.5}), "legal_form", "in"),
        (json!({"company_size": "huge"}), "company_size", "in"),
        (json!({"company_size": "Small"}), "company_size", "in"),
        (json!({"function": "ceo"}), "function", "in"),
        (
            json!({"billing_email": "not-an-address"}),
            "billing_email",
            "email",
        ),
        (
            json!({"marketing_consent": "yes"}),
            "marketing_consent",
            "in",
        ),
        (
            json!({"org_name": "x".repeat(256)}),
            "org_name",
            "max_length",
        ),
    ];
    for (change, field, code) in cases {
        let mut expected = Map::new();
        expected.insert(field.to_owned(), json!([code]));
        assert_eq!(
            validation_errors(&app, with(change.clone())).await,
            Value::Object(expected),
            "{change}"
        );
    }
    assert_eq!(app.count("organisations").await, 0);
    let longest = with(json!({"org_name": "x".repeat(255)}));
    assert_eq!(
        app.post_json("/auth/intents/org-setup", longest)
            .await
            .status(),
        Status::Ok
    );
}

#[rocket::async_test]
async fn unknown_intent_kind_is_404_unknown_intent() {
    let app = signed_in().await;
    for kind in ["other", "org_setup", "redirect"] {
        let response = app
            .post_json(&format!("/auth/intents/{kind}"), valid())
            .await;
        assert_eq!(response.status(), Status::NotFound, "{kind}");
        assert_eq!(
            response.into_string().await.unwrap(),
            r#"{"message":"unknown_intent"}"#
        );
    }
}

#[rocket::async_test]
async fn unknown_intent_kind_is_404_before_the_caller_is_checked() {
    let app = spawn_app().await;
    let guest = app.post_json("/auth/intents/other", valid()).await;
    assert_eq!(guest.status(), Status::NotFound);
    assert_eq!(
        guest.into_string().await.unwrap(),
        r#"{"message":"unknown_intent"}"#
    );
    let cross_site = app
        .client
        .post("/auth/intents/redirect")
        .header(rocket::http::ContentType::JSON)
        .header(rocket::http::Header::new("Sec-Fetch-Site", "cross-site"))
        .body(valid().to_string())
        .dispatch()
        .await;
    assert_eq!(cross_site.status(), Status::NotFound);
}

#[rocket::async_test]
async fn every_screen_tells_the_script_which_screen_follows_each_intent_kind() {
    let app = spawn_app().await;
    let page = app.get_html("/login").await.into_string().await.unwrap();
    let element = "<script type=\"application/json\" id=\"gatehouse-intents\">";
    let start = page.find(element).expect("the intents element") + element.len();
    let end = start + page[start..].find("</script>").unwrap();
    let screens: Value = serde_json::from_str(&page[start..end]).unwrap();
    assert_eq!(
        screens,
        json!({"org_setup": "/login/org-setup", "password_change": "/login/change-password"})
    );
}

#[rocket::async_test]
async fn org_setup_malformed_json_is_400() {
    let app = signed_in().await;
    let response = app
        .client
        .post("/auth/intents/org-setup")
        .header(rocket::http::ContentType::JSON)
        .body("{\"org_name\":")
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::BadRequest);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"malformed_body"}"#
    );
}
