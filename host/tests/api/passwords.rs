//! Hashes from a PHP application sharing `users` verify and are upgraded.

use std::time::{Duration, Instant};

use rocket::http::{ContentType, Status};
use serde_json::json;

use crate::helpers::{spawn_app, TestApp, PASSWORD};

fn php_bcrypt(password: &str) -> String {
    bcrypt::hash_with_result(password, 4)
        .expect("bcrypt")
        .format_for_version(bcrypt::Version::TwoY)
}

#[rocket::async_test]
async fn php_2y_bcrypt_hash_signs_in_and_is_upgraded_to_argon2id() {
    let app = spawn_app().await;
    let hash = php_bcrypt(PASSWORD);
    assert!(hash.starts_with("$2y$04$"));
    let id = app.create_user_with_hash("ada@example.org", &hash).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let stored = app.password_hash(id).await;
    assert!(stored.starts_with("$argon2id$"), "{stored}");
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(
        app.login("ada@example.org", PASSWORD).await,
        Status::Ok,
        "the new hash verifies"
    );
}

#[rocket::async_test]
async fn bcrypt_2b_hash_signs_in_and_is_upgraded_to_argon2id() {
    let app = spawn_app().await;
    let hash = bcrypt::hash(PASSWORD, 4).expect("bcrypt");
    assert!(hash.starts_with("$2b$04$"));
    let id = app.create_user_with_hash("ada@example.org", &hash).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    assert!(app.password_hash(id).await.starts_with("$argon2id$"));
}

#[rocket::async_test]
async fn wrong_password_leaves_a_bcrypt_hash_untouched() {
    let app = spawn_app().await;
    let hash = php_bcrypt(PASSWORD);
    let id = app.create_user_with_hash("ada@example.org", &hash).await;
    assert_eq!(
        app.login("ada@example.org", "not the password").await,
        Status::UnprocessableEntity
    );
    assert_eq!(app.password_hash(id).await, hash);
}

/// Duration of one failed sign-in for `email`, from its own client address.
async fn failed_attempt(app: &TestApp, email: &str, n: u8) -> Duration {
    let started = Instant::now();
    let response = app
        .client
        .post("/auth/login")
        .header(ContentType::JSON)
        .remote(format!("10.1.0.{n}:4000").parse().unwrap())
        .body(json!({"email": email, "password": "not the password"}).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::UnprocessableEntity);
    started.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// An unknown address is checked against a dummy hash, so it costs what a
/// wrong password costs. (DESIGN.md's 5 ms bound is for a quiet machine; the
/// tests run in parallel, so this only proves no hash is skipped.)
#[rocket::async_test]
async fn unknown_email_costs_as_much_as_a_wrong_password() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for n in 0..15 {
        known.push(failed_attempt(&app, "ada@example.org", n).await);
        unknown.push(failed_attempt(&app, "nobody@example.org", n).await);
    }
    let (known, unknown) = (median(known), median(unknown));
    assert!(
        unknown * 2 > known && known * 2 > unknown,
        "known {known:?}, unknown {unknown:?}"
    );
}
