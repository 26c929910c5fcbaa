//! A host of its own: no org-setup handler, the default dispenser, event
//! listeners, and the named routes checked at ignite.

use std::sync::{Arc, Mutex};

use gatehouse::{AuthEvent, AuthEventListener, AuthUser, Gatehouse, MissingRoute};
use rocket::error::ErrorKind;
use rocket::figment::Figment;
use rocket::http::{Accept, ContentType, Status};
use rocket::local::asynchronous::Client;
use rocket::{get, routes, Build, Rocket};
use serde_json::json;

use crate::helpers::{figment, json, location, spawn_host, TestApp, BASE_URL, PASSWORD};

#[get("/")]
fn home() -> &'static str {
    "home"
}

#[get("/dashboard")]
fn dashboard(user: AuthUser) -> String {
    user.email
}

/// Keeps every event it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<AuthEvent>>>);

impl AuthEventListener for Recorder {
    fn on_event(&self, event: &AuthEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Recorder {
    fn names(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().iter().map(AuthEvent::name).collect()
    }
}

/// Ignition fails, and it is the Gatehouse fairing that refused.
async fn assert_fails_to_ignite(rocket: Rocket<Build>) {
    let Err(error) = Client::tracked(rocket).await else {
        panic!("the host ignited");
    };
    match error.kind() {
        ErrorKind::FailedFairings(failed) => {
            assert_eq!(
                failed.iter().map(|f| f.name).collect::<Vec<_>>(),
                ["Gatehouse"]
            )
        }
        other => panic!("unexpected ignite error: {other:?}"),
    }
}

/// A host of its own: a home page, a dashboard and `gatehouse`.
pub(crate) fn host(figment: Figment, gatehouse: Gatehouse) -> Rocket<Build> {
    rocket::custom(figment)
        .mount("/", routes![home, dashboard])
        .attach(gatehouse)
}

async fn spawn_plain_host() -> TestApp {
    spawn_host(|f| host(f, Gatehouse::new())).await
}

#[rocket::async_test]
async fn org_setup_without_a_handler_is_500_org_setup_handler_missing() {
    let app = spawn_plain_host().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let body =
        json!({"org_name": "Acme", "legal_form": 1, "company_size": "small", "function": "other"});
    let response = app.post_json("/auth/intents/org-setup", body).await;
    assert_eq!(response.status(), Status::InternalServerError);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"org_setup_handler_missing"}"#
    );
}

#[rocket::async_test]
async fn default_dispenser_sends_the_user_to_the_dashboard() {
    let app = spawn_plain_host().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        json(response).await,
        json!({"message": "login_success", "next": {"kind": "redirect", "version": "1",
               "payload": {"target": format!("{BASE_URL}/dashboard")}}})
    );
    let page = app.get_json("/dashboard").await;
    assert_eq!(page.status(), Status::Ok);
    assert_eq!(page.into_string().await.unwrap(), "ada@example.org");
}

#[rocket::async_test]
async fn default_dispenser_follows_the_intended_url() {
    let app = spawn_plain_host().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(
        location(&app.get_html("/dashboard?from=mail").await),
        "/login"
    );
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=correct+horse+battery+staple",
        )
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(
        location(&response),
        format!("{BASE_URL}/dashboard?from=mail")
    );
}

#[rocket::async_test]
async fn logout_and_landing_follow_the_hosts_named_routes() {
    let app = spawn_host(|f| {
        rocket::custom(f)
            .mount("/app", routes![home, dashboard])
            .attach(Gatehouse::new())
    })
    .await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(
        json(response).await["next"]["payload"]["target"],
        format!("{BASE_URL}/app/dashboard")
    );
    let response = app.post_form("/logout", "").await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/app");
}

#[rocket::async_test]
async fn listener_receives_login_failed_lockout_and_logout_events() {
    let recorder = Recorder::default();
    let listener = recorder.clone();
    let app = spawn_host(|f| host(f, Gatehouse::new().listener(listener))).await;
    let user_id = app.create_user("ada@example.org", PASSWORD).await;
    let peer = "1.2.3.4:5000".parse().unwrap();
    for _ in 0..8 {
        app.client
            .post("/auth/login")
            .header(ContentType::JSON)
            .remote(peer)
            .body(json!({"email": "Ada@example.org", "password": "wrong"}).to_string())
            .dispatch()
            .await;
    }
    assert_eq!(
        app.login("ada@example.org", PASSWORD).await,
        Status::Ok,
        "other IP"
    );
    assert_eq!(app.logout().await, Status::SeeOther);

    let mut expected = vec!["Failed"; 5];
    expected.extend(["Lockout", "Login", "Logout"]);
    assert_eq!(
        recorder.names(),
        expected,
        "Lockout once, on the first refused attempt"
    );
    let events = recorder.0.lock().unwrap().clone();
    assert_eq!(
        events[0],
        AuthEvent::Failed {
            email: "ada@example.org".into(),
            user_id: Some(user_id),
        }
    );
    assert_eq!(
        events[5],
        AuthEvent::Lockout {
            email: "ada@example.org".into(),
            ip: "1.2.3.4".into(),
            user_id: Some(user_id),
        }
    );
    assert_eq!(
        events[6],
        AuthEvent::Login {
            user_id,
            remember: false
        }
    );
    assert_eq!(events[7], AuthEvent::Logout { user_id });
}

#[rocket::async_test]
async fn host_without_a_home_route_fails_to_ignite() {
    let database = crate::helpers::TestDb::new().await;
    let rocket = rocket::custom(figment(&database.url))
        .mount("/", routes![dashboard])
        .attach(Gatehouse::new());
    assert!(MissingRoute("home").to_string().contains("`home`"));
    assert_fails_to_ignite(rocket).await;
}

#[rocket::async_test]
async fn host_without_a_dashboard_route_fails_to_ignite() {
    let database = crate::helpers::TestDb::new().await;
    let rocket = rocket::custom(figment(&database.url))
        .mount("/", routes![home])
        .attach(Gatehouse::new());
    assert!(MissingRoute("dashboard")
        .to_string()
        .contains("`dashboard`"));
    assert_fails_to_ignite(rocket).await;
}

#[rocket::async_test]
async fn host_routes_are_found_where_the_host_mounted_them() {
    let app = spawn_host(|f| {
        rocket::custom(f)
            .mount("/app", routes![home, dashboard])
            .attach(Gatehouse::new())
    })
    .await;
    app.create_user("ada@example.org", PASSWORD).await;
    // A signed-in browser on the sign-in screen goes to the host's dashboard.
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let answer = app
        .client
        .get("/login")
        .header(Accept::HTML)
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::SeeOther);
    assert_eq!(answer.headers().get_one("Location"), Some("/app/dashboard"));
}

#[get("/whoami")]
fn whoami(user: Option<AuthUser>) -> String {
    user.map(|u| u.email).unwrap_or_default()
}

#[get("/welcome")]
fn welcome(_guest: gatehouse::Guest, _session: gatehouse::Session) -> &'static str {
    "welcome"
}

#[rocket::async_test]
async fn a_host_that_uses_the_guards_without_attaching_gatehouse_fails_at_launch() {
    for (name, rocket) in [
        (
            "AuthUser",
            rocket::custom(figment("sqlite::memory:")).mount("/", routes![home, dashboard]),
        ),
        (
            "Option<AuthUser>",
            rocket::custom(figment("sqlite::memory:")).mount("/", routes![whoami]),
        ),
        (
            "Guest, Session",
            rocket::custom(figment("sqlite::memory:")).mount("/", routes![welcome]),
        ),
    ] {
        let error = rocket.ignite().await.expect_err(name);
        assert!(
            matches!(error.kind(), ErrorKind::SentinelAborts(aborted) if !aborted.is_empty()),
            "{name}: {error:?}"
        );
    }
    // Attached, the same routes launch.
    let attached = rocket::custom(figment("sqlite::memory:"))
        .mount("/", routes![home, dashboard, whoami, welcome])
        .attach(Gatehouse::new());
    assert!(attached.ignite().await.is_ok());
}

#[rocket::async_test]
async fn odata_sets_on_an_in_memory_sqlite_database_are_refused_at_start() {
    // Its reads could not be held to the statement timeout: only the
    // threads that read a database file can be.
    let rocket = rocket::custom(figment("sqlite::memory:"))
        .mount("/", routes![home, dashboard])
        .attach(Gatehouse::new().odata_set(gatehouse::odata::security_events()));
    assert_fails_to_ignite(rocket).await;
}
