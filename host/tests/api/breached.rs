//! A new password found in the breached-password file
//! (`auth.breached_passwords`) is refused wherever a password is set, as
//! `breached`, after the policy's own codes; a password not in it is
//! accepted; a missing or damaged file stops start-up.

use std::path::{Path, PathBuf};

use gatehouse::breached::{import, ImportOptions};
use rocket::error::ErrorKind;
use rocket::http::Status;
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};
use sha1::{Digest, Sha1};
use tempfile::TempDir;

use crate::helpers::{figment, json, PASSWORD};
use crate::mailbox::{request_link, spawn_mail_app_with};

const ADA: &str = "ada@example.org";
/// Strong by every rule of the policy, and in the corpus.
const LEAKED: &str = "Quixotic-Lantern-Harbour-91";
/// Strong, and not in the corpus.
const UNLISTED: &str = "violet meadow lantern orbit";

/// A filter file made by the import from a download the test writes: many
/// hashes of nobody's password, `LEAKED`, and the test's own `PASSWORD`
/// seen once (so that `--min-count 2` leaves it out).
fn filter(dir: &Path) -> PathBuf {
    let line = |password: &str, count: u64| {
        format!(
            "{}:{count}",
            hex::encode_upper(Sha1::digest(password.as_bytes()))
        )
    };
    let mut lines: Vec<String> = (0..2000).map(|i| line(&format!("nobody {i}"), 3)).collect();
    lines.push(line(LEAKED, 41));
    let download = dir.join("pwnedpasswords.txt");
    let text: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
    std::fs::write(&download, text).expect("the download");
    let output = dir.join("breached.bin");
    import(&[&download], &output, &ImportOptions::new(), |_| {}).expect("imported");
    output
}

fn breached() -> Value {
    json!({"message": "validation_failed", "errors": {"password": ["breached"]}})
}

#[rocket::async_test]
async fn a_listed_password_is_refused_on_change_and_reset_and_an_unlisted_one_is_taken() {
    let dir = TempDir::new().expect("a directory");
    let path = filter(dir.path());
    let (app, mailbox) =
        spawn_mail_app_with(|f| f.merge(("auth.breached_passwords", path.display().to_string())))
            .await;
    let ada = app.create_user(ADA, PASSWORD).await;
    let hash = app.password_hash(ada).await;
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);

    let change = |password: &'static str| {
        json!({"current_password": PASSWORD, "password": password,
               "password_confirmation": password})
    };
    let refused = app.post_json("/auth/password", change(LEAKED)).await;
    assert_eq!(refused.status(), Status::UnprocessableEntity);
    assert_eq!(json(refused).await, breached());
    // The policy's own code comes first.
    let common = app
        .post_json("/auth/password", change("password1234"))
        .await;
    assert_eq!(
        json(common).await,
        json!({"message": "validation_failed", "errors": {"password": ["too_common"]}})
    );
    assert_eq!(app.password_hash(ada).await, hash, "unchanged");

    assert_eq!(app.logout().await, Status::SeeOther);
    let link = request_link(&app, &mailbox, ADA).await;
    let reset = |password: &str| {
        json!({"token": link.token, "email": link.email, "password": password,
               "password_confirmation": password})
    };
    let refused = app.post_json("/auth/reset-password", reset(LEAKED)).await;
    assert_eq!(refused.status(), Status::UnprocessableEntity);
    assert_eq!(json(refused).await, breached());
    assert_eq!(app.password_hash(ada).await, hash, "unchanged");
    let taken = app.post_json("/auth/reset-password", reset(UNLISTED)).await;
    assert_eq!(taken.status(), Status::Ok);
    assert_eq!(app.login(ADA, UNLISTED).await, Status::Ok);
}

#[rocket::async_test]
async fn without_the_file_a_listed_password_is_taken() {
    let (app, mailbox) = spawn_mail_app_with(|f| f).await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let reset = json!({"token": link.token, "email": link.email, "password": LEAKED,
                       "password_confirmation": LEAKED});
    let taken = app.post_json("/auth/reset-password", reset).await;
    assert_eq!(taken.status(), Status::Ok);
}

#[rocket::async_test]
async fn a_missing_or_damaged_file_stops_start_up() {
    let dir = TempDir::new().expect("a directory");
    let damaged = dir.path().join("damaged.bin");
    std::fs::write(&damaged, b"not a filter file at all").expect("written");
    let database = crate::helpers::TestDb::new().await;
    for path in [dir.path().join("absent.bin"), damaged] {
        let figment =
            figment(&database.url).merge(("auth.breached_passwords", path.display().to_string()));
        let Err(error) = Client::tracked(gatehouse_host::rocket(figment)).await else {
            panic!("the host started with {}", path.display());
        };
        match error.kind() {
            ErrorKind::FailedFairings(failed) => assert_eq!(
                failed.iter().map(|f| f.name).collect::<Vec<_>>(),
                ["Gatehouse"]
            ),
            other => panic!("unexpected ignite error: {other:?}"),
        }
    }
}
