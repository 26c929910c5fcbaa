//! Sign-in under hostile load: a bounded hash queue, a failure budget per
//! client IP over all addresses, and a throttle that counts failures, not
//! sign-ins still being checked.

use std::net::SocketAddr;

use rocket::futures::future::join_all;
use rocket::http::{ContentType, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{header, json, spawn_app, spawn_app_with, PASSWORD};

const WRONG: &str = "not the password";

/// `POST /auth/login` (JSON) from `peer`: status, `Retry-After` and body.
async fn sign_in(
    client: &Client,
    email: &str,
    password: &str,
    peer: &str,
) -> (Status, Option<String>, Value) {
    let response = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .remote(peer.parse::<SocketAddr>().unwrap())
        .body(json!({"email": email, "password": password}).to_string())
        .dispatch()
        .await;
    let status = response.status();
    let retry_after = header(&response, "Retry-After");
    (status, retry_after, json(response).await)
}

#[rocket::async_test]
async fn a_full_hash_queue_answers_busy_before_any_write() {
    let app = spawn_app_with(|f| f.merge(("auth.hash_queue", 1))).await;
    let client = &app.client;
    let attempts = (0..8).map(|i| {
        let email = format!("nobody{i}@example.org");
        async move { sign_in(client, &email, WRONG, "10.0.0.1:1000").await }
    });
    let answers = join_all(attempts).await;

    let busy: Vec<_> = answers
        .iter()
        .filter(|(status, _, _)| *status == Status::ServiceUnavailable)
        .collect();
    let checked = answers
        .iter()
        .filter(|(status, _, _)| *status == Status::UnprocessableEntity)
        .count();
    assert!(
        !busy.is_empty(),
        "one place, eight sign-ins at once: {answers:?}"
    );
    assert!(checked >= 1, "{answers:?}");
    assert_eq!(busy.len() + checked, 8, "{answers:?}");
    for (_, retry_after, body) in &busy {
        assert_eq!(retry_after.as_deref(), Some("1"));
        assert_eq!(body, &json!({"message": "busy"}));
    }
    // Refused sign-ins wrote nothing: one counter per checked address, and
    // the IP's failure budget.
    assert_eq!(app.count("gatehouse_throttle").await, checked as i64 + 1);
}

#[rocket::async_test]
async fn spraying_one_password_over_many_addresses_is_stopped_per_ip() {
    let app = spawn_app().await;
    app.create_user("victim@example.org", PASSWORD).await;
    let client = app.another_instance().await;
    let sprayer = "203.0.113.9:4000";
    for i in 0..100 {
        let (status, _, _) =
            sign_in(&client, &format!("user{i}@example.org"), WRONG, sprayer).await;
        assert_eq!(status, Status::UnprocessableEntity, "attempt {}", i + 1);
    }

    // The 101st address, and every other one, is refused for this IP …
    for email in [
        "user100@example.org",
        "user0@example.org",
        "victim@example.org",
    ] {
        let (status, retry_after, body) = sign_in(&client, email, PASSWORD, sprayer).await;
        assert_eq!(status, Status::TooManyRequests, "{email}");
        let seconds: u64 = retry_after.expect("Retry-After").parse().unwrap();
        assert!((1..=60).contains(&seconds));
        assert_eq!(body["message"], "auth_throttle");
    }
    // … but not for another IP.
    let (status, _, _) =
        sign_in(&client, "victim@example.org", PASSWORD, "198.51.100.7:4000").await;
    assert_eq!(status, Status::Ok);
}

#[rocket::async_test]
async fn the_ip_budget_is_configurable_and_counts_only_failures() {
    let app = spawn_app_with(|f| f.merge(("auth.ip_throttle_attempts", 3))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let client = app
        .another_instance_with(|f| f.merge(("auth.ip_throttle_attempts", 3)))
        .await;
    let ip = "192.0.2.1:1";
    for _ in 0..5 {
        let (status, _, _) = sign_in(&client, "ada@example.org", PASSWORD, ip).await;
        assert_eq!(status, Status::Ok, "successes spend nothing");
    }
    for i in 0..3 {
        let (status, _, _) = sign_in(&client, &format!("x{i}@example.org"), WRONG, ip).await;
        assert_eq!(status, Status::UnprocessableEntity);
    }
    let (status, _, _) = sign_in(&client, "ada@example.org", PASSWORD, ip).await;
    assert_eq!(status, Status::TooManyRequests);
}

#[rocket::async_test]
async fn concurrent_sign_ins_with_the_right_password_all_succeed() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let client = app.another_instance().await;
    for n in [6, 12] {
        let attempts = (0..n).map(|_| sign_in(&client, "ada@example.org", PASSWORD, "10.1.1.1:1"));
        let statuses: Vec<Status> = join_all(attempts).await.into_iter().map(|a| a.0).collect();
        assert_eq!(statuses, vec![Status::Ok; n], "{n} at once");
    }
}

#[rocket::async_test]
async fn forgot_password_has_a_budget_per_ip_over_all_addresses() {
    let app = spawn_app_with(|f| f.merge(("auth.ip_throttle_attempts", 3))).await;
    let client = app
        .another_instance_with(|f| f.merge(("auth.ip_throttle_attempts", 3)))
        .await;
    let forgot = |email: String, peer: &'static str| {
        let client = &client;
        async move {
            client
                .post("/auth/forgot-password")
                .header(ContentType::JSON)
                .remote(peer.parse::<SocketAddr>().unwrap())
                .body(json!({ "email": email }).to_string())
                .dispatch()
                .await
                .status()
        }
    };
    for i in 0..3 {
        assert_eq!(
            forgot(format!("a{i}@example.org"), "192.0.2.8:1").await,
            Status::Ok
        );
    }
    assert_eq!(
        forgot("a9@example.org".into(), "192.0.2.8:1").await,
        Status::TooManyRequests
    );
    assert_eq!(
        forgot("a9@example.org".into(), "192.0.2.9:1").await,
        Status::Ok
    );
}

#[rocket::async_test]
async fn a_busy_form_post_goes_back_to_the_screen_with_the_message() {
    let app = spawn_app_with(|f| f.merge(("auth.hash_queue", 1))).await;
    let client = app
        .another_instance_with(|f| f.merge(("auth.hash_queue", 1)))
        .await;
    let posts = (0..8).map(|i| {
        let client = &client;
        async move {
            client
                .post("/auth/login")
                .header(ContentType::Form)
                .header(rocket::http::Header::new("Accept", "text/html"))
                .body(format!(
                    "email=nobody{i}%40example.org&password=wrong+guess"
                ))
                .dispatch()
                .await
        }
    });
    let answers = join_all(posts).await;
    let mut busy = 0;
    for response in &answers {
        assert_eq!(response.status(), Status::SeeOther);
        assert_eq!(crate::helpers::location(response), "/login");
        let cookie = crate::helpers::set_cookie(response, &app.cookie_name).expect("a session");
        let page = client
            .get("/login")
            .header(rocket::http::Header::new("Accept", "text/html"))
            .cookie(cookie)
            .dispatch()
            .await
            .into_string()
            .await
            .unwrap_or_default();
        if page.contains("We are very busy right now") {
            busy += 1;
        } else {
            assert!(page.contains("These credentials do not match"), "{page}");
        }
    }
    assert!(busy >= 1, "one place, eight form posts at once");
}

#[rocket::async_test]
async fn one_client_holds_only_its_share_of_the_hash_queue() {
    // Eight places: one client IP may hold two of them.
    let app = spawn_app_with(|f| f.merge(("auth.hash_queue", 8))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let client = &app.client;
    let flood = (0..6).map(|i| {
        let email = format!("nobody{i}@example.org");
        async move { sign_in(client, &email, WRONG, "198.51.100.1:1").await }
    });
    let user = sign_in(client, "ada@example.org", PASSWORD, "203.0.113.50:1");
    let (flooded, user) = rocket::futures::join!(join_all(flood), user);

    let busy = flooded
        .iter()
        .filter(|(status, _, _)| *status == Status::ServiceUnavailable)
        .count();
    assert!(
        busy >= 1,
        "the flooding address is held to its share: {flooded:?}"
    );
    assert_eq!(
        user.0,
        Status::Ok,
        "another address still finds a place: {user:?}"
    );
}
