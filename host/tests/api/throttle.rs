//! Sign-in throttling: 5 failures per lower-cased email + client IP per window.

use std::net::SocketAddr;

use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use serde_json::json;

use crate::helpers::{header, json, location, spawn_app, spawn_app_with, PASSWORD};

const WRONG: &str = "not the password";

/// `POST /auth/login` (JSON) from `peer`, optionally with `X-Forwarded-For`.
async fn attempt<'c>(
    client: &'c Client,
    email: &str,
    password: &str,
    peer: &str,
    forwarded_for: Option<&str>,
) -> LocalResponse<'c> {
    let mut request = client
        .post("/auth/login")
        .header(ContentType::JSON)
        .remote(peer.parse::<SocketAddr>().unwrap())
        .body(json!({"email": email, "password": password}).to_string());
    if let Some(chain) = forwarded_for {
        request = request.header(Header::new("X-Forwarded-For", chain.to_owned()));
    }
    request.dispatch().await
}

async fn status(client: &Client, email: &str, password: &str, peer: &str) -> Status {
    attempt(client, email, password, peer, None).await.status()
}

async fn fail_times(client: &Client, n: usize, email: &str, peer: &str) {
    for i in 0..n {
        let got = status(client, email, WRONG, peer).await;
        assert_eq!(
            got,
            Status::UnprocessableEntity,
            "failure {} is counted, not refused",
            i + 1
        );
    }
}

const PEER: &str = "1.2.3.4:5000";

#[rocket::async_test]
async fn login_is_throttled_after_five_failures() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    fail_times(&app.client, 5, "ada@example.org", PEER).await;

    let response = attempt(&app.client, "ada@example.org", PASSWORD, PEER, None).await;
    assert_eq!(
        response.status(),
        Status::TooManyRequests,
        "even the right password"
    );
    let retry_after: u64 = header(&response, "Retry-After")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(
        json(response).await,
        json!({"message": "auth_throttle", "errors": {"email": ["auth_throttle"]},
               "retry_after": retry_after})
    );
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn throttled_form_login_goes_back_to_the_login_screen() {
    let app = spawn_app().await;
    fail_times(&app.client, 5, "ada@example.org", "0.0.0.0:1").await;
    let response = app
        .post_form("/auth/login", "email=ada%40example.org&password=x")
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
}

#[rocket::async_test]
async fn throttle_key_ignores_the_case_of_the_email() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    for email in [
        "Ada@Example.org",
        "ADA@EXAMPLE.ORG",
        "ada@example.org",
        "aDa@example.ORG",
        "ada@EXAMPLE.org",
    ] {
        assert_eq!(
            status(&app.client, email, WRONG, PEER).await,
            Status::UnprocessableEntity
        );
    }
    let got = status(&app.client, "ada@example.org", PASSWORD, PEER).await;
    assert_eq!(got, Status::TooManyRequests);
}

#[rocket::async_test]
async fn throttle_leaves_other_emails_alone() {
    let app = spawn_app().await;
    app.create_user("grace@example.org", PASSWORD).await;
    fail_times(&app.client, 5, "ada@example.org", PEER).await;
    assert_eq!(
        status(&app.client, "ada@example.org", WRONG, PEER).await,
        Status::TooManyRequests
    );
    let grace_wrong = status(&app.client, "grace@example.org", WRONG, PEER).await;
    assert_eq!(grace_wrong, Status::UnprocessableEntity);
    assert_eq!(
        status(&app.client, "grace@example.org", PASSWORD, PEER).await,
        Status::Ok
    );
}

#[rocket::async_test]
async fn throttle_leaves_other_client_ips_alone() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    fail_times(&app.client, 5, "ada@example.org", PEER).await;
    assert_eq!(
        status(&app.client, "ada@example.org", WRONG, PEER).await,
        Status::TooManyRequests
    );
    let elsewhere = status(&app.client, "ada@example.org", PASSWORD, "5.6.7.8:5000").await;
    assert_eq!(elsewhere, Status::Ok);
}

#[rocket::async_test]
async fn guesses_from_one_ipv6_slash_64_share_one_count() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    // Five addresses of one /64, one guess each: a new address per try
    // buys nothing.
    for host in 1..=5 {
        let peer = format!("[2001:db8:1:2::{host}]:5000");
        let got = status(&app.client, "ada@example.org", WRONG, &peer).await;
        assert_eq!(got, Status::UnprocessableEntity, "guess from {peer}");
    }
    let sixth = "[2001:db8:1:2:ffff::6]:5000";
    assert_eq!(
        status(&app.client, "ada@example.org", PASSWORD, sixth).await,
        Status::TooManyRequests,
        "the /64 has spent its five"
    );
    let next_block = "[2001:db8:1:3::1]:5000";
    assert_eq!(
        status(&app.client, "ada@example.org", PASSWORD, next_block).await,
        Status::Ok,
        "the next /64 is another client"
    );
}

#[rocket::async_test]
async fn an_ipv4_mapped_address_counts_as_its_ipv4_address() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    fail_times(&app.client, 3, "ada@example.org", "203.0.113.9:5000").await;
    fail_times(
        &app.client,
        2,
        "ada@example.org",
        "[::ffff:203.0.113.9]:5000",
    )
    .await;
    assert_eq!(
        status(&app.client, "ada@example.org", PASSWORD, "203.0.113.9:5000").await,
        Status::TooManyRequests
    );
}

#[rocket::async_test]
async fn successful_login_clears_the_failure_counter() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    fail_times(&app.client, 4, "ada@example.org", PEER).await;
    assert_eq!(
        status(&app.client, "ada@example.org", PASSWORD, PEER).await,
        Status::Ok
    );
    assert_eq!(app.logout().await, Status::SeeOther);
    fail_times(&app.client, 5, "ada@example.org", PEER).await;
    assert_eq!(
        status(&app.client, "ada@example.org", WRONG, PEER).await,
        Status::TooManyRequests
    );
}

#[rocket::async_test]
async fn throttle_counters_are_shared_by_instances_on_one_database() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let other = app.another_instance().await;
    fail_times(&app.client, 3, "ada@example.org", PEER).await;
    fail_times(&other, 2, "ada@example.org", PEER).await;
    assert_eq!(
        status(&app.client, "ada@example.org", PASSWORD, PEER).await,
        Status::TooManyRequests
    );
    assert_eq!(
        status(&other, "ada@example.org", PASSWORD, PEER).await,
        Status::TooManyRequests
    );
}

#[rocket::async_test]
async fn x_forwarded_for_names_the_client_behind_a_trusted_proxy() {
    let app = spawn_app_with(|f| f.merge(("auth.trusted_proxies", ["10.0.0.1"]))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let proxy = "10.0.0.1:4000";
    for _ in 0..5 {
        let r = attempt(
            &app.client,
            "ada@example.org",
            WRONG,
            proxy,
            Some("1.1.1.1"),
        )
        .await;
        assert_eq!(r.status(), Status::UnprocessableEntity);
    }
    let same = attempt(
        &app.client,
        "ada@example.org",
        PASSWORD,
        proxy,
        Some("1.1.1.1"),
    )
    .await;
    assert_eq!(same.status(), Status::TooManyRequests);
    drop(same);
    let spoofed_left = attempt(
        &app.client,
        "ada@example.org",
        WRONG,
        proxy,
        Some("2.2.2.2, 1.1.1.1"),
    )
    .await;
    assert_eq!(
        spoofed_left.status(),
        Status::TooManyRequests,
        "the right-most address counts"
    );
    drop(spoofed_left);
    let other = attempt(
        &app.client,
        "ada@example.org",
        PASSWORD,
        proxy,
        Some("2.2.2.2"),
    )
    .await;
    assert_eq!(
        other.status(),
        Status::Ok,
        "another client behind the proxy"
    );
}

#[rocket::async_test]
async fn x_forwarded_for_from_an_untrusted_peer_is_ignored() {
    let app = spawn_app_with(|f| f.merge(("auth.trusted_proxies", ["10.0.0.1"]))).await;
    app.create_user("ada@example.org", PASSWORD).await;
    let peer = "9.9.9.9:4000";
    for i in 0..5 {
        let chain = format!("3.3.3.{i}");
        let r = attempt(&app.client, "ada@example.org", WRONG, peer, Some(&chain)).await;
        assert_eq!(r.status(), Status::UnprocessableEntity);
    }
    let r = attempt(
        &app.client,
        "ada@example.org",
        PASSWORD,
        peer,
        Some("4.4.4.4"),
    )
    .await;
    assert_eq!(r.status(), Status::TooManyRequests);
}

#[rocket::async_test]
async fn concurrent_guesses_get_five_tries_and_no_more() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let guesses = (0..20).map(|_| status(&app.client, "ada@example.org", WRONG, PEER));
    let statuses = futures::future::join_all(guesses).await;
    let counted = |s: Status| statuses.iter().filter(|&&got| got == s).count();
    // Beyond the five checks, a guess is refused by the throttle (429) or,
    // past this client's share of the hash queue, before it (503 busy).
    assert_eq!(
        (
            counted(Status::UnprocessableEntity),
            counted(Status::TooManyRequests) + counted(Status::ServiceUnavailable)
        ),
        (5, 15),
        "{statuses:?}"
    );
}
