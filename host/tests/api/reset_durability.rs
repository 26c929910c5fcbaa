//! An answered forgot-password request survives the instance that answered
//! it: it is stored before the 200, and whichever instance runs next sends
//! its mail.

use std::time::{SystemTime, UNIX_EPOCH};

use rocket::http::Status;

use crate::helpers::{TestApp, PASSWORD};
use crate::mailbox::{forgot, reset, spawn_mail_app, RESET_SUBJECT};

const ADA: &str = "ada@example.org";

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}

/// Stores a request as an instance that then died would have left it:
/// answered, and `attempts` tries begun.
async fn left_behind(app: &TestApp, email: &str, attempts: i64) {
    let now = unix_now();
    app.execute(
        app.db
            .query(
                "INSERT INTO gatehouse_reset_requests \
                 (email, language, requested_at, attempts, run_after) VALUES ($1, 'de', $2, $3, $4)",
            )
            .bind(email.to_owned())
            .bind(now - 30)
            .bind(attempts)
            .bind(now),
    )
    .await;
}

#[rocket::async_test]
async fn a_request_another_instance_answered_is_mailed_by_this_one() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    left_behind(&app, ADA, 0).await;

    let mail = mailbox.wait_for_mail(ADA, "Passwort zurücksetzen").await;
    let link = mail.reset_link();
    let response = reset(&app.client, &link.token, ADA, "a brand new passphrase 42").await;
    assert_eq!(response.status(), Status::Ok, "the mailed link works");
    assert_eq!(
        app.count("gatehouse_reset_requests").await,
        0,
        "done, then gone"
    );
}

#[rocket::async_test]
async fn a_request_whose_mail_never_left_is_mailed_despite_the_quiet_period() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    // The first try issued a token (the quiet period is running) and died
    // before the mail left.
    assert_eq!(forgot(&app.client, ADA).await.status(), Status::Ok);
    let first = mailbox.wait_for_mail(ADA, RESET_SUBJECT).await.reset_link();
    left_behind(&app, ADA, 1).await;

    let mails = mailbox.wait_for(2).await;
    let second = mails
        .iter()
        .map(|mail| mail.reset_link())
        .find(|link| link.token != first.token)
        .expect("a second link");
    let response = reset(&app.client, &second.token, ADA, "a brand new passphrase 42").await;
    assert_eq!(response.status(), Status::Ok);
}

#[rocket::async_test]
async fn unknown_addresses_leave_no_request_behind() {
    let (app, mailbox) = spawn_mail_app().await;
    assert_eq!(
        forgot(&app.client, "nobody@example.org").await.status(),
        Status::Ok
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.count("gatehouse_reset_requests").await > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the request was never worked off"
        );
        rocket::tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(mailbox.after_quiet_wait().await.is_empty());
}
