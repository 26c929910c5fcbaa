//! The security activity log: sign-ins, failures, lockouts and sign-outs
//! are stored with the account, client address and user agent; the
//! reference host's `SecurityEvents` shows callers their own events only;
//! the sweep removes events past `auth.security_events_days`.

use std::net::SocketAddr;

use gatehouse::db::TextColumn;
use gatehouse::domain::SecretToken;
use gatehouse::state::GatehouseState;
use rocket::http::{ContentType, Header, Status};
use serde_json::{json, Value};
use sqlx::Row;

use crate::helpers::{spawn_app, spawn_app_with, TestApp, PASSWORD};
use crate::mailbox::{request_link, reset_with_headers, spawn_mail_app};
use crate::odata_fixture::{odata_uri, Answer};

const ADA: &str = "ada@example.org";
const BOB: &str = "bob@example.org";
/// Someone guessing Ada's password.
const GUESSER: &str = "203.0.113.9:41000";
const GUESSER_AGENT: &str = "curl/8.5.0";
/// Ada's own laptop.
const LAPTOP: &str = "198.51.100.7:52000";
const LAPTOP_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0";

/// One stored event, as the assertions compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    event: String,
    user_id: Option<i64>,
    ip_address: Option<String>,
    user_agent: Option<String>,
    detail: Option<String>,
}

fn event(
    event: &str,
    user_id: Option<i64>,
    (ip, agent): (&str, &str),
    detail: Option<&str>,
) -> Event {
    Event {
        event: event.to_owned(),
        user_id,
        ip_address: Some(ip.to_owned()),
        user_agent: Some(agent.to_owned()),
        detail: detail.map(str::to_owned),
    }
}

/// Every stored event, oldest first, with its age in seconds.
async fn events(app: &TestApp) -> Vec<(Event, i64)> {
    let sql = format!(
        "SELECT event, user_id, ip_address, user_agent, detail, {} AS at \
         FROM gatehouse_security_events ORDER BY id",
        app.db.dialect().epoch_of("occurred_at")
    );
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    app.db
        .fetch_all(sqlx::query(&app.db.dialect().placeholders(&sql)))
        .await
        .expect("security events")
        .into_iter()
        .map(|row| {
            let at: i64 = row.try_get("at").expect("occurred_at");
            let stored = Event {
                event: row.text("event").expect("event").expect("an event"),
                user_id: row.try_get("user_id").expect("user_id"),
                ip_address: row.text("ip_address").expect("ip_address"),
                user_agent: row.text("user_agent").expect("user_agent"),
                detail: row.text("detail").expect("detail"),
            };
            (stored, now - at)
        })
        .collect()
}

/// `POST /auth/login` (JSON) from `peer` with `agent` as its user agent.
async fn login_from(
    app: &TestApp,
    email: &str,
    password: &str,
    remember: bool,
    (peer, agent): (&str, &str),
) -> Status {
    app.client
        .post("/auth/login")
        .header(ContentType::JSON)
        .header(Header::new("User-Agent", agent.to_owned()))
        .remote(peer.parse::<SocketAddr>().expect("a socket address"))
        .body(json!({"email": email, "password": password, "remember": remember}).to_string())
        .dispatch()
        .await
        .status()
}

/// `POST /logout` (the form button) from `peer` with `agent`.
async fn logout_from(app: &TestApp, (peer, agent): (&str, &str)) -> Status {
    app.client
        .post("/logout")
        .header(ContentType::Form)
        .header(Header::new("Accept", "text/html"))
        .header(Header::new("User-Agent", agent.to_owned()))
        .remote(peer.parse::<SocketAddr>().expect("a socket address"))
        .dispatch()
        .await
        .status()
}

/// A new personal access token of `user_id`.
async fn bearer_for(app: &TestApp, user_id: i64) -> String {
    let token = SecretToken::generate();
    gatehouse::auth::tokens::create(&app.db, user_id, "activity", &token)
        .await
        .expect("create token");
    format!("Bearer {}", token.expose())
}

/// `GET /odata/SecurityEvents…` with `authorization`, if any.
async fn security_events(app: &TestApp, path: &str, authorization: Option<&str>) -> Answer {
    let uri = odata_uri(path, &[]);
    match authorization {
        Some(value) => app.get_uri(&uri, &[("Authorization", value)]).await,
        None => app.get_uri(&uri, &[]).await,
    }
}

fn ip(peer: &str) -> &str {
    peer.rsplit_once(':').expect("host:port").0
}

#[rocket::async_test]
async fn sign_ins_failures_lockouts_and_logouts_are_stored_with_their_client() {
    let app = spawn_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let guesser = (GUESSER, GUESSER_AGENT);
    let laptop = (LAPTOP, LAPTOP_AGENT);
    for _ in 0..5 {
        let status = login_from(&app, ADA, "not the password", false, guesser).await;
        assert_eq!(status, Status::UnprocessableEntity);
    }
    for _ in 0..2 {
        let status = login_from(&app, ADA, PASSWORD, false, guesser).await;
        assert_eq!(status, Status::TooManyRequests, "throttled");
    }
    let status = login_from(&app, "ghost@example.org", "a guess", false, guesser).await;
    assert_eq!(status, Status::UnprocessableEntity);
    assert_eq!(
        login_from(&app, ADA, PASSWORD, true, laptop).await,
        Status::Ok
    );
    assert_eq!(logout_from(&app, laptop).await, Status::SeeOther);

    let stored = events(&app).await;
    let guessed = (ip(GUESSER), GUESSER_AGENT);
    let own = (ip(LAPTOP), LAPTOP_AGENT);
    let mut expected = vec![event("failed", Some(ada), guessed, None); 5];
    expected.extend([
        // Once per window, however many attempts it refuses.
        event("lockout", Some(ada), guessed, None),
        // No account: no user id, and the address tried is not kept.
        event("failed", None, guessed, None),
        event("login", Some(ada), own, Some("remember")),
        event("logout", Some(ada), own, None),
    ]);
    assert_eq!(
        stored.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>(),
        expected
    );
    for (stored, age) in &stored {
        assert!(
            (-5..120).contains(age),
            "{stored:?} stored at the current UTC time, not {age} s off"
        );
    }
    let everything = format!("{stored:?}");
    assert!(
        !everything.contains(PASSWORD) && !everything.contains("not the password"),
        "no password is stored: {everything}"
    );
}

#[rocket::async_test]
async fn a_password_reset_is_stored_with_its_client() {
    let (app, mailbox) = spawn_mail_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert!(
        events(&app).await.is_empty(),
        "asking for a link is no event"
    );
    let headers = [
        ("User-Agent", LAPTOP_AGENT),
        ("X-Forwarded-For", "192.0.2.1"),
    ];
    let response = reset_with_headers(
        &app.client,
        &link.token,
        ADA,
        "a completely different passphrase",
        &headers,
    )
    .await;
    assert_eq!(response.status(), Status::Ok);

    let stored: Vec<Event> = events(&app).await.into_iter().map(|(e, _)| e).collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].event, "password_reset");
    assert_eq!(stored[0].user_id, Some(ada));
    assert_eq!(stored[0].user_agent.as_deref(), Some(LAPTOP_AGENT));
    let stored_ip = stored[0].ip_address.as_deref().unwrap_or_default();
    assert!(
        stored_ip.parse::<std::net::IpAddr>().is_ok() && stored_ip != "192.0.2.1",
        "the client address, not what an untrusted peer forwarded: {stored_ip:?}"
    );
}

#[rocket::async_test]
async fn security_events_show_callers_their_own_events_only() {
    let app = spawn_app().await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let bob = app.create_user(BOB, PASSWORD).await;
    let laptop = (LAPTOP, LAPTOP_AGENT);
    let bob_failed = login_from(&app, BOB, "not the password", false, laptop).await;
    assert_eq!(bob_failed, Status::UnprocessableEntity);
    assert_eq!(
        login_from(&app, BOB, PASSWORD, false, laptop).await,
        Status::Ok
    );
    assert_eq!(logout_from(&app, laptop).await, Status::SeeOther);
    assert_eq!(
        login_from(&app, ADA, PASSWORD, false, laptop).await,
        Status::Ok
    );

    // Ada by her session cookie, then by a token: her one sign-in (and,
    // by the token, its first use).
    let ada_token = bearer_for(&app, ada).await;
    for authorization in [None, Some(ada_token.as_str())] {
        let page = security_events(&app, "SecurityEvents", authorization).await;
        let value = page.value();
        let used = value.iter().filter(|r| r["event"] == "token_used").count();
        assert_eq!(used, usize::from(authorization.is_some()), "{}", page.body);
        let logins: Vec<&Value> = value
            .iter()
            .filter(|r| r["event"] != "token_used")
            .collect();
        assert_eq!(logins.len(), 1, "{}", page.body);
        let row = logins[0];
        assert_eq!(row["event"], "login");
        assert_eq!(row["user_id"], json!(ada));
        assert_eq!(row["ip_address"], ip(LAPTOP));
        assert_eq!(row["user_agent"], LAPTOP_AGENT);
        assert_eq!(row["detail"], Value::Null);
        let at = row["occurred_at"].as_str().expect("an instant");
        let parsed =
            time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
                .unwrap_or_else(|e| panic!("occurred_at {at:?} is not RFC 3339: {e}"));
        let age = time::OffsetDateTime::now_utc() - parsed;
        assert!(age.whole_seconds().abs() < 120, "{at} is now, in UTC");
    }

    // Bob's events stay out of reach of Ada's filters and keys.
    let bob_token = bearer_for(&app, bob).await;
    let bobs = security_events(&app, "SecurityEvents", Some(&bob_token))
        .await
        .value();
    let bob_events: Vec<&str> = bobs.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(bob_events, ["failed", "login", "logout", "token_used"]);
    // Grouped, each sees the counts of their own events only: the scope
    // restricts the rows before they are grouped.
    let grouped = "SecurityEvents?$apply=groupby((event),aggregate($count as N))";
    for (authorization, expected) in [
        (
            ada_token.as_str(),
            json!([{"event": "login", "N": 1}, {"event": "token_used", "N": 1}]),
        ),
        (
            bob_token.as_str(),
            json!([{"event": "failed", "N": 1}, {"event": "login", "N": 1},
                   {"event": "logout", "N": 1}, {"event": "token_used", "N": 1}]),
        ),
    ] {
        let answer = app
            .odata_with(grouped, &[("Authorization", authorization)])
            .await;
        assert_eq!(Value::Array(answer.value()), expected, "{}", answer.body);
    }
    let filtered = app
        .get_uri(
            &odata_uri(
                "SecurityEvents",
                &[("$filter", &format!("user_id eq {bob}"))],
            ),
            &[("Authorization", &ada_token)],
        )
        .await;
    assert!(filtered.value().is_empty(), "{}", filtered.body);
    let bob_event = bobs[0]["id"].as_i64().expect("an id");
    security_events(
        &app,
        &format!("SecurityEvents({bob_event})"),
        Some(&ada_token),
    )
    .await
    .assert_error(Status::NotFound, None);
    security_events(
        &app,
        &format!("SecurityEvents({bob_event})"),
        Some(&bob_token),
    )
    .await
    .ok();

    // A guest reads nothing: 401, as for the host's other sets.
    assert_eq!(logout_from(&app, laptop).await, Status::SeeOther);
    for path in ["SecurityEvents", "SecurityEvents/$count"] {
        security_events(&app, path, None)
            .await
            .assert_error(Status::Unauthorized, None);
    }
}

#[rocket::async_test]
async fn the_sweep_removes_events_older_than_security_events_days() {
    let app = spawn_app_with(|f| f.merge(("auth.security_events_days", 7))).await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let laptop = (LAPTOP, LAPTOP_AGENT);
    assert_eq!(
        login_from(&app, ADA, PASSWORD, false, laptop).await,
        Status::Ok
    );
    assert_eq!(logout_from(&app, laptop).await, Status::SeeOther);
    assert_eq!(
        login_from(&app, ADA, PASSWORD, false, laptop).await,
        Status::Ok
    );
    let ids: Vec<i64> = app
        .db
        .fetch_all(
            app.db
                .query("SELECT id FROM gatehouse_security_events ORDER BY id"),
        )
        .await
        .expect("ids")
        .iter()
        .map(|row| row.try_get("id").expect("id"))
        .collect();
    assert_eq!(ids.len(), 3);
    // The first is eight days old, the second six; the third is new.
    for (id, days) in [(ids[0], 8), (ids[1], 6)] {
        let moment = time::OffsetDateTime::now_utc() - time::Duration::days(days);
        let format =
            time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
        let literal = moment.format(&format).expect("a moment");
        app.execute(
            sqlx::query(&app.db.dialect().placeholders(&format!(
                "UPDATE gatehouse_security_events SET occurred_at = '{literal}' WHERE id = $1"
            )))
            .bind(id),
        )
        .await;
    }

    let gh = app
        .client
        .rocket()
        .state::<GatehouseState>()
        .expect("Gatehouse state");
    let swept = gatehouse::sweep::Sweeper::from(gh)
        .once()
        .await
        .expect("sweep");
    assert_eq!(swept.security_events, 1);
    let left: Vec<i64> = app
        .db
        .fetch_all(
            app.db
                .query("SELECT id, user_id FROM gatehouse_security_events ORDER BY id"),
        )
        .await
        .expect("ids")
        .iter()
        .map(|row| {
            assert_eq!(row.try_get::<i64, _>("user_id").ok(), Some(ada));
            row.try_get("id").expect("id")
        })
        .collect();
    assert_eq!(left, ids[1..], "the six-day-old event and the new one stay");
}

#[rocket::async_test]
async fn security_events_days_must_be_positive() {
    let figment =
        crate::helpers::figment("sqlite::memory:").merge(("auth.security_events_days", 0));
    let refused = gatehouse::Settings::from_figment(&figment).expect_err("0 days is refused");
    assert!(
        refused.to_string().contains("auth.security_events_days"),
        "{refused}"
    );
}

#[rocket::async_test]
async fn a_sign_in_goes_through_when_its_event_cannot_be_stored() {
    let app = spawn_app().await;
    app.create_user(ADA, PASSWORD).await;
    app.execute(app.db.query("DROP TABLE gatehouse_security_events"))
        .await;
    let laptop = (LAPTOP, LAPTOP_AGENT);
    assert_eq!(
        login_from(&app, ADA, PASSWORD, false, laptop).await,
        Status::Ok
    );
    assert!(app.is_signed_in().await);
    assert_eq!(logout_from(&app, laptop).await, Status::SeeOther);
    assert!(!app.is_signed_in().await);
}
