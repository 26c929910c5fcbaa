//! A new password found in the breached-password file
//! (`auth.breached_passwords`) is refused wherever a password is set, as
//! `breached`, after the policy's own codes; a password not in it is
//! accepted; a missing or damaged file stops start-up. A sign-in whose right
//! password is in it must choose a new one before anything else.

use std::path::{Path, PathBuf};

use gatehouse::breached::{import, ImportOptions};
use rocket::error::ErrorKind;
use rocket::http::{ContentType, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};
use sha1::{Digest, Sha1};
use tempfile::TempDir;

use crate::helpers::{figment, json, location, set_cookie, PASSWORD};
use crate::mailbox::{request_link, spawn_mail_app_with, Mailbox};

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

/// An app that checks new passwords against the test's corpus (a filter
/// file made in `dir`), with its mailbox.
async fn app_checking_against_the_corpus(dir: &TempDir) -> (crate::helpers::TestApp, Mailbox) {
    let path = filter(dir.path());
    spawn_mail_app_with(|f| f.merge(("auth.breached_passwords", path.display().to_string()))).await
}

fn breached() -> Value {
    json!({"message": "validation_failed", "errors": {"password": ["breached"]}})
}

#[rocket::async_test]
async fn a_listed_password_is_refused_on_change_and_reset_and_an_unlisted_one_is_taken() {
    let dir = TempDir::new().expect("a directory");
    let (app, mailbox) = app_checking_against_the_corpus(&dir).await;
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

/// What a sign-in with a listed password is told to do next.
fn change_first() -> Value {
    json!({"kind": "password_change", "version": "1", "payload": {"reason": "breached"}})
}

fn new_password(password: &str, confirmation: &str) -> Value {
    json!({"password": password, "password_confirmation": confirmation})
}

/// An app that checks passwords against the test's corpus, with Ada, whose
/// password is in it (a member of an organisation: after the change, the
/// host's dispenser sends her to `dashboard`).
async fn app_with_a_leaked_password(dir: &TempDir) -> (crate::helpers::TestApp, Mailbox, i64) {
    let (app, mailbox) = app_checking_against_the_corpus(dir).await;
    let ada = app.create_user_with_organisation(ADA, LEAKED).await;
    (app, mailbox, ada)
}

#[rocket::async_test]
async fn a_sign_in_with_a_listed_password_changes_it_before_anything_else() {
    let dir = TempDir::new().expect("a directory");
    let (app, mailbox, ada) = app_with_a_leaked_password(&dir).await;
    // Another browser signed in first: it is held the same way, and the
    // change ends it.
    let other = app.another_instance().await;
    let signed_in = other
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": ADA, "password": LEAKED}).to_string())
        .dispatch()
        .await;
    assert_eq!(signed_in.status(), Status::Ok);
    drop(signed_in);

    let login = app
        .post_json("/auth/login", json!({"email": ADA, "password": LEAKED}))
        .await;
    assert_eq!(login.status(), Status::Ok);
    assert_eq!(
        json(login).await,
        json!({"message": "login_success", "next": change_first()})
    );
    let events = app.event_names(ada).await;
    assert_eq!(
        events.iter().filter(|e| *e == "breached_password").count(),
        1,
        "recorded when the mark is set: {events:?}"
    );

    // Nothing else is open: scripts get 403, browsers the change screen.
    let account = app.get_json("/account").await;
    assert_eq!(account.status(), Status::Forbidden);
    assert_eq!(
        json(account).await,
        json!({"message": "password_change_required"})
    );
    let page = app.get_html("/account").await;
    assert_eq!(page.status(), Status::SeeOther);
    assert_eq!(location(&page), "/login/change-password");
    let org = app
        .post_json(
            "/auth/intents/org-setup",
            json!({"org_name": "Analytical Engines"}),
        )
        .await;
    assert_eq!(org.status(), Status::Forbidden);
    let events_set = app.get_json("/odata/SecurityEvents").await;
    assert_eq!(events_set.status(), Status::Forbidden);
    assert_eq!(
        json(events_set).await["error"]["code"],
        "password_change_required"
    );
    let screen = app.get_html("/login/change-password").await;
    assert_eq!(screen.status(), Status::Ok);
    let html = screen.into_string().await.unwrap_or_default();
    assert!(
        html.contains(r#"action="/auth/intents/password-change""#),
        "{html}"
    );
    assert_eq!(app.get_html("/logout").await.status(), Status::Ok);

    // A new password is held to the rules of every new password.
    let hash = app.password_hash(ada).await;
    for (body, code) in [
        (new_password(LEAKED, LEAKED), "breached"),
        (new_password(UNLISTED, "something else"), "confirmed"),
    ] {
        let refused = app.post_json("/auth/intents/password-change", body).await;
        assert_eq!(refused.status(), Status::UnprocessableEntity);
        assert_eq!(json(refused).await["errors"]["password"][0], code);
    }
    assert_eq!(app.password_hash(ada).await, hash, "unchanged");

    let changed = app
        .post_json(
            "/auth/intents/password-change",
            new_password(UNLISTED, UNLISTED),
        )
        .await;
    assert_eq!(changed.status(), Status::Ok);
    let answer = json(changed).await;
    assert_eq!(answer["status"], "satisfied");
    assert_eq!(answer["next"]["kind"], "redirect", "{answer}");
    assert_eq!(answer["next_step"], Value::Null);
    assert_eq!(answer["errors"], Value::Null);

    // A full password change: this browser goes on, the other is signed
    // out, the event and the mail are there, the mark is gone.
    assert_eq!(app.get_json("/account").await.status(), Status::Ok);
    let elsewhere = other
        .get("/dashboard")
        .header(ContentType::JSON)
        .dispatch()
        .await;
    assert_eq!(elsewhere.status(), Status::Unauthorized);
    assert!(app
        .event_names(ada)
        .await
        .contains(&"password_changed".to_owned()));
    mailbox
        .wait_for_mail(ADA, "Your password was changed")
        .await;
    let again = app
        .post_json(
            "/auth/intents/password-change",
            new_password(UNLISTED, UNLISTED),
        )
        .await;
    assert_eq!(again.status(), Status::NotFound, "nothing is due any more");
    assert_eq!(json(again).await, json!({"message": "unknown_intent"}));
    assert_eq!(
        app.get_html("/login/change-password").await.status(),
        Status::SeeOther
    );
    assert_eq!(app.logout().await, Status::SeeOther);
    let login = app
        .post_json("/auth/login", json!({"email": ADA, "password": UNLISTED}))
        .await;
    assert_eq!(json(login).await["next"]["kind"], "redirect");
}

/// Ada signs in with her listed password and "keep me signed in" by a
/// form post, without JavaScript: on to the change screen. Answers her
/// remember-me cookie.
async fn signed_in_remembered(app: &crate::helpers::TestApp) -> rocket::http::Cookie<'static> {
    let login = app
        .post_form(
            "/auth/login",
            &format!("email={ADA}&password={LEAKED}&remember=on"),
        )
        .await;
    assert_eq!(login.status(), Status::SeeOther);
    assert_eq!(location(&login), "/login/change-password");
    set_cookie(&login, "gatehouse_remember").expect("a remember cookie")
}

#[rocket::async_test]
async fn every_sign_in_of_a_marked_user_is_held_and_ten_minutes_end_it() {
    let dir = TempDir::new().expect("a directory");
    let (app, _mailbox, ada) = app_with_a_leaked_password(&dir).await;
    let remember = signed_in_remembered(&app).await;

    // A remember-me cookie signs in again, held the same way.
    let browser = app.another_instance().await;
    let recalled = browser
        .get("/dashboard")
        .header(ContentType::JSON)
        .cookie(remember)
        .dispatch()
        .await;
    assert_eq!(recalled.status(), Status::Forbidden);
    drop(recalled);

    // A refused form answer goes back to the screen with its errors.
    let refused = app
        .post_form(
            "/auth/intents/password-change",
            &format!("password={LEAKED}&password_confirmation={LEAKED}"),
        )
        .await;
    assert_eq!(refused.status(), Status::SeeOther);
    assert_eq!(location(&refused), "/login/change-password");
    drop(refused);

    // Ten minutes pass: the session ends, and its remember-me cookie.
    let remembered_before = app.count("gatehouse_remember").await;
    app.set_session_data(ada, "password_change.until", json!(0))
        .await;
    let lapsed = app.get_json("/account").await;
    assert_eq!(lapsed.status(), Status::Unauthorized);
    drop(lapsed);
    assert!(app.count("gatehouse_remember").await < remembered_before);
    assert!(!app.is_signed_in().await);

    // Signing in again starts it again.
    let login = app
        .post_json("/auth/login", json!({"email": ADA, "password": LEAKED}))
        .await;
    assert_eq!(json(login).await["next"], change_first());
    let done = app
        .post_form(
            "/auth/intents/password-change",
            &format!("password={UNLISTED}&password_confirmation={UNLISTED}"),
        )
        .await;
    assert_eq!(done.status(), Status::SeeOther);
    assert!(
        location(&done).ends_with("/dashboard"),
        "{}",
        location(&done)
    );
    drop(done);
    assert!(app.is_signed_in().await);
}

/// What a change without the current password is told.
fn current_password_required() -> Value {
    json!({"message": "validation_failed", "errors": {"current_password": ["required"]}})
}

#[rocket::async_test]
async fn a_copied_remember_me_cookie_cannot_set_the_new_password_without_the_current_one() {
    let dir = TempDir::new().expect("a directory");
    let (app, _mailbox, ada) = app_with_a_leaked_password(&dir).await;
    let remember = signed_in_remembered(&app).await;
    let hash = app.password_hash(ada).await;

    // A thief's browser with a copy of the remember-me cookie recalls the
    // session: it is held at the change, and asked for the current password.
    let thief = app.another_instance().await;
    let recalled = thief
        .get("/login/change-password")
        .header(rocket::http::Header::new("Accept", "text/html"))
        .cookie(remember)
        .dispatch()
        .await;
    assert_eq!(recalled.status(), Status::Ok);
    let session = set_cookie(&recalled, &app.cookie_name).expect("a recalled session");
    let html = recalled.into_string().await.unwrap_or_default();
    assert!(html.contains(r#"name="current_password""#), "{html}");
    let change = |body: Value| {
        thief
            .post("/auth/intents/password-change")
            .header(ContentType::JSON)
            .cookie(session.clone())
            .body(body.to_string())
            .dispatch()
    };
    let refused = change(new_password(UNLISTED, UNLISTED)).await;
    assert_eq!(refused.status(), Status::UnprocessableEntity);
    assert_eq!(json(refused).await, current_password_required());
    let mut wrong = new_password(UNLISTED, UNLISTED);
    wrong["current_password"] = json!("a guess at it");
    let refused = change(wrong).await;
    assert_eq!(
        json(refused).await["errors"]["current_password"],
        json!(["current_password"])
    );
    assert_eq!(app.password_hash(ada).await, hash, "unchanged");
    assert!(app.event_names(ada).await.contains(&"failed".to_owned()));

    // The browser whose own sign-in was held goes without it, and shows no
    // such field.
    let html = app
        .get_html("/login/change-password")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(!html.contains(r#"name="current_password""#), "{html}");
    let changed = app
        .post_json(
            "/auth/intents/password-change",
            new_password(UNLISTED, UNLISTED),
        )
        .await;
    assert_eq!(changed.status(), Status::Ok);
    assert_eq!(json(changed).await["status"], "satisfied");
}

#[rocket::async_test]
async fn the_signed_in_browser_goes_without_the_current_password_only_within_its_minutes() {
    let dir = TempDir::new().expect("a directory");
    let (app, _mailbox, ada) = app_with_a_leaked_password(&dir).await;
    let login = app
        .post_json("/auth/login", json!({"email": ADA, "password": LEAKED}))
        .await;
    assert_eq!(json(login).await["next"], change_first());
    // Its own minutes are over (its session is still held at the change).
    app.set_session_data(ada, "password_change.signed_in_until", json!(0))
        .await;
    let refused = app
        .post_json(
            "/auth/intents/password-change",
            new_password(UNLISTED, UNLISTED),
        )
        .await;
    assert_eq!(json(refused).await, current_password_required());
    let mut with_current = new_password(UNLISTED, UNLISTED);
    with_current["current_password"] = json!(LEAKED);
    let changed = app
        .post_json("/auth/intents/password-change", with_current)
        .await;
    assert_eq!(changed.status(), Status::Ok);
    assert_eq!(json(changed).await["status"], "satisfied");
}

#[rocket::async_test]
async fn a_listed_password_marks_a_two_factor_account_only_once_its_second_step_passed() {
    let dir = TempDir::new().expect("a directory");
    let (app, _mailbox) = app_checking_against_the_corpus(&dir).await;
    // Ada turns two-factor on under a password that is not listed; then
    // her account is given a listed one (set before the list knew it).
    let ada = app.create_user_with_organisation(ADA, UNLISTED).await;
    assert_eq!(app.login(ADA, UNLISTED).await, Status::Ok);
    let enrolment = app
        .post_json("/auth/two-factor", json!({"password": UNLISTED}))
        .await;
    let secret = json(enrolment).await["secret"]
        .as_str()
        .expect("a secret")
        .to_owned();
    let confirm = json!({"code": crate::two_factor::code(&secret, crate::two_factor::now())});
    let confirmed = app.post_json("/auth/two-factor/confirm", confirm).await;
    assert_eq!(confirmed.status(), Status::Ok);
    drop(confirmed);
    assert_eq!(app.logout().await, Status::SeeOther);
    let leaked = app.create_user("leaked@example.org", LEAKED).await;
    let hash = app.password_hash(leaked).await;
    let sql = app
        .db
        .dialect()
        .placeholders("UPDATE users SET password = $1 WHERE id = $2");
    app.execute(sqlx::query(&sql).bind(hash).bind(ada)).await;
    let events_before = app.event_names(ada).await;

    // Someone who knows the listed password, but not the second factor:
    // nothing is marked, no session of hers is held.
    let stranger = app
        .post_json("/auth/login", json!({"email": ADA, "password": LEAKED}))
        .await;
    assert_eq!(
        json(stranger).await,
        json!({"message": "two_factor_required"})
    );
    assert_eq!(breached_at(&app, ada).await, None, "not marked yet");
    assert_eq!(app.event_names(ada).await, events_before);

    // Her second step passes: now she is marked, and held at the change.
    let code = crate::two_factor::code(&secret, crate::two_factor::now() + 30);
    let answered = app
        .post_json("/auth/two-factor-challenge", json!({"code": code}))
        .await;
    assert_eq!(answered.status(), Status::Ok);
    assert_eq!(json(answered).await["next"], change_first());
    assert!(breached_at(&app, ada).await.is_some());
    assert!(app
        .event_names(ada)
        .await
        .contains(&"breached_password".to_owned()));
}

/// `users.password_breached_at` of `user_id`, as text.
async fn breached_at(app: &crate::helpers::TestApp, user_id: i64) -> Option<String> {
    let sql = app.db.dialect().placeholders(
        "SELECT CASE WHEN password_breached_at IS NULL THEN NULL ELSE 'set' END AS v \
         FROM users WHERE id = $1",
    );
    let row = app
        .db
        .fetch_optional(sqlx::query(&sql).bind(user_id))
        .await
        .expect("the query")
        .expect("the user");
    gatehouse::db::TextColumn::text(&row, "v").expect("v")
}

#[rocket::async_test]
async fn a_reset_with_a_bogus_token_says_nothing_of_the_breached_list() {
    let dir = TempDir::new().expect("a directory");
    let (app, mailbox, _ada) = app_with_a_leaked_password(&dir).await;
    let bogus = json!({"token": "not-a-token", "email": ADA, "password": LEAKED,
                       "password_confirmation": LEAKED});
    let refused = app.post_json("/auth/reset-password", bogus).await;
    assert_eq!(refused.status(), Status::UnprocessableEntity);
    let body = json(refused).await;
    assert_eq!(body["message"], "reset_failed", "{body}");
    // With a live token, the list is checked.
    let link = request_link(&app, &mailbox, ADA).await;
    let live = json!({"token": link.token, "email": link.email, "password": LEAKED,
                      "password_confirmation": LEAKED});
    let refused = app.post_json("/auth/reset-password", live).await;
    assert_eq!(json(refused).await, breached());
}
