//! An ended session stays ended: a request that loaded the session before a
//! logout or a password reset, and changes it afterwards, cannot bring it
//! back.

use std::sync::Arc;

use gatehouse::{AuthUser, Gatehouse, Session};
use rocket::figment::Figment;
use rocket::http::{Cookie, Header, Status};
use rocket::tokio::sync::Notify;
use rocket::{get, post, routes, Build, Rocket, State};
use serde_json::json;

use crate::helpers::{spawn_host, TestApp, PASSWORD};
use crate::mailbox::{request_link_via, reset, second_instance, Mailbox};

#[get("/")]
fn home() -> &'static str {
    "home"
}

#[get("/dashboard")]
fn dashboard(user: AuthUser) -> String {
    user.email
}

/// Holds a request between loading its session and changing it.
#[derive(Default)]
struct Gate {
    /// Notified once the held request has its session.
    entered: Notify,
    /// Lets the held request go on.
    release: Notify,
}

/// A request that keeps a note in the session after the gate opens, like a
/// form post whose body is still arriving or a page that stores a flash.
#[post("/held")]
async fn held(session: Session, gate: &State<Arc<Gate>>) -> &'static str {
    gate.entered.notify_one();
    gate.release.notified().await;
    session
        .host()
        .insert("note", json!("written after the session ended"));
    "done"
}

fn host(figment: Figment, gate: Arc<Gate>) -> Rocket<Build> {
    rocket::custom(figment)
        .mount("/", routes![home, dashboard, held])
        .manage(gate)
        .attach(Gatehouse::new())
}

async fn spawn(mailbox: &Mailbox) -> (TestApp, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let shared = gate.clone();
    let app = spawn_host(|f| host(mailbox.configure(f), shared)).await;
    (app, gate)
}

/// Whether the session cookie value `id` signs a request in.
async fn signs_in(app: &TestApp, id: &str) -> bool {
    let response = app
        .client
        .get("/dashboard")
        .header(Header::new("Accept", "application/json"))
        .cookie(Cookie::new(app.cookie_name.clone(), id.to_owned()))
        .dispatch()
        .await;
    response.status() == Status::Ok
}

/// Runs the held request while `end` ends the session, then lets it finish.
async fn hold_across(app: &TestApp, gate: &Gate, end: impl std::future::Future<Output = ()>) {
    let held = async {
        let response = app.client.post("/held").dispatch().await;
        assert_eq!(response.status(), Status::Ok);
    };
    let ending = async {
        gate.entered.notified().await;
        end.await;
        gate.release.notify_one();
    };
    rocket::futures::join!(held, ending);
}

#[rocket::async_test]
async fn a_request_held_open_across_a_logout_cannot_bring_the_session_back() {
    let mailbox = Mailbox::new();
    let (app, gate) = spawn(&mailbox).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let id = app.session_cookie().expect("a session cookie");

    hold_across(&app, &gate, async {
        assert_eq!(app.logout().await, Status::SeeOther);
    })
    .await;

    assert!(!signs_in(&app, &id).await, "the old cookie is dead");
    assert!(
        app.sessions()
            .await
            .iter()
            .all(|(_, user, _)| user.is_none()),
        "no signed-in session row is left: {:?}",
        app.sessions().await
    );
}

#[rocket::async_test]
async fn a_request_held_open_across_a_reset_cannot_bring_the_session_back() {
    let mailbox = Mailbox::new();
    let (app, gate) = spawn(&mailbox).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let id = app.session_cookie().expect("a session cookie");
    // The reset is done by someone else (a guest browser on another client).
    let guest = second_instance(&app, &mailbox).await;
    let link = request_link_via(&guest, &mailbox, "ada@example.org").await;

    hold_across(&app, &gate, async {
        let response = reset(
            &guest,
            &link.token,
            "ada@example.org",
            "a brand new passphrase 42",
        )
        .await;
        assert_eq!(response.status(), Status::Ok);
    })
    .await;

    assert!(!signs_in(&app, &id).await, "the stolen cookie is dead");
    assert!(
        app.sessions().await.is_empty(),
        "{:?}",
        app.sessions().await
    );
}

#[rocket::async_test]
async fn a_live_session_keeps_what_a_request_stores() {
    let mailbox = Mailbox::new();
    let (app, gate) = spawn(&mailbox).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let id = app.session_cookie().expect("a session cookie");

    hold_across(&app, &gate, async {}).await;

    assert!(signs_in(&app, &id).await);
    let notes: Vec<_> = app
        .sessions()
        .await
        .into_iter()
        .filter_map(|(_, _, payload)| payload["data"]["host:note"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(notes, ["written after the session ended"]);
}
