//! A script using a real OAuth client library (the `oauth2` crate's device
//! flow, over HTTP) against the reference host listening on a port: it
//! asks for codes, polls as the library does, and reads OData with the
//! token it gets once the person (a second HTTP client with its own
//! cookies) allows the code; a denied code ends the library's polling with
//! `access_denied`.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    ClientId, DeviceAuthorizationUrl, DeviceCodeErrorResponseType, RequestTokenError, Scope,
    StandardDeviceAuthorizationResponse, TokenResponse, TokenUrl,
};
use rocket::Shutdown;
use serde_json::json;

use crate::device_grant::app;
use crate::helpers::{figment, TestApp, PASSWORD};

const EMAIL: &str = "ada@example.org";

/// The reference host on `app`'s database, listening on a free loopback
/// port: its base URL, and the handle that stops it.
async fn listening(app: &TestApp) -> (String, Shutdown) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let figment = figment(&app.database_url)
        .merge(("address", "127.0.0.1"))
        .merge(("port", port))
        .merge(("base_url", base.as_str()))
        .merge(("auth.device_clients", json!({"cli": "Command line"})));
    let rocket = gatehouse_host::rocket(figment)
        .ignite()
        .await
        .expect("the host ignites");
    let shutdown = rocket.shutdown();
    tokio::spawn(rocket.launch());
    let http = reqwest::Client::new();
    for _ in 0..200 {
        if http.get(format!("{base}/healthz")).send().await.is_ok() {
            return (base, shutdown);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the host does not answer at {base}");
}

/// Ada in a browser-like client (its own cookies), signed in at `base`;
/// answers her user code with `path` (`approve` or `deny`).
async fn answer(base: &str, user_code: &str, path: &str) {
    let person = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .expect("a client");
    let signed_in = person
        .post(format!("{base}/auth/login"))
        .json(&json!({"email": EMAIL, "password": PASSWORD}))
        .send()
        .await
        .expect("sign-in");
    assert_eq!(signed_in.status(), 200);
    let answered = person
        .post(format!("{base}/auth/device/{path}"))
        .json(&json!({"user_code": user_code}))
        .send()
        .await
        .expect("answer");
    assert_eq!(answered.status(), 200, "{path}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth2_crate_gets_a_token_by_the_device_flow_and_reads_with_it() {
    let app = app().await;
    app.create_user_with_organisation(EMAIL, PASSWORD).await;
    let (base, shutdown) = listening(&app).await;
    let client = BasicClient::new(ClientId::new("cli".to_owned()))
        .set_token_uri(TokenUrl::new(format!("{base}/auth/device/token")).unwrap())
        .set_device_authorization_url(
            DeviceAuthorizationUrl::new(format!("{base}/auth/device/code")).unwrap(),
        );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");

    let details: StandardDeviceAuthorizationResponse = client
        .exchange_device_code()
        .add_scope(Scope::new("odata:read:Users".to_owned()))
        .request_async(&http)
        .await
        .expect("device codes");
    assert_eq!(
        details.verification_uri().as_str(),
        format!("{base}/device")
    );
    assert_eq!(details.expires_in(), Duration::from_secs(600));
    let user_code = details.user_code().secret().clone();
    // The person allows the code while the library polls.
    let allowing = {
        let base = base.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            answer(&base, &user_code, "approve").await;
        })
    };
    let token = client
        .exchange_device_access_token(&details)
        .request_async(&http, tokio::time::sleep, Some(Duration::from_secs(60)))
        .await
        .expect("a token once allowed");
    allowing.await.expect("allowed");
    let scopes: Vec<String> = token
        .scopes()
        .into_iter()
        .flatten()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(scopes, ["odata:read:Users"]);
    let bearer = token.access_token().secret();
    let read = |set: &str| {
        http.get(format!("{base}/odata/{set}"))
            .bearer_auth(bearer)
            .send()
    };
    assert_eq!(read("Users").await.unwrap().status(), 200);
    assert_eq!(read("Organisations").await.unwrap().status(), 403);

    // A code the person denies ends the library's polling.
    let details: StandardDeviceAuthorizationResponse = client
        .exchange_device_code()
        .request_async(&http)
        .await
        .expect("device codes");
    answer(&base, details.user_code().secret(), "deny").await;
    let refused = client
        .exchange_device_access_token(&details)
        .request_async(&http, tokio::time::sleep, Some(Duration::from_secs(30)))
        .await;
    match refused {
        Err(RequestTokenError::ServerResponse(error)) => {
            assert_eq!(error.error(), &DeviceCodeErrorResponseType::AccessDenied)
        }
        other => panic!("access_denied expected: {other:?}"),
    }
    shutdown.notify();
}
