//! The device authorization grant (RFC 8628) as a script and a person use
//! it: the script asks for codes and polls, the person answers the user
//! code on `/device`, and the script receives a token that reads what was
//! asked, once. Errors are RFC 6749's JSON.

use std::time::Duration;

use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{location, spawn_app_with, TestApp, BASE_URL, PASSWORD};
use crate::odata_fixture::odata_uri;
use crate::second_step::{events, post};

const EMAIL: &str = "ada@example.org";
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The reference host with the command line as its one device client.
pub(crate) async fn app() -> TestApp {
    spawn_app_with(|f| f.merge(("auth.device_clients", json!({"cli": "Command line"})))).await
}

/// The host, Ada signed in on its client, and a script's client (no
/// cookies) beside her.
async fn signed_in() -> (TestApp, Client) {
    let app = app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    let script_client = app.another_instance().await;
    (app, script_client)
}

/// Ada's reply to `user_code` (`approve` or `deny`) as JSON.
async fn reply_to(app: &TestApp, how: &str, user_code: &str) -> (Status, Value) {
    post(
        &app.client,
        &format!("/auth/device/{how}"),
        json!({"user_code": user_code}),
    )
    .await
}

/// A form post of `body` to `path` as a script sends it: its status, its
/// JSON and its `Cache-Control`.
async fn script(client: &Client, path: &str, body: &str) -> (Status, Value, Option<String>) {
    let response = client
        .post(path.to_owned())
        .header(ContentType::Form)
        .body(body)
        .dispatch()
        .await;
    let status = response.status();
    let cache = response
        .headers()
        .get_one("Cache-Control")
        .map(str::to_owned);
    let body = response.into_string().await.unwrap_or_default();
    let json = serde_json::from_str(&body).unwrap_or_else(|_| panic!("JSON: {body}"));
    (status, json, cache)
}

/// `POST /auth/device/code` for the command line, asking for `scope`.
async fn codes(client: &Client, scope: &str) -> Value {
    let body = format!(
        "client_id=cli&scope={}",
        url::form_urlencoded::byte_serialize(scope.as_bytes()).collect::<String>()
    );
    let (status, answer, _) = script(client, "/auth/device/code", &body).await;
    assert_eq!(status, Status::Ok, "{answer}");
    answer
}

/// One poll of `POST /auth/device/token` with `device_code`.
async fn poll(client: &Client, device_code: &str) -> (Status, Value) {
    let body = format!(
        "grant_type={}&device_code={device_code}&client_id=cli",
        url::form_urlencoded::byte_serialize(GRANT.as_bytes()).collect::<String>()
    );
    let (status, answer, cache) = script(client, "/auth/device/token", &body).await;
    assert_eq!(cache.as_deref(), Some("no-store"), "{answer}");
    (status, answer)
}

/// Asserts an RFC 6749 error answer with `code`.
fn assert_oauth_error((status, answer): (Status, Value), code: &str) {
    assert_eq!(status, Status::BadRequest, "{code}: {answer}");
    assert_eq!(answer["error"], json!(code), "{answer}");
    assert!(answer["error_description"].is_string(), "{answer}");
}

/// `GET /device?user_code=…` as Ada's browser: the page.
async fn screen(app: &TestApp, user_code: &str) -> String {
    let path = format!("/device?user_code={user_code}");
    let response = app.get_html(&path).await;
    assert_eq!(response.status(), Status::Ok);
    response.into_string().await.unwrap()
}

#[rocket::async_test]
async fn a_script_gets_a_token_once_after_the_person_allows_its_code() {
    let app = app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    // The script needs no session: another client without cookies.
    let script_client = app.another_instance().await;
    let asked = codes(&script_client, "odata:read:Users").await;
    let user_code = asked["user_code"].as_str().expect("a user code");
    let device_code = asked["device_code"].as_str().expect("a device code");
    assert_eq!(user_code.len(), 9, "{asked}");
    assert_eq!(&user_code[4..5], "-", "XXXX-XXXX: {asked}");
    assert!(
        user_code
            .chars()
            .filter(|c| *c != '-')
            .all(|c| "BCDFGHJKLMNPQRSTVWXZ".contains(c)),
        "no look-alikes: {user_code}"
    );
    assert_eq!(
        asked["verification_uri"],
        json!(format!("{BASE_URL}/device"))
    );
    assert_eq!(
        asked["verification_uri_complete"],
        json!(format!("{BASE_URL}/device?user_code={user_code}"))
    );
    assert_eq!(asked["expires_in"], json!(600));
    assert_eq!(asked["interval"], json!(5));

    assert_oauth_error(
        poll(&script_client, device_code).await,
        "authorization_pending",
    );
    assert_oauth_error(poll(&script_client, device_code).await, "slow_down");

    assert_eq!(app.login(EMAIL, PASSWORD).await, Status::Ok);
    // Typed in lower case, without the dash: the same code.
    let page = screen(&app, &user_code.replace('-', "").to_lowercase()).await;
    assert!(page.contains("Command line"), "{page}");
    assert!(page.contains("Users"), "the set asked for: {page}");
    assert!(page.contains("/auth/device/approve"), "{page}");
    assert!(page.contains(user_code), "the code, as the device shows it");
    // Looking does not allow: the script still waits.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_oauth_error(
        poll(&script_client, device_code).await,
        "authorization_pending",
    );

    let (status, answer) = reply_to(&app, "approve", user_code).await;
    assert_eq!(
        (status, answer),
        (Status::Ok, json!({"message": "device_approved"}))
    );
    let (status, token) = poll(&script_client, device_code).await;
    assert_eq!(status, Status::Ok, "{token}");
    assert_eq!(token["token_type"], json!("Bearer"));
    assert_eq!(token["expires_in"], json!(30 * 86_400));
    assert_eq!(token["scope"], json!("odata:read:Users"));
    let access = token["access_token"].as_str().expect("a token");

    let bearer = format!("Bearer {access}");
    let read = |set: &'static str| {
        let bearer = bearer.clone();
        let app = &app;
        async move {
            app.get_uri(&odata_uri(set, &[]), &[("Authorization", bearer.as_str())])
                .await
        }
    };
    read("Users").await.ok();
    read("Organisations")
        .await
        .assert_error(Status::Forbidden, None);
    // Redeemed once: a second poll gets nothing.
    assert_oauth_error(poll(&script_client, device_code).await, "invalid_grant");
    // The person sees it among their tokens, under the client's label.
    let listed = app.get_json("/auth/tokens").await;
    let listed: Value = serde_json::from_str(&listed.into_string().await.unwrap()).unwrap();
    assert_eq!(listed["value"][0]["name"], json!("Command line"));
    assert_eq!(listed["value"][0]["sets"], json!(["Users"]));
    assert_eq!(events(&app, user_id, "token_created").await.len(), 1);
    // The person's SecurityEvents set lists it, with the token's label.
    let uri = odata_uri("SecurityEvents", &[("$filter", "event eq 'token_created'")]);
    let listed = app.get_uri(&uri, &[]).await;
    listed.ok();
    let detail = listed.value()[0]["detail"].to_string();
    assert!(detail.contains("Command line"), "{detail}");
    // The code is answered: the screen no longer offers it.
    let page = screen(&app, user_code).await;
    assert!(!page.contains("/auth/device/approve"), "{page}");
    assert!(
        page.contains("wrong, already answered or expired"),
        "{page}"
    );
}

#[rocket::async_test]
async fn a_denied_an_expired_and_a_foreign_code_get_rfc_8628_errors() {
    let (app, script_client) = signed_in().await;

    let denied = codes(&script_client, "odata:read").await;
    let user_code = denied["user_code"].as_str().unwrap();
    let (status, answer) = reply_to(&app, "deny", user_code).await;
    assert_eq!(
        (status, answer),
        (Status::Ok, json!({"message": "device_denied"}))
    );
    let device_code = denied["device_code"].as_str().unwrap();
    assert_oauth_error(poll(&script_client, device_code).await, "access_denied");
    // A denied code cannot be allowed afterwards.
    let (status, answer) = reply_to(&app, "approve", user_code).await;
    assert_eq!(status, Status::UnprocessableEntity, "{answer}");
    assert_eq!(answer["message"], json!("device_code_unknown"));

    let expired = codes(&script_client, "odata:read").await;
    app.db
        .execute(
            app.db
                .query("UPDATE gatehouse_device_codes SET expires_at = 1"),
        )
        .await
        .unwrap();
    let device_code = expired["device_code"].as_str().unwrap();
    assert_oauth_error(poll(&script_client, device_code).await, "expired_token");
    let user_code = expired["user_code"].as_str().unwrap();
    let (status, answer) = reply_to(&app, "approve", user_code).await;
    assert_eq!(status, Status::UnprocessableEntity, "{answer}");

    assert_oauth_error(poll(&script_client, "no-such-code").await, "invalid_grant");
    let grant = url::form_urlencoded::byte_serialize(GRANT.as_bytes()).collect::<String>();
    for (path, body, code) in [
        (
            "/auth/device/code",
            "client_id=evil".to_owned(),
            "invalid_client",
        ),
        (
            "/auth/device/code",
            "scope=odata%3Aread".to_owned(),
            "invalid_request",
        ),
        (
            "/auth/device/code",
            "client_id=cli&scope=admin".to_owned(),
            "invalid_scope",
        ),
        (
            "/auth/device/code",
            "client_id=cli&scope=odata%3Aread%3ANope".to_owned(),
            "invalid_scope",
        ),
        (
            "/auth/device/code",
            "client_id=cli&client_id=cli".to_owned(),
            "invalid_request",
        ),
        (
            "/auth/device/token",
            format!("grant_type={grant}&device_code=x&client_id=evil"),
            "invalid_client",
        ),
        (
            "/auth/device/token",
            "grant_type=password&device_code=x&client_id=cli".to_owned(),
            "unsupported_grant_type",
        ),
        (
            "/auth/device/token",
            format!("grant_type={grant}&client_id=cli"),
            "invalid_request",
        ),
    ] {
        let (status, answer, _) = script(&script_client, path, &body).await;
        assert_oauth_error((status, answer), code);
    }
    let response = script_client
        .post("/auth/device/token")
        .header(ContentType::JSON)
        .body(json!({"grant_type": GRANT, "device_code": "x", "client_id": "cli"}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::BadRequest);
    let answer: Value = serde_json::from_str(&response.into_string().await.unwrap()).unwrap();
    assert_eq!(
        answer["error"],
        json!("invalid_request"),
        "only forms: {answer}"
    );
    let oversized = format!("client_id=cli&scope={}", "a".repeat(64 * 1024));
    let (status, answer, _) = script(&script_client, "/auth/device/code", &oversized).await;
    assert_oauth_error((status, answer.clone()), "invalid_request");
    assert_eq!(answer["error_description"], json!("the body is too large"));
}

#[rocket::async_test]
async fn wrong_user_codes_are_throttled_per_address_then_right_ones_too() {
    let (app, script_client) = signed_in().await;
    let asked = codes(&script_client, "odata:read").await;
    for wrong in [
        "BCDF-GHJK",
        "not a code",
        "ZZZZ-ZZZZ",
        "BBBB-BBBB",
        "CCCC-CCCC",
    ] {
        let (status, answer) = reply_to(&app, "approve", wrong).await;
        assert_eq!(status, Status::UnprocessableEntity, "{wrong}: {answer}");
        assert_eq!(answer["message"], json!("device_code_unknown"));
    }
    let right = asked["user_code"].as_str().unwrap();
    let (status, answer) = reply_to(&app, "approve", right).await;
    assert_eq!(status, Status::TooManyRequests, "{answer}");
    assert_eq!(answer["message"], json!("auth_throttle"));
    let page = screen(&app, right).await;
    assert!(
        !page.contains("/auth/device/approve"),
        "the screen is throttled too"
    );
    assert_oauth_error(
        poll(&script_client, asked["device_code"].as_str().unwrap()).await,
        "authorization_pending",
    );
}

#[rocket::async_test]
async fn a_guest_signs_in_first_then_allows_the_code_with_a_form() {
    let app = app().await;
    app.create_user_with_organisation(EMAIL, PASSWORD).await;
    let script_client = app.another_instance().await;
    let asked = codes(&script_client, "odata:read").await;
    let user_code = asked["user_code"].as_str().unwrap().to_owned();
    let complete = asked["verification_uri_complete"].as_str().unwrap();
    let path = complete.strip_prefix(BASE_URL).unwrap();

    let response = app.get_html(path).await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    let body = format!("email={}&password={PASSWORD}", EMAIL.replace('@', "%40"));
    let response = app.post_form("/auth/login", &body).await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(
        location(&response),
        complete,
        "back to the code after signing in"
    );

    let page = screen(&app, &user_code).await;
    assert!(
        page.contains("It asks to read all data you can read."),
        "{page}"
    );
    let response = app
        .post_form("/auth/device/approve", &format!("user_code={user_code}"))
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/device");
    let page = app.get_html("/device").await.into_string().await.unwrap();
    assert!(page.contains("The device is allowed."), "{page}");
    let (status, token) = poll(&script_client, asked["device_code"].as_str().unwrap()).await;
    assert_eq!(status, Status::Ok, "{token}");
    assert_eq!(token["scope"], json!("odata:read"));

    // A wrong code by form comes back to the screen, at its field, in German.
    let response = app
        .client
        .post("/auth/device/approve")
        .header(ContentType::Form)
        .header(Header::new("Accept", "text/html"))
        .header(Header::new("Accept-Language", "de"))
        .body("user_code=BCDF-GHJK")
        .dispatch()
        .await;
    assert_eq!(location(&response), "/device");
    let page = app
        .client
        .get("/device")
        .header(Header::new("Accept", "text/html"))
        .header(Header::new("Accept-Language", "de"))
        .dispatch()
        .await
        .into_string()
        .await
        .unwrap();
    assert!(page.contains("Dieser Code ist falsch"), "{page}");
    assert!(
        page.contains("value=\"BCDF-GHJK\""),
        "the code as typed: {page}"
    );
}
