//! Passkeys as a client sees them, with webauthn-authenticator-rs' soft
//! passkey as the authenticator: adding one on the account, signing in with
//! it alone, answering the second step with it, and every way a credential
//! is refused (another origin or relying party, a replayed challenge, a
//! counter gone backwards, another user's or a removed credential).
//!
//! The soft passkey keeps no resident credentials and sends no user handle:
//! the test hands it the credential to use (as a browser holding that one
//! passkey would pick it) and adds to its answer the user handle the
//! registration named, as an authenticator keeping the credential does.

use rocket::figment::Figment;
use rocket::http::Status;
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};
use url::Url;
use webauthn_authenticator_rs::prelude::WebauthnAuthenticator;
use webauthn_authenticator_rs::softpasskey::SoftPasskey;
use webauthn_rs_proto::{
    CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential,
    RequestChallengeResponse,
};

use crate::helpers::{spawn_app_with, TestApp, PASSWORD};
use crate::second_step::{browser_with, enrol, events, post};

const ADA: &str = "ada@example.org";
const BOB: &str = "bob@example.org";
/// The host's `base_url` in these tests: a host name, so passkeys are on.
const BASE_URL: &str = "http://localhost:8000";

/// `figment` with passkeys on.
pub(crate) fn passkeys_on(figment: Figment) -> Figment {
    figment.merge(("base_url", BASE_URL))
}

async fn spawn() -> TestApp {
    spawn_app_with(passkeys_on).await
}

/// A browser's authenticator: the soft passkey, user verification claimed.
pub(crate) struct Authenticator {
    key: SoftPasskey,
    origin: Url,
    /// The user handle (base64url) of the last registration, which a
    /// passkey's assertion carries.
    user_handle: Option<Value>,
}

impl Authenticator {
    pub(crate) fn new() -> Self {
        Self::at(BASE_URL)
    }

    fn at(origin: &str) -> Self {
        Self {
            key: SoftPasskey::new(true),
            origin: Url::parse(origin).expect("origin"),
            user_handle: None,
        }
    }

    /// Answers creation options as the browser would, or `None` when the
    /// authenticator refuses them.
    pub(crate) fn create(&mut self, options: &Value) -> Option<Value> {
        let user_handle = options["publicKey"]["user"]["id"].clone();
        let mut options: CreationChallengeResponse =
            serde_json::from_value(options.clone()).expect("creation options");
        // The soft passkey cannot keep the credential: it answers as an
        // authenticator without resident keys does.
        if let Some(selection) = options.public_key.authenticator_selection.as_mut() {
            selection.require_resident_key = false;
            selection.resident_key = None;
        }
        let answer: RegisterPublicKeyCredential = self
            .key
            .do_registration(self.origin.clone(), options)
            .ok()?;
        self.user_handle = Some(user_handle);
        Some(serde_json::to_value(answer).expect("credential JSON"))
    }

    /// Signs request options with the credential `credential_id` (base64url).
    pub(crate) fn get(&mut self, options: &Value, credential_id: &str) -> Option<Value> {
        let mut options = options.clone();
        options["publicKey"]["allowCredentials"] =
            json!([{"type": "public-key", "id": credential_id}]);
        self.sign(&options)
    }

    /// Signs request options as they are.
    fn sign(&mut self, options: &Value) -> Option<Value> {
        let options: RequestChallengeResponse =
            serde_json::from_value(options.clone()).expect("request options");
        let answer: PublicKeyCredential = self
            .key
            .do_authentication(self.origin.clone(), options)
            .ok()?;
        let mut answer = serde_json::to_value(answer).expect("assertion JSON");
        if let Some(handle) = &self.user_handle {
            answer["response"]["userHandle"] = handle.clone();
        }
        Some(answer)
    }
}

/// Signs `client` in with the password.
async fn sign_in(client: &Client, email: &str) -> (Status, Value) {
    post(
        client,
        "/auth/login",
        json!({"email": email, "password": PASSWORD}),
    )
    .await
}

/// Adds a passkey named `name` from the signed-in `client`; answers its
/// credential id (base64url) and its id.
pub(crate) async fn add_passkey(
    client: &Client,
    key: &mut Authenticator,
    name: &str,
) -> (String, i64) {
    let (status, options) = post(
        client,
        "/auth/passkeys/options",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{options}");
    let credential = key.create(&options).expect("the authenticator answers");
    let (status, added) = post(
        client,
        "/auth/passkeys",
        json!({"name": name, "credential": credential}),
    )
    .await;
    assert_eq!(status, Status::Created, "{added}");
    assert_eq!(added["name"], name);
    let id = added["id"].as_i64().expect("id");
    (
        credential["id"].as_str().expect("credential id").to_owned(),
        id,
    )
}

/// Options for a passwordless sign-in, and the authenticator's answer with
/// `credential_id`.
async fn answer(client: &Client, key: &mut Authenticator, credential_id: &str) -> Value {
    let (status, options) = post(client, "/auth/passkey/options", Value::Null).await;
    assert_eq!(status, Status::Ok, "{options}");
    key.get(&options, credential_id)
        .expect("the authenticator signs")
}

/// A refused passkey: 422 `passkey_failed`.
fn assert_refused(status: Status, body: &Value) {
    assert_eq!(
        (status, &body["message"]),
        (Status::UnprocessableEntity, &json!("passkey_failed")),
        "{body}"
    );
}

/// A passwordless sign-in with `credential_id`: options, then the answer.
async fn passkey_sign_in(
    client: &Client,
    key: &mut Authenticator,
    credential_id: &str,
) -> (Status, Value) {
    let (status, options) = post(client, "/auth/passkey/options", Value::Null).await;
    assert_eq!(status, Status::Ok, "{options}");
    let credential = key
        .get(&options, credential_id)
        .expect("the authenticator signs");
    post(
        client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await
}

/// `credential` (an assertion the test spoiled) is refused and signs
/// nobody in; then a sound assertion of the same key signs in.
async fn refused_then_signs_in(
    client: &Client,
    credential: Value,
    key: &mut Authenticator,
    credential_id: &str,
) {
    let (status, body) = post(
        client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await;
    assert_refused(status, &body);
    assert!(!signed_in(client).await);
    let (status, body) = passkey_sign_in(client, key, credential_id).await;
    assert_eq!(status, Status::Ok, "{body}");
}

async fn signed_in(client: &Client) -> bool {
    let response = client
        .get("/dashboard")
        .header(rocket::http::Header::new("Accept", "application/json"))
        .dispatch()
        .await;
    response.status() == Status::Ok
}

async fn sign_out(client: &Client) {
    let response = client.post("/logout").dispatch().await;
    assert!(response.status().class().is_redirection() || response.status() == Status::Ok);
    assert!(!signed_in(client).await);
}

/// A user signed in on a browser of their own, with one passkey added.
async fn user_with_passkey(app: &TestApp, email: &str) -> (Client, Authenticator, String, i64) {
    app.create_user(email, PASSWORD).await;
    let client = browser_with(app, passkeys_on).await;
    assert_eq!(sign_in(&client, email).await.0, Status::Ok);
    let mut key = Authenticator::new();
    let (credential_id, id) = add_passkey(&client, &mut key, "Laptop").await;
    (client, key, credential_id, id)
}

#[rocket::async_test]
async fn a_passkey_added_on_the_account_signs_in_alone_as_a_completed_sign_in() {
    let app = spawn().await;
    let (client, mut key, credential_id, id) = user_with_passkey(&app, ADA).await;
    let user_id = app.user_id(ADA).await;
    let (status, list) = post_get(&client, "/auth/passkeys").await;
    assert_eq!(status, Status::Ok);
    let listed = &list["value"].as_array().expect("value")[..];
    assert_eq!(listed.len(), 1, "{list}");
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["name"], "Laptop");
    assert!(listed[0]["created_at"].is_string());
    assert!(listed[0]["last_used_at"].is_null());
    assert_eq!(
        events(&app, user_id, "passkey_added").await,
        [Some(format!("passkey {id} \"Laptop\""))]
    );
    sign_out(&client).await;
    app.join_organisation(user_id).await;
    // Headed for a page of the host: sent to sign in, and back after it.
    let headed = client
        .get("/dashboard?tab=2")
        .header(rocket::http::Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    assert_eq!(headed.status(), Status::SeeOther);
    let before = session_cookie(&client);

    let (status, body) = passkey_sign_in(&client, &mut key, &credential_id).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["message"], "login_success");
    assert_eq!(
        body["next"]["kind"], "redirect",
        "the intent loop answers: {body}"
    );
    assert_eq!(
        body["next"]["payload"]["target"],
        format!("{BASE_URL}/dashboard?tab=2")
    );
    assert!(signed_in(&client).await);
    assert_ne!(session_cookie(&client), before, "a new session id");
    let logins = events(&app, user_id, "login").await;
    assert_eq!(
        logins.last(),
        Some(&Some("passkey".to_owned())),
        "{logins:?}"
    );
    let (_, list) = post_get(&client, "/auth/passkeys").await;
    assert!(list["value"][0]["last_used_at"].is_string(), "{list}");
}

#[rocket::async_test]
async fn a_passkey_sign_in_remembers_the_browser_when_asked() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    sign_out(&client).await;
    let credential = answer(&client, &mut key, &credential_id).await;
    let (status, body) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": credential, "remember": true}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    assert!(client.cookies().get_private("gatehouse_remember").is_some());
    let logins = events(&app, app.user_id(ADA).await, "login").await;
    assert_eq!(logins.last(), Some(&Some("passkey, remember".to_owned())));
}

#[rocket::async_test]
async fn passkeys_are_off_and_their_routes_404_when_base_url_is_an_ip_address() {
    let app = spawn_app_with(|f| f).await; // base_url http://127.0.0.1:8000
    app.create_user(ADA, PASSWORD).await;
    let (status, _) = post(&app.client, "/auth/passkey/options", Value::Null).await;
    assert_eq!(status, Status::NotFound);
    let (status, _) = post(
        &app.client,
        "/auth/passkey/login",
        json!({"credential": {}}),
    )
    .await;
    assert_eq!(status, Status::NotFound);
    let login = app.get_html("/login").await.into_string().await.unwrap();
    assert!(!login.contains("webauthn"), "no passkey control: {login}");
    assert_eq!(sign_in(&app.client, ADA).await.0, Status::Ok);
    let (status, _) = post_get(&app.client, "/auth/passkeys").await;
    assert_eq!(status, Status::NotFound);
    let (status, _) = post(
        &app.client,
        "/auth/passkeys/options",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::NotFound);
}

#[rocket::async_test]
async fn adding_a_passkey_asks_for_the_password_and_counts_a_wrong_one() {
    let app = spawn().await;
    let user_id = app.create_user(ADA, PASSWORD).await;
    let client = browser_with(&app, passkeys_on).await;
    sign_in(&client, ADA).await;
    let (status, body) = post(
        &client,
        "/auth/passkeys/options",
        json!({"password": "not the password at all"}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body["errors"]["password"][0], "current_password");
    assert_eq!(events(&app, user_id, "failed").await.len(), 1);
    // No challenge was issued: an answer made up without one is refused.
    let mut key = Authenticator::new();
    let (_, options) = post(
        &client,
        "/auth/passkeys/options",
        json!({"password": PASSWORD}),
    )
    .await;
    let credential = key.create(&options).unwrap();
    let (status, body) = post(&client, "/auth/passkeys", json!({"credential": credential})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body["errors"]["name"][0], "required", "{body}");
    let long = "x".repeat(65);
    let (status, body) = post(
        &client,
        "/auth/passkeys",
        json!({"name": long, "credential": credential}),
    )
    .await;
    assert_eq!(
        (status, &body["errors"]["name"][0]),
        (Status::UnprocessableEntity, &json!("max_length"))
    );
    let (status, body) = post(
        &client,
        "/auth/passkeys",
        json!({"name": "Laptop", "credential": "not an object"}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body["errors"]["credential"][0], "object");
    // The challenge is still there (validation spent nothing): it registers once.
    let (status, _) = post(
        &client,
        "/auth/passkeys",
        json!({"name": "Laptop", "credential": credential}),
    )
    .await;
    assert_eq!(status, Status::Created);
    let (status, body) = post(
        &client,
        "/auth/passkeys",
        json!({"name": "Laptop again", "credential": credential}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity, "a used challenge");
    assert_eq!(body["message"], "passkey_failed");
    assert_eq!(app.count("gatehouse_passkeys").await, 1);
}

#[rocket::async_test]
async fn a_credential_made_for_another_origin_is_refused() {
    let app = spawn().await;
    let (client, key, credential_id, _) = user_with_passkey(&app, ADA).await;
    sign_out(&client).await;
    // The same key, used by a page of another origin (another port).
    let mut elsewhere = Authenticator {
        origin: Url::parse("http://localhost:9999").unwrap(),
        ..key
    };
    let (status, body) = passkey_sign_in(&client, &mut elsewhere, &credential_id).await;
    assert_refused(status, &body);
    assert!(!signed_in(&client).await);
}

#[rocket::async_test]
async fn a_credential_signed_for_another_relying_party_is_refused() {
    // The relying party is `login.localhost`; a page of it may ask the
    // authenticator for its parent domain's credentials instead.
    let base = "https://login.localhost";
    let app = spawn_app_with(|f| f.merge(("base_url", base))).await;
    app.create_user(ADA, PASSWORD).await;
    let client = browser_with(&app, |f| f.merge(("base_url", base))).await;
    sign_in(&client, ADA).await;
    let mut key = Authenticator::at(base);
    let (credential_id, _) = add_passkey(&client, &mut key, "Laptop").await;
    sign_out(&client).await;
    let (_, mut options) = post(&client, "/auth/passkey/options", Value::Null).await;
    assert_eq!(options["publicKey"]["rpId"], "login.localhost");
    options["publicKey"]["rpId"] = json!("localhost");
    let credential = key
        .get(&options, &credential_id)
        .expect("signed for localhost");
    // Signed for the relying party itself, the same key signs in.
    refused_then_signs_in(&client, credential, &mut key, &credential_id).await;
}

#[rocket::async_test]
async fn a_challenge_verifies_once() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    sign_out(&client).await;
    let credential = answer(&client, &mut key, &credential_id).await;
    let (status, _) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    sign_out(&client).await;
    // The same answer again: its challenge is spent.
    let (status, body) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await;
    assert_refused(status, &body);
    // Nor does it answer a fresh challenge.
    let (status, _) = post(&client, "/auth/passkey/options", Value::Null).await;
    assert_eq!(status, Status::Ok);
    let (status, _) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert!(!signed_in(&client).await);
}

#[rocket::async_test]
async fn one_answer_sent_many_times_at_once_signs_in_once() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    let user_id = app.user_id(ADA).await;
    sign_out(&client).await;
    let credential = answer(&client, &mut key, &credential_id).await;
    // Eight instances, each handed the browser's cookies at once.
    let cookies: Vec<rocket::http::Cookie<'static>> = client.cookies().iter().cloned().collect();
    let mut instances = Vec::new();
    for _ in 0..8 {
        instances.push(app.another_instance_with(passkeys_on).await);
    }
    let answers = futures::future::join_all(instances.iter().map(|instance| {
        let body = json!({"credential": credential}).to_string();
        let cookies = cookies.clone();
        async move {
            instance
                .post("/auth/passkey/login")
                .header(rocket::http::ContentType::JSON)
                .cookies(cookies)
                .body(body)
                .dispatch()
                .await
                .status()
        }
    }))
    .await;
    let signed_in = answers.iter().filter(|s| **s == Status::Ok).count();
    assert_eq!(signed_in, 1, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|s| [Status::Ok, Status::UnprocessableEntity].contains(s)),
        "{answers:?}"
    );
    let logins = events(&app, user_id, "login").await;
    assert_eq!(
        logins
            .iter()
            .filter(|d| d.as_deref() == Some("passkey"))
            .count(),
        1,
        "{logins:?}"
    );
}

#[rocket::async_test]
async fn a_counter_that_goes_backwards_is_refused_and_recorded() {
    let app = spawn().await;
    let (client, mut key, credential_id, id) = user_with_passkey(&app, ADA).await;
    let user_id = app.user_id(ADA).await;
    sign_out(&client).await;
    // The genuine authenticator has signed 100 times since: this one, a
    // clone, is behind it.
    let row = app
        .db
        .fetch_optional(
            app.db
                .query("SELECT passkey FROM gatehouse_passkeys WHERE id = $1")
                .bind(id),
        )
        .await
        .unwrap()
        .expect("the passkey row");
    let mut record: Value = serde_json::from_str(
        &gatehouse::db::TextColumn::text(&row, "passkey")
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    record["cred"]["counter"] = json!(100);
    app.db
        .execute(
            app.db
                .query("UPDATE gatehouse_passkeys SET passkey = $1 WHERE id = $2")
                .bind(record.to_string())
                .bind(id),
        )
        .await
        .unwrap();
    let (status, body) = passkey_sign_in(&client, &mut key, &credential_id).await;
    assert_refused(status, &body);
    assert!(!signed_in(&client).await);
    assert_eq!(
        events(&app, user_id, "passkey_refused").await,
        [Some(format!("passkey {id}: counter went backwards"))]
    );
}

#[rocket::async_test]
async fn a_passwordless_assertion_without_a_user_handle_is_refused() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    sign_out(&client).await;
    let mut credential = answer(&client, &mut key, &credential_id).await;
    let handle = credential["response"]
        .as_object_mut()
        .expect("a response")
        .remove("userHandle");
    assert!(handle.is_some(), "the authenticator named the user");
    // Naming its user, the same passkey signs in.
    refused_then_signs_in(&client, credential, &mut key, &credential_id).await;
}

#[rocket::async_test]
async fn a_passwordless_assertion_naming_another_user_is_refused() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    let (_, bobs_key, _, _) = user_with_passkey(&app, BOB).await;
    sign_out(&client).await;
    let mut credential = answer(&client, &mut key, &credential_id).await;
    let bobs_handle = bobs_key.user_handle.clone().expect("Bob's user handle");
    assert_ne!(credential["response"]["userHandle"], bobs_handle);
    credential["response"]["userHandle"] = bobs_handle;
    let (status, body) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": credential}),
    )
    .await;
    assert_refused(status, &body);
    assert!(!signed_in(&client).await);
}

#[rocket::async_test]
async fn a_removed_passkey_no_longer_signs_in() {
    let app = spawn().await;
    let (client, mut key, credential_id, id) = user_with_passkey(&app, ADA).await;
    let user_id = app.user_id(ADA).await;
    let (_, _, _, bobs) = user_with_passkey(&app, BOB).await;
    // Not without the password, and never another user's.
    let (status, _) = post(
        &client,
        &format!("/auth/passkeys/{id}/delete"),
        json!({"password": "not the password at all"}),
    )
    .await;
    assert_eq!(status, Status::UnprocessableEntity);
    let (status, _) = post(
        &client,
        &format!("/auth/passkeys/{bobs}/delete"),
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::NotFound);
    // A phone the passkey signed in is signed out with it.
    let phone = browser_with(&app, passkeys_on).await;
    let (status, body) = passkey_sign_in(&phone, &mut key, &credential_id).await;
    assert_eq!(status, Status::Ok, "{body}");
    assert!(signed_in(&phone).await);
    let (status, _) = post(
        &client,
        &format!("/auth/passkeys/{id}/delete"),
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::NoContent);
    assert!(
        !signed_in(&phone).await,
        "the session the passkey signed in ended"
    );
    assert!(
        signed_in(&client).await,
        "the caller proved the password just now"
    );
    let (_, list) = post_get(&client, "/auth/passkeys").await;
    assert_eq!(list["value"], json!([]));
    assert_eq!(
        events(&app, user_id, "passkey_removed").await,
        [Some(format!("passkey {id}"))]
    );
    assert_eq!(app.count("gatehouse_passkeys").await, 1, "Bob's stays");
    sign_out(&client).await;
    let (status, body) = passkey_sign_in(&client, &mut key, &credential_id).await;
    assert_refused(status, &body);
    assert!(!signed_in(&client).await);
}

#[rocket::async_test]
async fn a_passkey_answers_the_second_step_and_only_the_pending_users_own() {
    let app = spawn().await;
    let (ada, mut adas_key, _, _) = user_with_passkey(&app, ADA).await;
    let ada_id = app.user_id(ADA).await;
    enrol(&ada).await;
    sign_out(&ada).await;
    let (bob, mut bobs_key, bobs_credential, _) = user_with_passkey(&app, BOB).await;
    sign_out(&bob).await;

    // Ada's password, then Bob's passkey for her second step: refused, counted.
    let (status, body) = sign_in(&ada, ADA).await;
    assert_eq!(
        (status, &body["message"]),
        (Status::Ok, &json!("two_factor_required"))
    );
    let (status, options) = post(&ada, "/auth/two-factor/passkey-options", Value::Null).await;
    assert_eq!(status, Status::Ok, "{options}");
    let allowed = options["publicKey"]["allowCredentials"].as_array().unwrap();
    assert_eq!(allowed.len(), 1, "only Ada's own: {options}");
    assert_ne!(allowed[0]["id"], json!(bobs_credential));
    let bobs_answer = bobs_key.get(&options, &bobs_credential).unwrap();
    let (status, body) = post(
        &ada,
        "/auth/two-factor-challenge",
        json!({"credential": bobs_answer}),
    )
    .await;
    assert_refused(status, &body);
    assert_eq!(events(&app, ada_id, "two_factor_failed").await.len(), 1);
    assert!(!signed_in(&ada).await);

    // Her own passkey completes the sign-in.
    let (status, options) = post(&ada, "/auth/two-factor/passkey-options", Value::Null).await;
    assert_eq!(status, Status::Ok);
    let answer = adas_key.sign(&options).expect("Ada's key signs");
    let (status, body) = post(
        &ada,
        "/auth/two-factor-challenge",
        json!({"credential": answer}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["message"], "login_success");
    assert!(signed_in(&ada).await);
    let logins = events(&app, ada_id, "login").await;
    assert_eq!(logins.last(), Some(&None), "a password sign-in: {logins:?}");
}

#[rocket::async_test]
async fn the_second_step_offers_no_passkey_to_a_user_without_one() {
    let app = spawn().await;
    app.create_user(ADA, PASSWORD).await;
    let client = browser_with(&app, passkeys_on).await;
    sign_in(&client, ADA).await;
    enrol(&client).await;
    sign_out(&client).await;
    assert_eq!(
        sign_in(&client, ADA).await.1["message"],
        "two_factor_required"
    );
    let (status, _) = post(&client, "/auth/two-factor/passkey-options", Value::Null).await;
    assert_eq!(status, Status::NotFound);
    // Without a pending sign-in there is nothing to answer.
    let fresh = browser_with(&app, passkeys_on).await;
    let (status, _) = post(&fresh, "/auth/two-factor/passkey-options", Value::Null).await;
    assert_eq!(status, Status::Unauthorized);
}

#[rocket::async_test]
async fn a_passkey_sign_in_is_guest_only_and_takes_a_credential() {
    let app = spawn().await;
    let (client, _, _, _) = user_with_passkey(&app, ADA).await;
    let (status, _) = post(&client, "/auth/passkey/options", Value::Null).await;
    assert_ne!(
        status,
        Status::Ok,
        "a signed-in browser does not sign in again"
    );
    sign_out(&client).await;
    post(&client, "/auth/passkey/options", Value::Null).await;
    let (status, body) = post(&client, "/auth/passkey/login", json!({})).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(body["errors"]["credential"][0], "required");
    let (status, body) = post(
        &client,
        "/auth/passkey/login",
        json!({"credential": {"id": "AAAA", "rawId": "AAAA", "type": "public-key",
                               "response": {}}}),
    )
    .await;
    assert_refused(status, &body);
}

#[rocket::async_test]
async fn failed_passkey_sign_ins_spend_the_per_ip_budget() {
    let app = spawn_app_with(|f| passkeys_on(f).merge(("auth.ip_throttle_attempts", 3))).await;
    app.create_user(ADA, PASSWORD).await;
    let forged = json!({"id": "AAAA", "rawId": "AAAA", "type": "public-key",
                        "response": {"clientDataJSON": "AAAA", "authenticatorData": "AAAA",
                                     "signature": "AAAA"}});
    for n in 1..=3 {
        post(&app.client, "/auth/passkey/options", Value::Null).await;
        let (status, _) = post(
            &app.client,
            "/auth/passkey/login",
            json!({"credential": forged}),
        )
        .await;
        assert_eq!(status, Status::UnprocessableEntity, "attempt {n}");
    }
    let (status, body) = post(
        &app.client,
        "/auth/passkey/login",
        json!({"credential": forged}),
    )
    .await;
    assert_eq!(status, Status::TooManyRequests, "{body}");
    // The budget is the client's, whatever it tries next.
    let (status, _) = sign_in(&app.client, ADA).await;
    assert_eq!(status, Status::TooManyRequests);
}

/// A JSON GET from `client`.
async fn post_get(client: &Client, path: &str) -> (Status, Value) {
    let response = client
        .get(path.to_owned())
        .header(rocket::http::Header::new("Accept", "application/json"))
        .dispatch()
        .await;
    let status = response.status();
    let text = response.into_string().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn session_cookie(client: &Client) -> Option<String> {
    client
        .cookies()
        .get("gatehouse_session")
        .map(|c| c.value().to_owned())
}

#[rocket::async_test]
async fn a_passkey_sign_in_offers_a_device_binding() {
    let app = spawn().await;
    let (client, mut key, credential_id, _) = user_with_passkey(&app, ADA).await;
    sign_out(&client).await;
    let credential = answer(&client, &mut key, &credential_id).await;
    let response = client
        .post("/auth/passkey/login")
        .header(rocket::http::ContentType::JSON)
        .body(json!({"credential": credential}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let (path, challenge) = crate::dbsc_client::offered(&response).expect("a binding offered");
    drop(response);
    let mut device = crate::dbsc_client::Device::new(crate::dbsc_client::DeviceKey::es256());
    assert_eq!(
        device.register(&client, &path, &challenge).await.0,
        Status::Ok
    );
}
