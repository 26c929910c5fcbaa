//! The second step under attack: what someone who already has the password,
//! or a stolen cookie, tries next. Second-factor codes counted before they
//! are checked (however many arrive at once), the day's lockout, remember-me
//! per device, pending sign-ins that die with the credential they began
//! with, and the account screen's headers and secrets.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use gatehouse::auth::second_step::{Reserved, SecondFactorLimit};
use gatehouse::db::TextColumn;
use rocket::figment::Figment;
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{
    figment, header, json, set_cookie, spawn_app, spawn_app_with, TestApp, PASSWORD,
};
use crate::mailbox::spawn_mail_app_with;
use crate::two_factor::{code, now};

const EMAIL: &str = "ada@example.org";
const REMEMBER: &str = "gatehouse_remember";

/// Another browser on the app's database (a tracked client of its own).
async fn browser(app: &TestApp) -> Client {
    browser_with(app, |f| f).await
}

/// [`browser`] on a host with extra configuration.
pub(crate) async fn browser_with(
    app: &TestApp,
    configure: impl FnOnce(Figment) -> Figment,
) -> Client {
    Client::tracked(gatehouse_host::rocket(configure(figment(
        &app.database_url,
    ))))
    .await
    .expect("another browser's host ignites")
}

pub(crate) async fn post(client: &Client, path: &str, body: Value) -> (Status, Value) {
    let response = client
        .post(path.to_owned())
        .header(ContentType::JSON)
        .header(Header::new("Accept", "application/json"))
        .body(body.to_string())
        .dispatch()
        .await;
    let status = response.status();
    let text = response.into_string().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub(crate) async fn sign_in(client: &Client, remember: bool) -> (Status, Value) {
    post(
        client,
        "/auth/login",
        json!({"email": EMAIL, "password": PASSWORD, "remember": remember}),
    )
    .await
}

pub(crate) async fn dashboard(client: &Client) -> Status {
    client
        .get("/dashboard")
        .header(ContentType::JSON)
        .dispatch()
        .await
        .status()
}

/// `GET /dashboard` from a fresh browser that holds only the remember cookie
/// `value`.
async fn dashboard_with_only_remember(app: &TestApp, value: &str) -> Status {
    let fresh = app.another_instance().await;
    let status = fresh
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, value.to_owned()))
        .dispatch()
        .await
        .status();
    status
}

/// The remember cookie `client` holds, as it was sent (encrypted).
pub(crate) fn remember_of(client: &Client) -> String {
    client
        .cookies()
        .get(REMEMBER)
        .map(|c| c.value().to_owned())
        .expect("a remember cookie")
}

/// Changes how the user signs in, from the signed-in `client`: `password`
/// (a new one), `end-others` (every other session ended) or `disable`
/// (two-factor sign-in off); answers the status and body.
pub(crate) async fn change_credentials(client: &Client, change: &str) -> (Status, Value) {
    match change {
        "password" => {
            post(
                client,
                "/auth/password",
                json!({"current_password": PASSWORD, "password": "a brand new passphrase",
                       "password_confirmation": "a brand new passphrase"}),
            )
            .await
        }
        "end-others" => {
            post(
                client,
                "/auth/sessions/end-others",
                json!({"password": PASSWORD}),
            )
            .await
        }
        "disable" => {
            post(
                client,
                "/auth/two-factor/disable",
                json!({"password": PASSWORD}),
            )
            .await
        }
        other => panic!("no such change: {other}"),
    }
}

/// The key an enrolment page shows (`<code data-secret>`).
pub(crate) fn shown_key(html: &str) -> Option<String> {
    html.split("data-secret>")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .map(str::to_owned)
}

/// Turns two-factor sign-in on from the signed-in `client`; answers the
/// secret and the time step its confirmation spent.
pub(crate) async fn enrol(client: &Client) -> (String, u64) {
    let (status, enrolment) = post(client, "/auth/two-factor", json!({"password": PASSWORD})).await;
    assert_eq!(status, Status::Ok, "{enrolment}");
    let secret = enrolment["secret"].as_str().expect("secret").to_owned();
    let at = now();
    let (status, body) = post(
        client,
        "/auth/two-factor/confirm",
        json!({"code": code(&secret, at)}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    (secret, at)
}

/// A code that is wrong now: none of the steps around now.
pub(crate) fn wrong_code(secret: &str) -> String {
    let t = now();
    let taken: Vec<String> = [t - 60, t - 30, t, t + 30, t + 60]
        .iter()
        .map(|at| code(secret, *at))
        .collect();
    (0..1_000_000u32)
        .map(|n| format!("{n:06}"))
        .find(|c| !taken.contains(c))
        .expect("a wrong code")
}

/// The security events of `user_id` named `event`, with their details.
pub(crate) async fn events(app: &TestApp, user_id: i64, event: &str) -> Vec<Option<String>> {
    let rows = app
        .db
        .fetch_all(
            app.db
                .query("SELECT detail FROM gatehouse_security_events WHERE user_id = $1 AND event = $2 ORDER BY id")
                .bind(user_id)
                .bind(event.to_owned()),
        )
        .await
        .expect("security events");
    rows.iter()
        .map(|row| row.text("detail").expect("detail"))
        .collect()
}

#[rocket::async_test]
async fn fifty_reservations_raced_on_one_user_grant_exactly_the_limit() {
    let app = spawn_app().await;
    let limit = Arc::new(SecondFactorLimit::new(
        &app.db,
        5,
        60,
        &gatehouse::metrics::Metrics::off(),
    ));
    let raced = (0..50).map(|_| {
        let limit = limit.clone();
        tokio::spawn(async move {
            match limit.reserve(42).await.expect("reserve") {
                Reserved::Check(check) => {
                    // Held while the others race for the slots, then failed.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    check.failed().await.expect("report");
                    true
                }
                Reserved::Refused { .. } => false,
            }
        })
    });
    let granted = join_all(raced)
        .await
        .into_iter()
        .filter(|granted| *granted.as_ref().expect("task"))
        .count();
    assert_eq!(granted, 5, "the reservation is the count: one statement");
    assert!(
        matches!(
            limit.reserve(42).await.expect("reserve"),
            Reserved::Refused { .. }
        ),
        "the window is spent"
    );
}

#[rocket::async_test]
async fn wrong_codes_sent_at_once_through_eight_pending_sign_ins_get_at_most_five_checks() {
    let app = spawn_app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (secret, _) = enrol(&app.client).await;
    let mut browsers = Vec::new();
    for _ in 0..8 {
        // Eight instances: small pools, so that all fit a server's
        // connection limit beside the other tests.
        let b = browser_with(&app, |f| f.merge(("databases.main.max_connections", 4))).await;
        let (status, body) = sign_in(&b, false).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (Status::Ok, Some("two_factor_required"))
        );
        browsers.push(b);
    }
    let wrong = wrong_code(&secret);
    let sent = (0..96).map(|i| {
        post(
            &browsers[i % 8],
            "/auth/two-factor-challenge",
            json!({"code": wrong}),
        )
    });
    let answers: Vec<Status> = join_all(sent).await.into_iter().map(|(s, _)| s).collect();
    let counted = answers
        .iter()
        .filter(|s| **s == Status::UnprocessableEntity)
        .count();
    let refused = answers
        .iter()
        .filter(|s| **s == Status::TooManyRequests)
        .count();
    assert!(counted <= 5, "{answers:?}");
    assert!(refused >= 1, "{answers:?}");
    assert!(
        answers.iter().all(|s| [
            Status::UnprocessableEntity,
            Status::TooManyRequests,
            Status::Unauthorized
        ]
        .contains(s)),
        "unchecked codes are refused (or find their pending sign-in dropped): {answers:?}"
    );
    assert_eq!(
        events(&app, user_id, "two_factor_failed").await.len(),
        5,
        "exactly five codes were checked"
    );
    // The window is spent: a new pending sign-in's right code is not checked.
    let late = browser(&app).await;
    assert_eq!(sign_in(&late, false).await.0, Status::Ok);
    let right = code(&secret, now() + 30);
    let (status, _) = post(&late, "/auth/two-factor-challenge", json!({"code": right})).await;
    assert_eq!(status, Status::TooManyRequests);
    assert_eq!(dashboard(&late).await, Status::Unauthorized);
}

#[rocket::async_test]
async fn twenty_wrong_codes_in_a_day_lock_the_second_step_for_an_hour_and_tell_the_user_once() {
    // A window wide enough for twenty, so that only the day's limit stops them.
    let wide = |f: Figment| f.merge(("auth.throttle_attempts", 30));
    let (app, mailbox) = spawn_mail_app_with(wide).await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (secret, _) = enrol(&app.client).await;
    assert_eq!(app.logout().await, Status::SeeOther);
    let attacker = browser_with(&app, |f| wide(mailbox.configure(f))).await;
    assert_eq!(sign_in(&attacker, false).await.0, Status::Ok);
    let wrong = wrong_code(&secret);
    for n in 1..=20 {
        let response = attacker
            .post("/auth/two-factor-challenge")
            .header(ContentType::JSON)
            .header(Header::new("Accept-Language", "de"))
            .body(json!({"code": wrong}).to_string())
            .dispatch()
            .await;
        let expected = if n < 20 {
            Status::UnprocessableEntity
        } else {
            Status::TooManyRequests
        };
        assert_eq!(response.status(), expected, "code {n}");
        if n == 20 {
            let retry_after: u64 = header(&response, "Retry-After")
                .expect("Retry-After")
                .parse()
                .unwrap();
            assert!((3500..=3600).contains(&retry_after), "{retry_after}");
        }
    }
    assert_eq!(
        events(&app, user_id, "lockout").await,
        [Some("second factor".to_owned())]
    );
    // An hour without checks: even the right code, through a new sign-in.
    assert_eq!(sign_in(&attacker, false).await.0, Status::Ok);
    let right = code(&secret, now() + 30);
    let (status, _) = post(
        &attacker,
        "/auth/two-factor-challenge",
        json!({"code": right}),
    )
    .await;
    assert_eq!(status, Status::TooManyRequests);
    assert_eq!(events(&app, user_id, "two_factor_failed").await.len(), 20);

    let mails = mailbox.after_quiet_wait().await;
    // The owner's own sign-in and enrolment were told in English.
    let lockout: Vec<_> = mails
        .iter()
        .filter(|m| m.to == EMAIL && m.html.contains("lang=\"de\""))
        .collect();
    assert_eq!(
        lockout.len(),
        1,
        "one mail in German: {:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    assert_eq!(
        lockout[0].subject,
        "Jemand versucht, sich bei Ihrem Konto anzumelden"
    );
    assert!(
        lockout[0].text.contains("20 falsche Codes"),
        "{}",
        lockout[0].text
    );
    assert!(
        lockout[0].text.contains("/forgot-password"),
        "{}",
        lockout[0].text
    );
}

#[rocket::async_test]
async fn ending_a_session_signs_that_device_out_for_good() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    let laptop = browser(&app).await;
    assert_eq!(sign_in(&laptop, true).await.0, Status::Ok);
    let laptop_remember = remember_of(&laptop);
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let sessions = json(app.get_json("/auth/sessions").await).await;
    let other = sessions["value"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["current"] == false)
        .expect("the laptop's session")["id"]
        .as_str()
        .expect("handle")
        .to_owned();
    let ended = app
        .post_json(&format!("/auth/sessions/{other}/end"), json!({}))
        .await;
    assert_eq!(ended.status(), Status::NoContent);
    assert_eq!(
        dashboard(&laptop).await,
        Status::Unauthorized,
        "not signed in again by its remember cookie"
    );
    assert_eq!(
        dashboard_with_only_remember(&app, &laptop_remember).await,
        Status::Unauthorized
    );
    assert_eq!(dashboard(&app.client).await, Status::Ok);
}

#[rocket::async_test]
async fn a_remembered_device_that_signed_in_again_is_ended_with_its_new_session() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    let laptop = browser(&app).await;
    assert_eq!(sign_in(&laptop, true).await.0, Status::Ok);
    // The session expires on the laptop's side; the remember cookie signs a
    // new one in.
    let remembered = remember_of(&laptop);
    let fresh = browser(&app).await;
    let back = fresh
        .get("/dashboard")
        .header(ContentType::JSON)
        .header(Header::new("User-Agent", "Ada's laptop, back"))
        .cookie(Cookie::new(REMEMBER, remembered.clone()))
        .dispatch()
        .await;
    assert_eq!(back.status(), Status::Ok);
    drop(back);
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let sessions = json(app.get_json("/auth/sessions").await).await;
    let made = sessions["value"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["user_agent"] == "Ada's laptop, back")
        .expect("the session the cookie made")["id"]
        .as_str()
        .expect("handle")
        .to_owned();
    // Ending the session the cookie made voids the cookie.
    let ended = app
        .post_json(&format!("/auth/sessions/{made}/end"), json!({}))
        .await;
    assert_eq!(ended.status(), Status::NoContent);
    assert_eq!(dashboard(&fresh).await, Status::Unauthorized);
    assert_eq!(
        dashboard_with_only_remember(&app, &remembered).await,
        Status::Unauthorized
    );
}

#[rocket::async_test]
async fn ending_the_others_or_changing_the_password_voids_every_remember_cookie_and_reissues_the_callers(
) {
    for change in ["end-others", "password"] {
        let app = spawn_app().await;
        app.create_user(EMAIL, PASSWORD).await;
        let laptop = browser(&app).await;
        assert_eq!(sign_in(&laptop, true).await.0, Status::Ok);
        let laptop_remember = remember_of(&laptop);
        assert_eq!(sign_in(&app.client, true).await.0, Status::Ok);
        let own_remember = remember_of(&app.client);
        let (status, body) = change_credentials(&app.client, change).await;
        assert_eq!(status, Status::Ok, "{change}: {body}");
        assert_eq!(
            dashboard_with_only_remember(&app, &laptop_remember).await,
            Status::Unauthorized,
            "{change}"
        );
        assert_eq!(dashboard(&laptop).await, Status::Unauthorized, "{change}");
        assert_eq!(
            dashboard_with_only_remember(&app, &own_remember).await,
            Status::Unauthorized,
            "{change}: a copy of the caller's cookie from before"
        );
        let reissued = remember_of(&app.client);
        assert_ne!(
            reissued, own_remember,
            "{change}: the caller got a new cookie"
        );
        assert_eq!(
            dashboard_with_only_remember(&app, &reissued).await,
            Status::Ok,
            "{change}: the caller's new cookie"
        );
        assert_eq!(dashboard(&app.client).await, Status::Ok, "{change}");
    }
}

#[rocket::async_test]
async fn a_remember_cookie_from_before_two_factor_no_longer_signs_in_alone() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    let old_laptop = browser(&app).await;
    assert_eq!(sign_in(&old_laptop, true).await.0, Status::Ok);
    let before = remember_of(&old_laptop);
    assert_eq!(
        dashboard_with_only_remember(&app, &before).await,
        Status::Ok
    );
    assert_eq!(sign_in(&app.client, true).await.0, Status::Ok);
    let own = remember_of(&app.client);
    enrol(&app.client).await;
    assert_eq!(
        dashboard_with_only_remember(&app, &before).await,
        Status::Unauthorized
    );
    assert_eq!(
        dashboard_with_only_remember(&app, &own).await,
        Status::Unauthorized,
        "a copy of the enrolling browser's cookie from before"
    );
    let reissued = remember_of(&app.client);
    assert_ne!(reissued, own);
    assert_eq!(
        dashboard_with_only_remember(&app, &reissued).await,
        Status::Ok,
        "the enrolling browser's new one"
    );
}

#[rocket::async_test]
async fn logging_out_voids_that_devices_remember_cookie_only() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    let laptop = browser(&app).await;
    assert_eq!(sign_in(&laptop, true).await.0, Status::Ok);
    let laptop_remember = remember_of(&laptop);
    assert_eq!(sign_in(&app.client, true).await.0, Status::Ok);
    let own = remember_of(&app.client);
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(
        dashboard_with_only_remember(&app, &own).await,
        Status::Unauthorized
    );
    assert_eq!(
        dashboard_with_only_remember(&app, &laptop_remember).await,
        Status::Ok
    );
}

#[rocket::async_test]
async fn a_pending_second_step_dies_with_the_credentials_it_began_with() {
    for change in ["password", "end-others", "disable"] {
        let app = spawn_app().await;
        app.create_user(EMAIL, PASSWORD).await;
        assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
        let (secret, _) = enrol(&app.client).await;
        let phished = browser(&app).await;
        let (status, body) = sign_in(&phished, false).await;
        assert_eq!(
            (status, body["message"].as_str()),
            (Status::Ok, Some("two_factor_required"))
        );
        let (status, body) = change_credentials(&app.client, change).await;
        assert_eq!(status, Status::Ok, "{change}: {body}");
        let right = code(&secret, now() + 30);
        let (status, body) = post(
            &phished,
            "/auth/two-factor-challenge",
            json!({"code": right}),
        )
        .await;
        assert_eq!(status, Status::Unauthorized, "{change}: {body}");
        assert_eq!(body, json!({"message": "unauthenticated"}), "{change}");
        assert_eq!(dashboard(&phished).await, Status::Unauthorized, "{change}");
        let screen = phished
            .get("/login/two-factor")
            .header(Header::new("Accept", "text/html"))
            .dispatch()
            .await;
        assert_eq!(
            screen.status(),
            Status::SeeOther,
            "{change}: nothing pending"
        );
    }
}

#[rocket::async_test]
async fn the_account_screen_carries_the_screen_headers_and_never_a_pending_key() {
    let app = spawn_app().await;
    app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let page = app.get_html("/account").await;
    assert_eq!(page.status(), Status::Ok);
    let csp = header(&page, "Content-Security-Policy").expect("CSP on /account");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert_eq!(header(&page, "Cache-Control").as_deref(), Some("no-store"));
    assert_eq!(header(&page, "X-Frame-Options").as_deref(), Some("DENY"));
    assert_eq!(
        header(&page, "Referrer-Policy").as_deref(),
        Some("no-referrer")
    );
    assert_eq!(
        header(&page, "X-Content-Type-Options").as_deref(),
        Some("nosniff")
    );
    drop(page);

    let began = app
        .post_json("/auth/two-factor", json!({"password": PASSWORD}))
        .await;
    assert_eq!(header(&began, "Cache-Control").as_deref(), Some("no-store"));
    let secret = json(began).await["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let html = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(!html.contains(&secret), "the key is not shown again");
    assert!(!html.contains("<svg"), "nor its QR code");
    assert!(
        html.contains("being set up"),
        "the pending enrolment is named"
    );
    // A form post begins it again and is answered by the page with the key.
    let again = app
        .post_form(
            "/auth/two-factor",
            &format!("password={}", PASSWORD.replace(' ', "+")),
        )
        .await;
    assert_eq!(again.status(), Status::Ok);
    assert!(header(&again, "Content-Security-Policy").is_some());
    assert_eq!(header(&again, "Cache-Control").as_deref(), Some("no-store"));
    let html = again.into_string().await.expect("html");
    let new_secret = shown_key(&html).expect("the new key, in this answer");
    assert_ne!(new_secret, secret);
    let later = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .expect("html");
    assert!(!later.contains(&new_secret));
}

#[rocket::async_test]
async fn ipv6_clients_share_a_per_ip_budget_by_their_slash_64() {
    let app = spawn_app_with(|f| f.merge(("auth.ip_throttle_attempts", 3))).await;
    let attempt = |peer: &'static str, email: &'static str| {
        let client = &app.client;
        async move {
            client
                .post("/auth/login")
                .header(ContentType::JSON)
                .remote(peer.parse().unwrap())
                .body(json!({"email": email, "password": "wrong"}).to_string())
                .dispatch()
                .await
                .status()
        }
    };
    // Three failures from three addresses of one /64, for three accounts,
    // spend the budget of the whole /64; the next /64 is another client.
    for (peer, email, expected) in [
        (
            "[2001:db8:7:1::1]:4000",
            "a@example.org",
            Status::UnprocessableEntity,
        ),
        (
            "[2001:db8:7:1::2]:4000",
            "b@example.org",
            Status::UnprocessableEntity,
        ),
        (
            "[2001:db8:7:1:ffff::9]:4000",
            "c@example.org",
            Status::UnprocessableEntity,
        ),
        (
            "[2001:db8:7:1:1234::5]:4000",
            "d@example.org",
            Status::TooManyRequests,
        ),
        (
            "[2001:db8:7:2::1]:4000",
            "d@example.org",
            Status::UnprocessableEntity,
        ),
    ] {
        assert_eq!(attempt(peer, email).await, expected, "{peer}");
    }
}

#[rocket::async_test]
async fn a_remember_cookie_of_the_earlier_shape_signs_nobody_in() {
    let app = spawn_app().await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, true).await.0, Status::Ok);
    let token = app.remember_token(user_id).await.expect("remember_token");
    // `user_id|remember_token`, encrypted as the cookie was before.
    let fresh = app.another_instance().await;
    let response = fresh
        .get("/dashboard")
        .header(ContentType::JSON)
        .private_cookie(Cookie::new(REMEMBER, format!("{user_id}|{token}")))
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Unauthorized);
    assert!(set_cookie(&response, &app.cookie_name).is_none());
}
