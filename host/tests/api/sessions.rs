//! Server-side sessions: fixation, storage, cookie flags, expiry, logout.

use rocket::http::{ContentType, Cookie, SameSite, Status};
use rocket::time::Duration;
use sha2::{Digest, Sha256};

use crate::helpers::{location, set_cookie, spawn_app, spawn_app_with, PASSWORD};

fn sha256(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

#[rocket::async_test]
async fn login_replaces_the_pre_login_session_id() {
    let app = spawn_app().await;
    app.create_user_with_organisation("ada@example.org", PASSWORD)
        .await;
    assert_eq!(
        app.get_html("/login?redirect=/dashboard").await.status(),
        Status::Ok
    );
    let old = app.session_cookie().expect("a guest session");
    assert_eq!(app.sessions().await.len(), 1);

    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let new = app.session_cookie().expect("a signed-in session");
    assert_ne!(old, new);
    assert!(app.is_signed_in().await);

    let with_old_id = app
        .client
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new(app.cookie_name.clone(), old.clone()))
        .dispatch()
        .await;
    assert_eq!(
        with_old_id.status(),
        Status::Unauthorized,
        "the pre-login id is a guest"
    );
    let ids: Vec<String> = app.sessions().await.into_iter().map(|s| s.0).collect();
    assert_eq!(ids, vec![sha256(&new)], "the pre-login row is gone");
}

#[rocket::async_test]
async fn session_table_stores_only_the_sha256_of_the_cookie() {
    let app = spawn_app().await;
    let user_id = app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let cookie = app.session_cookie().unwrap();
    assert_eq!(cookie.len(), 64, "256 random bits");
    let rows = app.sessions().await;
    assert_eq!(rows.len(), 1);
    let (id, owner, payload) = &rows[0];
    assert_eq!(id, &sha256(&cookie));
    assert_ne!(id, &cookie);
    assert_eq!(*owner, Some(user_id));
    assert!(!payload.to_string().contains(&cookie));
}

#[rocket::async_test]
async fn session_cookie_is_http_only_lax_and_site_wide() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            serde_json::json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    let cookie = set_cookie(&response, "gatehouse_session").expect("session cookie");
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.same_site(), Some(SameSite::Lax));
    assert_eq!(cookie.path(), Some("/"));
    assert_ne!(cookie.secure(), Some(true), "no Secure on plain http");
    assert_eq!(cookie.domain(), None);
    assert_eq!(cookie.max_age(), None, "the server enforces lifetimes");
}

#[rocket::async_test]
async fn https_base_url_uses_a_host_prefixed_secure_cookie() {
    let app = spawn_app_with(|f| f.merge(("base_url", "https://gatehouse.example"))).await;
    assert_eq!(app.cookie_name, "__Host-gatehouse_session");
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_json(
            "/auth/login",
            serde_json::json!({"email": "ada@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert!(set_cookie(&response, "gatehouse_session").is_none());
    let cookie = set_cookie(&response, "__Host-gatehouse_session").expect("prefixed cookie");
    assert_eq!(cookie.secure(), Some(true));
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.same_site(), Some(SameSite::Lax));
    assert_eq!(cookie.path(), Some("/"));
    assert_eq!(cookie.domain(), None);
    drop(response);
    assert!(app.is_signed_in().await);
}

#[rocket::async_test]
async fn idle_session_expires_after_idle_minutes() {
    let app = spawn_app_with(|f| f.merge(("session.idle_minutes", 1))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let idle = "UPDATE sessions SET last_activity = last_activity - $1";
    app.execute(app.db.query(idle).bind(30_i64)).await;
    assert!(app.is_signed_in().await, "30 s idle is within the minute");
    app.execute(app.db.query(idle).bind(100_i64)).await;
    assert!(
        !app.is_signed_in().await,
        "over a minute idle ends the session"
    );
    assert_eq!(app.count("sessions").await, 0, "the expired row is deleted");
}

#[rocket::async_test]
async fn active_session_outlives_the_idle_window() {
    let app = spawn_app_with(|f| f.merge(("session.idle_minutes", 1))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let idle = "UPDATE sessions SET last_activity = last_activity - $1";
    for round in 1..=3 {
        app.execute(app.db.query(idle).bind(45_i64)).await;
        assert!(
            app.is_signed_in().await,
            "a request every 45 s keeps it alive ({round})"
        );
    }
}

#[rocket::async_test]
async fn session_expires_after_the_absolute_lifetime_however_active() {
    let app = spawn_app_with(|f| f.merge(("session.absolute_hours", 1))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let (id, _, mut payload) = app.sessions().await.remove(0);
    let created_at = payload["created_at"].as_i64().expect("created_at");
    payload["created_at"] = (created_at - 3601).into();
    app.execute(
        app.db
            .query("UPDATE sessions SET payload = $1 WHERE id = $2")
            .bind(payload.to_string())
            .bind(id),
    )
    .await;
    assert!(!app.is_signed_in().await);
    assert_eq!(app.count("sessions").await, 0);
}

#[rocket::async_test]
async fn logout_deletes_the_session_row_expires_the_cookie_and_goes_home() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let old = app.session_cookie().unwrap();
    assert_eq!(app.count("sessions").await, 1);

    let response = app.post_form("/logout", "").await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/");
    let removal = set_cookie(&response, "gatehouse_session").expect("removal cookie");
    assert_eq!(removal.max_age(), Some(Duration::ZERO));
    assert_eq!(removal.value(), "");
    drop(response);

    assert_eq!(app.count("sessions").await, 0);
    assert_eq!(app.session_cookie(), None, "the browser dropped the cookie");
    assert!(!app.is_signed_in().await);
    let replay = app
        .client
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(Cookie::new("gatehouse_session", old))
        .dispatch()
        .await;
    assert_eq!(replay.status(), Status::Unauthorized);
}

#[rocket::async_test]
async fn logout_as_a_guest_still_goes_home() {
    let app = spawn_app().await;
    let response = app.client.post("/logout").dispatch().await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/");
}

#[rocket::async_test]
async fn logout_confirm_screen_needs_a_signed_in_user() {
    let app = spawn_app().await;
    let response = app.get_html("/logout").await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    drop(response);
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let screen = app.get_html("/logout").await;
    assert_eq!(screen.status(), Status::Ok);
    assert!(screen
        .into_string()
        .await
        .unwrap()
        .contains("action=\"/logout\""));
}

#[rocket::async_test]
async fn a_guest_who_stores_nothing_leaves_no_row_and_gets_no_cookie() {
    let app = spawn_app().await;
    for (path, status) in [
        ("/dashboard", Status::Unauthorized),
        ("/healthz", Status::Ok),
        ("/odata/Users", Status::Unauthorized),
        ("/no/such/page", Status::NotFound),
    ] {
        let response = app.get_json(path).await;
        assert_eq!(response.status(), status, "{path}");
        assert_eq!(set_cookie(&response, &app.cookie_name), None, "{path}");
    }
    let response = app.post_form("/logout", "").await;
    assert_eq!(response.status(), Status::SeeOther);
    drop(response);
    assert_eq!(app.session_cookie(), None);
    assert_eq!(app.count("sessions").await, 0, "no guest row");
}

/// The `user_agent` and `last_activity` of the only session row.
async fn stored(app: &crate::helpers::TestApp) -> (Option<String>, i64) {
    let row = app
        .db
        .fetch_optional(
            app.db
                .query("SELECT user_agent, last_activity FROM sessions"),
        )
        .await
        .unwrap()
        .expect("the session's row");
    (
        gatehouse::db::TextColumn::text(&row, "user_agent").unwrap(),
        sqlx::Row::try_get(&row, "last_activity").unwrap(),
    )
}

#[rocket::async_test]
async fn a_session_is_written_back_only_when_it_changed() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    // A mark that only a write of the whole row replaces.
    let marked = "UPDATE sessions SET user_agent = 'mark', last_activity = last_activity - $1";
    app.execute(app.db.query(marked).bind(5_i64)).await;
    let (_, before) = stored(&app).await;

    assert!(app.is_signed_in().await);
    assert_eq!(
        stored(&app).await,
        (Some("mark".to_owned()), before),
        "a read of an unchanged, recently active session writes nothing"
    );

    app.execute(app.db.query(marked).bind(120_i64)).await;
    assert!(app.is_signed_in().await);
    let (agent, touched) = stored(&app).await;
    assert_eq!(
        agent.as_deref(),
        Some("mark"),
        "a touch writes its time only"
    );
    assert!(touched >= before, "the time of activity is written");

    let (status, body) = crate::second_step::post(
        &app.client,
        "/auth/confirm",
        serde_json::json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    let (agent, _) = stored(&app).await;
    assert_ne!(
        agent.as_deref(),
        Some("mark"),
        "a changed session is written"
    );
}
