//! Device-bound sessions (DBSC), tried with a client that speaks the
//! protocol as Chrome does, and by thieves holding copies of its cookies.

use rocket::http::private::cookie::{Cookie as RawCookie, CookieJar as RawJar, Key};
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use serde_json::{json, Value};

use crate::dbsc_client::{challenge_of, forged, offered, sf_string, Device, DeviceKey};
use crate::helpers::{set_cookie, spawn_app, spawn_app_with, TestApp, PASSWORD};
use crate::second_step::{dashboard, events, post, remember_of};

const EMAIL: &str = "ada@example.org";
const BOUND: &str = "gatehouse_bound";
const REMEMBER: &str = "gatehouse_remember";
/// The test figment's `secret_key`, which seals private cookies.
const SECRET: &str = "hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk=";

/// Ada's sign-in on `app.client` (with remember-me when `remember`).
async fn sign_in(app: &TestApp, remember: bool) -> LocalResponse<'_> {
    app.client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": EMAIL, "password": PASSWORD, "remember": remember}).to_string())
        .dispatch()
        .await
}

/// Ada signs in on `app.client` (with remember-me when `remember`) and her
/// browser binds the session with `key`; answers her id and the device.
async fn bound_session(app: &TestApp, key: DeviceKey, remember: bool) -> (i64, Device) {
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    let response = sign_in(app, remember).await;
    assert_eq!(response.status(), Status::Ok);
    let old = response
        .headers()
        .get_one("Sec-Session-Registration")
        .map(str::to_owned);
    let (path, challenge) = offered(&response).expect("the sign-in offers a binding");
    assert_eq!(path, "/auth/dbsc/register");
    assert_eq!(
        old,
        response
            .headers()
            .get_one("Secure-Session-Registration")
            .map(str::to_owned),
        "the older header name carries the same offer"
    );
    drop(response);
    let mut device = Device::new(key);
    let (status, body) = device.register(&app.client, &path, &challenge).await;
    assert_eq!(status, Status::Ok, "{body}");
    (user_id, device)
}

/// The session cookie and the bound cookie `client` holds, as sent.
fn cookies_of(app: &TestApp) -> (String, String) {
    let session = app.session_cookie().expect("a session cookie");
    let bound = app
        .client
        .cookies()
        .get(BOUND)
        .map(|c| c.value().to_owned())
        .expect("a bound cookie");
    (session, bound)
}

/// `GET /dashboard` from another browser (instance) that holds `cookies`.
async fn dashboard_with(app: &TestApp, cookies: &[(&str, &str)]) -> Status {
    let thief = app.another_instance().await;
    let mut request = thief.get("/dashboard").header(ContentType::JSON);
    for (name, value) in cookies {
        request = request.cookie(Cookie::new(name.to_string(), value.to_string()));
    }
    let status = request.dispatch().await.status();
    status
}

/// A bound cookie for the DBSC session `id` minted `age` seconds ago,
/// sealed as the server seals it: what a copy made then would be.
fn bound_cookie_minted_ago(id: &str, age: i64) -> String {
    use base64::Engine as _;
    let material = base64::engine::general_purpose::STANDARD
        .decode(SECRET)
        .unwrap();
    let key = Key::derive_from(&material);
    let minted = time::OffsetDateTime::now_utc().unix_timestamp() - age;
    let mut jar = RawJar::new();
    jar.private_mut(&key)
        .add(RawCookie::new(BOUND, format!("{id}.{minted}")));
    jar.get(BOUND).expect("sealed").value().to_owned()
}

/// The `device_bound` flags of Ada's sessions as she lists them.
async fn bound_flags(client: &Client) -> Vec<Value> {
    let response = client
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .dispatch()
        .await;
    let body: Value = serde_json::from_str(&response.into_string().await.unwrap()).unwrap();
    body["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["device_bound"].clone())
        .collect()
}

#[rocket::async_test]
async fn a_bound_session_works_in_its_browser_and_a_copied_session_cookie_is_a_guest() {
    let app = spawn_app().await;
    let (user_id, device) = bound_session(&app, DeviceKey::es256(), false).await;
    assert_eq!(
        dashboard(&app.client).await,
        Status::Ok,
        "the owner's browser"
    );
    assert_eq!(bound_flags(&app.client).await, [json!(true)]);
    assert_eq!(events(&app, user_id, "session_bound").await.len(), 1);

    let (session, bound) = cookies_of(&app);
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session)]).await,
        Status::Unauthorized,
        "a thief with the session cookie only"
    );
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session), (BOUND, &bound)]).await,
        Status::Ok,
        "a copy of both, inside the bound cookie's minutes"
    );
    let old = bound_cookie_minted_ago(device.session.as_deref().unwrap(), 10 * 60 + 1);
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session), (BOUND, &old)]).await,
        Status::Unauthorized,
        "a copy of both after the bound cookie's ten minutes"
    );
    assert_eq!(
        dashboard(&app.client).await,
        Status::Ok,
        "the owner is still signed in"
    );
}

#[rocket::async_test]
async fn a_refresh_proves_the_key_over_a_fresh_challenge_and_mints_a_new_bound_cookie() {
    for key in [DeviceKey::es256(), DeviceKey::rs256()] {
        let app = spawn_app().await;
        let (_, device) = bound_session(&app, key, false).await;
        let id = device.session.clone().unwrap();
        // The bound cookie ran out: the browser (its session cookie only)
        // is a guest until it refreshes.
        let (session, _) = cookies_of(&app);
        assert_eq!(
            dashboard_with(&app, &[(&app.cookie_name, &session)]).await,
            Status::Unauthorized
        );
        let browser = app.another_instance().await;
        let (challenge, named) = Device {
            cookies: vec![(app.cookie_name.clone(), session.clone())],
            ..Device::new(DeviceKey::es256())
        }
        .with_session(&id)
        .challenge(&browser)
        .await
        .expect("403 with a challenge");
        assert_eq!(named, id, "the challenge names the session");
        let response = browser
            .post("/auth/dbsc/refresh")
            .cookie(Cookie::new(app.cookie_name.clone(), session.clone()))
            .header(Header::new("Sec-Secure-Session-Id", sf_string(&id)))
            .header(Header::new(
                "Secure-Session-Response",
                sf_string(&device.key.proof(&challenge, false)),
            ))
            .dispatch()
            .await;
        assert_eq!(response.status(), Status::Ok);
        let bound = set_cookie(&response, BOUND).expect("a new bound cookie");
        assert_eq!(bound.max_age(), Some(rocket::time::Duration::minutes(10)));
        assert_eq!(bound.http_only(), Some(true));
        let body: Value = serde_json::from_str(&response.into_string().await.unwrap()).unwrap();
        assert_eq!(body["session_identifier"], json!(id));
        assert_eq!(body["refresh_url"], json!("/auth/dbsc/refresh"));
        assert_eq!(body["scope"]["origin"], json!("http://127.0.0.1:8000"));
        assert_eq!(body["credentials"][0]["name"], json!(BOUND));
        assert_eq!(
            dashboard_with(
                &app,
                &[(&app.cookie_name, &session), (BOUND, bound.value())]
            )
            .await,
            Status::Ok,
            "signed in again"
        );

        // An ordinary answer pre-loads the next challenge.
        let answer = app
            .client
            .get("/dashboard")
            .header(ContentType::JSON)
            .dispatch()
            .await;
        let (preloaded, named) = challenge_of(&answer).expect("a pre-loaded challenge");
        assert_eq!(named, id);
        drop(answer);
        let (status, _) = device
            .prove(&app.client, &device.key.proof(&preloaded, false))
            .await;
        assert_eq!(
            status,
            Status::Ok,
            "a pre-loaded challenge is good for a refresh"
        );
    }
}

#[rocket::async_test]
async fn proofs_by_another_key_replayed_made_up_unsigned_or_keyed_are_refused() {
    let app = spawn_app().await;
    let (user_id, device) = bound_session(&app, DeviceKey::es256(), false).await;
    let other = DeviceKey::es256();

    let (challenge, _) = device.challenge(&app.client).await.unwrap();
    let (status, body) = device
        .prove(&app.client, &other.proof(&challenge, false))
        .await;
    assert_eq!(
        (status, body),
        (
            Status::Unauthorized,
            json!({"message": "device_proof_refused"})
        )
    );

    let (challenge, _) = device.challenge(&app.client).await.unwrap();
    let proof = device.key.proof(&challenge, false);
    assert_eq!(device.prove(&app.client, &proof).await.0, Status::Ok);
    assert_eq!(
        device.prove(&app.client, &proof).await.0,
        Status::Unauthorized,
        "replayed"
    );

    let made_up = device.key.proof(
        "AAAAAAAAAAAAAAAAAAAAAA.1700000000.AAAAAAAAAAAAAAAAAAAAAA",
        false,
    );
    assert_eq!(
        device.prove(&app.client, &made_up).await.0,
        Status::Unauthorized,
        "never issued"
    );

    let (challenge, _) = device.challenge(&app.client).await.unwrap();
    let keyed = device.key.proof(&challenge, true);
    assert_eq!(
        device.prove(&app.client, &keyed).await.0,
        Status::Unauthorized,
        "a key in a refresh"
    );
    let none = forged(json!({"alg": "none", "typ": "dbsc+jwt"}), &challenge, b"");
    assert_eq!(
        device.prove(&app.client, &none).await.0,
        Status::Unauthorized,
        "alg none"
    );
    let hmac = forged(
        json!({"alg": "HS256", "typ": "dbsc+jwt"}),
        &challenge,
        &[7; 32],
    );
    assert_eq!(
        device.prove(&app.client, &hmac).await.0,
        Status::Unauthorized,
        "HS256"
    );
    let untyped = forged(json!({"alg": "ES256", "typ": "JWT"}), &challenge, &[7; 64]);
    assert_eq!(
        device.prove(&app.client, &untyped).await.0,
        Status::Unauthorized,
        "typ JWT"
    );
    assert_eq!(
        device.prove(&app.client, "not a jwt").await.0,
        Status::Unauthorized
    );

    // The challenge those refusals answered was never used: it still works.
    let (status, _) = device
        .prove(&app.client, &device.key.proof(&challenge, false))
        .await;
    assert_eq!(status, Status::Ok);
    assert_eq!(events(&app, user_id, "dbsc_proof_refused").await.len(), 8);
}

#[rocket::async_test]
async fn a_challenge_answered_twice_at_once_refreshes_once() {
    let app = spawn_app().await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), false).await;
    let (challenge, _) = device.challenge(&app.client).await.unwrap();
    let proof = device.key.proof(&challenge, false);
    let (session, _) = cookies_of(&app);
    let (a, b) = (app.another_instance().await, app.another_instance().await);
    let id = device.session.clone().unwrap();
    let [first, second] = [&a, &b].map(|client| {
        client
            .post("/auth/dbsc/refresh")
            .cookie(Cookie::new(app.cookie_name.clone(), session.clone()))
            .header(Header::new("Sec-Secure-Session-Id", sf_string(&id)))
            .header(Header::new("Secure-Session-Response", sf_string(&proof)))
    });
    let (first, second) = futures::join!(first.dispatch(), second.dispatch());
    let mut statuses = [first.status(), second.status()];
    statuses.sort_by_key(|s| s.code);
    assert_eq!(statuses, [Status::Ok, Status::Unauthorized]);
}

#[rocket::async_test]
async fn a_registration_answers_a_challenge_issued_to_its_own_session_once() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    let response = sign_in(&app, false).await;
    let (path, challenge) = offered(&response).unwrap();
    drop(response);
    // A guest cannot register, whatever it sends.
    let guest = app.another_instance().await;
    let mut device = Device::new(DeviceKey::es256());
    assert_eq!(
        device.register(&guest, &path, &challenge).await.0,
        Status::Unauthorized
    );
    // Another key's registration with a made-up challenge is refused.
    let (status, body) = device
        .register(&app.client, &path, "made.up.challenge")
        .await;
    assert_eq!(
        (status, body),
        (
            Status::Unauthorized,
            json!({"message": "device_proof_refused"})
        )
    );
    assert_eq!(
        device.register(&app.client, &path, &challenge).await.0,
        Status::Ok
    );
    let mut again = Device::new(DeviceKey::es256());
    assert_eq!(
        again.register(&app.client, &path, &challenge).await.0,
        Status::Unauthorized,
        "the session is bound, the challenge used"
    );
}

#[rocket::async_test]
async fn logout_and_a_password_change_end_the_dbsc_session() {
    let app = spawn_app().await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), false).await;
    assert_eq!(app.logout().await, Status::SeeOther);
    let (status, body) = device.prove(&app.client, "irrelevant").await;
    assert_eq!((status, body), (Status::Ok, json!({"continue": false})));
    assert!(
        device.challenge(&app.client).await.is_none(),
        "no challenge for an ended session"
    );

    let app = spawn_app().await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), false).await;
    let (session, bound) = cookies_of(&app);
    let (status, body) = post(
        &app.client,
        "/auth/password",
        json!({"current_password": PASSWORD, "password": "a brand new passphrase",
               "password_confirmation": "a brand new passphrase"}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(
        dashboard(&app.client).await,
        Status::Ok,
        "the changing browser stays, bound"
    );
    assert_eq!(bound_flags(&app.client).await, [json!(true)]);
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session), (BOUND, &bound)]).await,
        Status::Unauthorized,
        "the session before the change ended"
    );
    assert_eq!(
        device.refresh(&app.client).await.0,
        Status::Ok,
        "the same key goes on"
    );
}

#[rocket::async_test]
async fn a_bound_remember_me_cookie_recalls_only_through_a_proof_by_its_key() {
    let app = spawn_app().await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), true).await;
    let remember = remember_of(&app.client);
    assert_eq!(
        dashboard_with(&app, &[(REMEMBER, &remember)]).await,
        Status::Unauthorized,
        "a copy of the remember-me cookie alone recalls nothing"
    );
    // The browser restarts: it keeps its remember-me cookie and its DBSC
    // session, and loses the session and bound cookies.
    let restarted = app.another_instance().await;
    let keep = vec![(REMEMBER.to_owned(), remember.clone())];
    let other = Device {
        cookies: keep.clone(),
        ..Device::new(DeviceKey::es256())
    }
    .with_session(device.session.as_deref().unwrap());
    assert_eq!(
        other.refresh(&restarted).await.0,
        Status::Unauthorized,
        "another key"
    );
    let device = Device {
        cookies: keep,
        ..device
    };
    let (status, body, set) = device.refresh_cookies(&restarted).await;
    assert_eq!(status, Status::Ok, "{body}");
    let cookie = |name: &str| set.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let (session, bound) = (cookie(&app.cookie_name).unwrap(), cookie(BOUND).unwrap());
    assert!(cookie(REMEMBER).is_some(), "the remember-me cookie rotated");
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session), (BOUND, &bound)]).await,
        Status::Ok,
        "recalled, bound"
    );
    assert_eq!(
        dashboard_with(&app, &[(&app.cookie_name, &session)]).await,
        Status::Unauthorized,
        "the recalled session is bound too"
    );
}

#[rocket::async_test]
async fn sudo_mode_in_a_bound_session_asks_for_a_bound_cookie_under_a_minute_old() {
    let app = spawn_app().await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), false).await;
    let id = device.session.clone().unwrap();
    let (session, _) = cookies_of(&app);
    let stale = bound_cookie_minted_ago(&id, 61);
    let browser = app.another_instance().await;
    let response = browser
        .post("/auth/sessions/end-others")
        .header(ContentType::JSON)
        .cookie(Cookie::new(app.cookie_name.clone(), session.clone()))
        .cookie(Cookie::new(BOUND, stale))
        .body("{}")
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::TemporaryRedirect);
    assert_eq!(
        response.headers().get_one("Location"),
        Some("/auth/sessions/end-others")
    );
    let removed = set_cookie(&response, BOUND).expect("the bound cookie expired");
    assert_eq!(removed.max_age(), Some(rocket::time::Duration::ZERO));
    drop(response);
    // The browser proves its key, and the request goes through.
    assert_eq!(device.refresh(&app.client).await.0, Status::Ok);
    let (status, body) = post(&app.client, "/auth/sessions/end-others", json!({})).await;
    assert_eq!(status, Status::Ok, "{body}");
}

#[rocket::async_test]
async fn without_device_binding_nothing_is_offered_or_bound() {
    let app = spawn_app_with(|f| f.merge(("session.device_binding", false))).await;
    app.create_user(EMAIL, PASSWORD).await;
    let response = sign_in(&app, false).await;
    assert_eq!(response.status(), Status::Ok);
    assert!(offered(&response).is_none());
    assert!(response
        .headers()
        .get_one("Sec-Session-Registration")
        .is_none());
    drop(response);
    let mut device = Device::new(DeviceKey::es256());
    let (status, _) = device
        .register(&app.client, "/auth/dbsc/register", "x.1.y")
        .await;
    assert_eq!(status, Status::NotFound);
    assert_eq!(bound_flags(&app.client).await, [json!(false)]);
}

#[rocket::async_test]
async fn refused_proofs_spend_the_clients_budget_and_then_429() {
    let app = spawn_app_with(|f| f.merge(("auth.ip_throttle_attempts", 2))).await;
    let (_, device) = bound_session(&app, DeviceKey::es256(), false).await;
    for _ in 0..2 {
        assert_eq!(
            device.prove(&app.client, "forged").await.0,
            Status::Unauthorized
        );
    }
    assert!(
        device.challenge(&app.client).await.is_none(),
        "no challenge now"
    );
    let (status, body) = device.prove(&app.client, "forged").await;
    assert_eq!(status, Status::TooManyRequests, "{body}");
    assert_eq!(body["message"], json!("auth_throttle"));
}

#[rocket::async_test]
async fn a_recall_by_a_remember_me_cookie_offers_a_binding_as_every_sign_in_does() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app, true).await.status(), Status::Ok);
    let remember = remember_of(&app.client);
    let browser = app.another_instance().await;
    let answer = browser
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, remember))
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok, "recalled");
    let (path, challenge) = offered(&answer).expect("the recall offers a binding");
    let session = set_cookie(&answer, &app.cookie_name)
        .expect("a new session")
        .value()
        .to_owned();
    drop(answer);
    let mut device = Device {
        cookies: vec![(app.cookie_name.clone(), session)],
        ..Device::new(DeviceKey::es256())
    };
    let register = browser
        .post(path)
        .cookie(Cookie::new(
            device.cookies[0].0.clone(),
            device.cookies[0].1.clone(),
        ))
        .header(Header::new(
            "Secure-Session-Response",
            sf_string(&device.key.proof(&challenge, true)),
        ))
        .dispatch()
        .await;
    assert_eq!(register.status(), Status::Ok, "the recalled session binds");
    let body: Value = serde_json::from_str(&register.into_string().await.unwrap()).unwrap();
    device.session = body["session_identifier"].as_str().map(str::to_owned);
    assert_eq!(device.refresh(&browser).await.0, Status::Ok);
}

#[rocket::async_test]
async fn the_account_screen_says_which_session_is_bound_in_english_and_german() {
    let app = spawn_app().await;
    let (_, _device) = bound_session(&app, DeviceKey::es256(), false).await;
    for (language, words) in [
        ("en", "bound to this device"),
        ("de", "an dieses Gerät gebunden"),
    ] {
        let page = app
            .client
            .get("/account")
            .header(Header::new("Accept", "text/html"))
            .header(Header::new("Accept-Language", language))
            .dispatch()
            .await;
        assert_eq!(page.status(), Status::Ok);
        let html = page.into_string().await.unwrap_or_default();
        assert_eq!(
            html.matches(words).count(),
            1,
            "{language}: one bound session"
        );
    }
    // A session signed in elsewhere, not bound, says nothing of it.
    let other = app.another_instance().await;
    let answer = other
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": EMAIL, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok);
    drop(answer);
    let flags = bound_flags(&app.client).await;
    assert_eq!(flags.len(), 2);
    assert_eq!(flags.iter().filter(|f| **f == json!(true)).count(), 1);
}

#[rocket::async_test]
async fn the_remember_me_cookie_a_password_change_reissues_in_a_bound_session_is_bound_too() {
    let app = spawn_app().await;
    let (_, _device) = bound_session(&app, DeviceKey::es256(), true).await;
    let before = remember_of(&app.client);
    let (status, body) = post(
        &app.client,
        "/auth/password",
        json!({"current_password": PASSWORD, "password": "a brand new passphrase",
               "password_confirmation": "a brand new passphrase"}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    let reissued = remember_of(&app.client);
    assert_ne!(reissued, before, "a new remember-me cookie");
    assert_eq!(
        dashboard_with(&app, &[(REMEMBER, &reissued)]).await,
        Status::Unauthorized,
        "a copy of it alone recalls nothing"
    );
}
