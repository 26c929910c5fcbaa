//! Stolen cookies, tried as someone holding a copy of one would: a copied
//! remember-me cookie dies when its owner acts, gives itself away when it
//! is used, and never puts the thief's words in a mail; the code that turns
//! two-factor on is throttled; a credential change is all or nothing.

use rocket::figment::Figment;
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::json;

use crate::helpers::{figment, set_cookie, TestApp, PASSWORD};
use crate::mailbox::{request_link, reset, spawn_mail_app_with, Mailbox};
use crate::second_step::{
    change_credentials, dashboard, enrol, events, post, remember_of, sign_in, wrong_code,
};
use crate::two_factor::{code, now};

const EMAIL: &str = "ada@example.org";
const REMEMBER: &str = "gatehouse_remember";
const DEVICE: &str = "gatehouse_device";
const THEFT: &str = "A copy of your Gatehouse sign-in cookie was used";
const NEW_DEVICE: &str = "New sign-in to your Gatehouse account";

/// A new browser (cookies kept) on `app`'s database and mailbox.
async fn browser(app: &TestApp, mailbox: &Mailbox, grace: u32) -> Client {
    let configure = |f: Figment| {
        mailbox
            .configure(f)
            .merge(("session.remember_grace_seconds", grace))
    };
    Client::tracked(gatehouse_host::rocket(configure(figment(
        &app.database_url,
    ))))
    .await
    .expect("host ignites")
}

/// `GET /auth/sessions` from `client`, sending `cookies` besides its own
/// (what a browser holding copied cookies sends on its first request).
async fn sessions_with(client: &Client, cookies: &[(&str, &str)], language: &str) -> Status {
    let mut request = client
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .header(Header::new("Accept-Language", language.to_owned()));
    for (name, value) in cookies {
        request = request.cookie(Cookie::new(name.to_string(), value.to_string()));
    }
    request.dispatch().await.status()
}

/// A new browser that holds only a copy of the remember cookie `cookie`
/// and is signed in by it (the record rotates to this browser's validator).
async fn signed_in_by_a_copy(app: &TestApp, mailbox: &Mailbox, grace: u32, cookie: &str) -> Client {
    let thief = browser(app, mailbox, grace).await;
    assert_eq!(
        sessions_with(&thief, &[(REMEMBER, cookie)], "en").await,
        Status::Ok,
        "the copy signs in"
    );
    thief
}

/// Subjects of the mails sent so far.
fn subjects(mailbox: &Mailbox) -> Vec<String> {
    mailbox.mails().into_iter().map(|m| m.subject).collect()
}

/// A host (grace `grace`) with Ada, signed in with remember-me on
/// `app.client`; answers the app, its mailbox and her remember cookie.
async fn remembered(grace: u32) -> (TestApp, Mailbox, i64, String) {
    let (app, mailbox) =
        spawn_mail_app_with(|f| f.merge(("session.remember_grace_seconds", grace))).await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, true).await.0, Status::Ok);
    let cookie = remember_of(&app.client);
    (app, mailbox, user_id, cookie)
}

#[rocket::async_test]
async fn a_copy_of_a_remember_cookie_dies_with_the_owners_password_change_or_end_others() {
    for change in ["password", "end-others"] {
        let (app, mailbox, _, cookie) = remembered(30).await;
        let thief = signed_in_by_a_copy(&app, &mailbox, 30, &cookie).await;
        let (status, body) = change_credentials(&app.client, change).await;
        assert_eq!(status, Status::Ok, "{change}: {body}");
        assert_eq!(
            sessions_with(&thief, &[], "en").await,
            Status::Unauthorized,
            "{change}: the thief's session and rotated cookie are void"
        );
        let fresh = browser(&app, &mailbox, 30).await;
        assert_eq!(
            sessions_with(&fresh, &[(REMEMBER, &cookie)], "en").await,
            Status::Unauthorized,
            "{change}: the copy signs in nowhere"
        );
        assert_eq!(
            dashboard(&app.client).await,
            Status::Ok,
            "{change}: the owner stays signed in"
        );
        let reissued = remember_of(&app.client);
        assert_ne!(reissued, cookie, "{change}");
        let later = browser(&app, &mailbox, 30).await;
        assert_eq!(
            sessions_with(&later, &[(REMEMBER, &reissued)], "en").await,
            Status::Ok,
            "{change}: the owner's new remember cookie"
        );
    }
}

#[rocket::async_test]
async fn turning_two_factor_on_ends_the_sessions_a_copied_cookie_recalled() {
    let (app, mailbox, _, cookie) = remembered(30).await;
    let thief = signed_in_by_a_copy(&app, &mailbox, 30, &cookie).await;
    let laptop = browser(&app, &mailbox, 30).await;
    assert_eq!(sign_in(&laptop, false).await.0, Status::Ok);
    enrol(&app.client).await;
    assert_eq!(
        sessions_with(&thief, &[], "en").await,
        Status::Unauthorized,
        "the recalled session ends"
    );
    let fresh = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sessions_with(&fresh, &[(REMEMBER, &cookie)], "en").await,
        Status::Unauthorized
    );
    assert_eq!(
        dashboard(&laptop).await,
        Status::Ok,
        "a session the password signed in stays"
    );
    assert_eq!(dashboard(&app.client).await, Status::Ok);
}

#[rocket::async_test]
async fn a_replaced_cookie_presented_after_the_grace_signs_both_browsers_out_and_mails_the_owner() {
    let (app, mailbox, user_id, cookie) = remembered(0).await;
    let device = app
        .client
        .cookies()
        .get(DEVICE)
        .map(|c| c.value().to_owned())
        .expect("a device cookie");
    // The thief recalls first: the record rotates to the thief's validator.
    let thief = signed_in_by_a_copy(&app, &mailbox, 0, &cookie).await;
    // The owner's browser, after a restart, presents the replaced one.
    let owner_again = browser(&app, &mailbox, 0).await;
    assert_eq!(
        sessions_with(
            &owner_again,
            &[(REMEMBER, &cookie), (DEVICE, &device)],
            "de"
        )
        .await,
        Status::Unauthorized
    );
    assert!(
        owner_again.cookies().get(REMEMBER).is_none(),
        "its remember cookie is removed"
    );
    assert_eq!(sessions_with(&thief, &[], "en").await, Status::Unauthorized);
    assert_eq!(
        dashboard(&app.client).await,
        Status::Unauthorized,
        "the session the cookie was issued with"
    );
    assert_eq!(events(&app, user_id, "remember_theft").await.len(), 1);
    let mail = mailbox
        .wait_for_mail(
            EMAIL,
            "Eine Kopie Ihres Anmelde-Cookies bei Gatehouse wurde benutzt",
        )
        .await;
    assert!(mail.text.contains("Angemeldet bleiben"), "{}", mail.text);

    // Voided once: the copy again signs nobody in and mails nothing more.
    let again = browser(&app, &mailbox, 0).await;
    assert_eq!(
        sessions_with(&again, &[(REMEMBER, &cookie)], "en").await,
        Status::Unauthorized
    );
    let after = mailbox.after_quiet_wait().await;
    let thefts = after
        .iter()
        .filter(|m| m.subject.contains("Anmelde-Cookie") || m.subject == THEFT)
        .count();
    assert_eq!(thefts, 1, "{:?}", subjects(&mailbox));
    assert_eq!(events(&app, user_id, "remember_theft").await.len(), 1);
}

#[rocket::async_test]
async fn one_browsers_parallel_requests_with_the_same_cookie_within_the_grace_are_not_theft() {
    let (app, mailbox, user_id, cookie) = remembered(30).await;
    // A browser restarted: two requests leave at once with the same cookie
    // (and the same device cookie: none yet on this browser).
    let first = browser(&app, &mailbox, 30).await;
    let second = browser(&app, &mailbox, 30).await;
    let answer = first
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, cookie.clone()))
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok);
    assert!(set_cookie(&answer, REMEMBER).is_some(), "rotated");
    drop(answer);
    let parallel = second
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .cookie(Cookie::new(REMEMBER, cookie.clone()))
        .dispatch()
        .await;
    assert_eq!(parallel.status(), Status::Ok, "within the grace");
    assert!(
        set_cookie(&parallel, REMEMBER).is_none(),
        "a session cookie and no remember-me cookie"
    );
    drop(parallel);
    assert!(events(&app, user_id, "remember_theft").await.is_empty());
    assert_eq!(dashboard(&app.client).await, Status::Ok);
    assert_eq!(sessions_with(&first, &[], "en").await, Status::Ok);
    // The rotated cookie goes on signing in.
    let rotated = remember_of(&first);
    let later = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sessions_with(&later, &[(REMEMBER, &rotated)], "en").await,
        Status::Ok
    );
    let mails = mailbox.after_quiet_wait().await;
    assert!(
        mails.iter().all(|m| m.subject != THEFT),
        "{:?}",
        subjects(&mailbox)
    );
}

#[rocket::async_test]
async fn the_replaced_cookie_from_another_browser_within_the_grace_is_theft() {
    let (app, mailbox, user_id, cookie) = remembered(30).await;
    let thief = signed_in_by_a_copy(&app, &mailbox, 30, &cookie).await;
    // Another browser (its own device cookie) presents the replaced one.
    let other = browser(&app, &mailbox, 30).await;
    let device = app
        .client
        .cookies()
        .get(DEVICE)
        .map(|c| c.value().to_owned())
        .expect("the owner's device cookie");
    assert_eq!(
        sessions_with(&other, &[(REMEMBER, &cookie), (DEVICE, &device)], "en").await,
        Status::Unauthorized
    );
    assert_eq!(sessions_with(&thief, &[], "en").await, Status::Unauthorized);
    assert_eq!(events(&app, user_id, "remember_theft").await.len(), 1);
    mailbox.wait_for_mail(EMAIL, THEFT).await;
}

#[rocket::async_test]
async fn a_recall_in_a_new_browser_sends_the_new_device_notice() {
    let (app, mailbox, _, cookie) = remembered(30).await;
    mailbox.wait_for_mail(EMAIL, NEW_DEVICE).await;
    let elsewhere = browser(&app, &mailbox, 30).await;
    let answer = elsewhere
        .get("/auth/sessions")
        .header(ContentType::JSON)
        .header(Header::new(
            "User-Agent",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
        ))
        .cookie(Cookie::new(REMEMBER, cookie))
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok);
    drop(answer);
    let mails = mailbox.wait_for(2).await;
    let notice = mails.last().expect("a second mail");
    assert_eq!(notice.subject, NEW_DEVICE);
    assert!(
        notice.text.contains("Browser: Firefox 133.0 on Windows 10"),
        "{}",
        notice.text
    );
    // The same browser recalling again is known: nothing more.
    let rotated = remember_of(&elsewhere);
    let device = elsewhere
        .cookies()
        .get(DEVICE)
        .map(|c| c.value().to_owned())
        .expect("the recall gave it a device cookie");
    let restarted = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sessions_with(&restarted, &[(REMEMBER, &rotated), (DEVICE, &device)], "en").await,
        Status::Ok
    );
    assert_eq!(
        mailbox.after_quiet_wait().await.len(),
        2,
        "{:?}",
        subjects(&mailbox)
    );
}

#[rocket::async_test]
async fn a_planted_user_agent_never_reaches_a_mail() {
    let (app, mailbox) = spawn_mail_app_with(|f| f).await;
    app.create_user(EMAIL, PASSWORD).await;
    let planted = "Call +1 555 0100 or visit https://evil.example/recover to keep your account";
    let answer = app
        .client
        .post("/auth/login")
        .header(ContentType::JSON)
        .header(Header::new("User-Agent", planted))
        .body(json!({"email": EMAIL, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok);
    drop(answer);
    let mail = mailbox.wait_for_mail(EMAIL, NEW_DEVICE).await;
    for part in [&mail.text, &mail.html] {
        assert!(!part.contains("evil.example"), "{part}");
        assert!(!part.contains("555"), "{part}");
    }
    assert!(
        mail.text.contains("Browser: an unknown browser"),
        "{}",
        mail.text
    );
}

#[rocket::async_test]
async fn the_device_cookie_is_host_prefixed_under_https() {
    let (app, _mailbox) =
        spawn_mail_app_with(|f| f.merge(("base_url", "https://gatehouse.example"))).await;
    app.create_user(EMAIL, PASSWORD).await;
    let answer = app
        .client
        .post("/auth/login")
        .header(ContentType::JSON)
        .body(json!({"email": EMAIL, "password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(answer.status(), Status::Ok);
    let device = set_cookie(&answer, "__Host-gatehouse_device").expect("__Host-gatehouse_device");
    assert_eq!(device.secure(), Some(true));
    assert_eq!(device.path(), Some("/"));
    assert!(
        set_cookie(&answer, DEVICE).is_none(),
        "only the prefixed name"
    );
}

#[rocket::async_test]
async fn twelve_wrong_enrolment_codes_are_refused_with_429_by_the_sixth() {
    let (app, user_id, secret) = enrolling().await;
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let (status, body) = post(
            &app.client,
            "/auth/two-factor/confirm",
            json!({"code": wrong_code(&secret)}),
        )
        .await;
        if status == Status::TooManyRequests {
            assert_eq!(body["message"], "auth_throttle", "{body}");
        }
        statuses.push(status.code);
    }
    let first_refused = statuses.iter().position(|s| *s == 429).expect("a 429");
    assert!(first_refused <= 5, "{statuses:?}");
    assert!(
        statuses[first_refused..].iter().all(|s| *s == 429),
        "{statuses:?}"
    );
    assert!(
        statuses[..first_refused].iter().all(|s| *s == 422),
        "{statuses:?}"
    );
    // The code that spent the window was checked and counted (and answered
    // 429); no code after it was checked.
    assert_eq!(
        events(&app, user_id, "two_factor_failed").await.len(),
        first_refused + 1,
        "each wrong code checked counts"
    );
}

#[rocket::async_test]
async fn a_password_change_that_fails_half_way_changes_nothing() {
    let (app, mailbox, _, cookie) = remembered(30).await;
    let laptop = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sessions_with(&laptop, &[(REMEMBER, &cookie)], "en").await,
        Status::Ok
    );
    // The transaction's last statement (the credential epoch) fails.
    rename(&app, "gatehouse_credential_epochs", "gatehouse_epochs_away").await;
    let (status, body) = change_credentials(&app.client, "password").await;
    rename(&app, "gatehouse_epochs_away", "gatehouse_credential_epochs").await;
    assert_eq!(status, Status::InternalServerError, "{body}");
    assert!(
        !body.to_string().contains("gatehouse_credential_epochs"),
        "{body}"
    );
    assert_eq!(
        sessions_with(&laptop, &[], "en").await,
        Status::Ok,
        "the other session lives"
    );
    assert_eq!(dashboard(&app.client).await, Status::Ok);
    let old_password = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sign_in(&old_password, false).await.0,
        Status::Ok,
        "the old password"
    );
    let rotated = remember_of(&laptop);
    let fresh = browser(&app, &mailbox, 30).await;
    assert_eq!(
        sessions_with(&fresh, &[(REMEMBER, &rotated)], "en").await,
        Status::Ok,
        "the remember cookie lives"
    );
}

/// A host with Ada signed in on `app.client` and her enrolment begun (not
/// confirmed yet); answers the app, her id and the enrolment's key.
async fn enrolling() -> (TestApp, i64, String) {
    let (app, _mailbox) = spawn_mail_app_with(|f| f).await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (status, enrolment) = post(
        &app.client,
        "/auth/two-factor",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let secret = enrolment["secret"].as_str().expect("secret").to_owned();
    (app, user_id, secret)
}

/// Renames table `from` to `to` on the test's database.
async fn rename(app: &TestApp, from: &str, to: &str) {
    let sql = format!("ALTER TABLE {from} RENAME TO {to}");
    app.db
        .execute(sqlx::query(&sql))
        .await
        .expect("table renamed");
}

#[rocket::async_test]
async fn a_hundred_failed_codes_in_a_row_close_the_second_step_until_a_reset_by_mail() {
    let (app, mailbox) = spawn_mail_app_with(|f| f).await;
    let user_id = app.create_user(EMAIL, PASSWORD).await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (secret, _) = enrol(&app.client).await;
    app.client.post("/logout").dispatch().await;
    // 99 failures in a row already (spread over weeks, under every window).
    app.db
        .execute(
            app.db
                .query("UPDATE gatehouse_two_factor SET failed_in_row = 99 WHERE user_id = $1")
                .bind(user_id),
        )
        .await
        .expect("failures set");
    let (status, body) = sign_in(&app.client, false).await;
    assert_eq!(status, Status::Ok, "{body}");
    let (status, body) = post(
        &app.client,
        "/auth/two-factor-challenge",
        json!({"code": wrong_code(&secret)}),
    )
    .await;
    assert_eq!(status, Status::TooManyRequests, "the hundredth: {body}");
    assert_eq!(body["message"], "auth_throttle");
    let mail = mailbox
        .wait_for_mail(EMAIL, "Someone is trying to sign in to your account")
        .await;
    assert!(
        mail.text.contains("100 wrong two-factor codes in a row"),
        "{}",
        mail.text
    );
    assert!(
        mail.text.contains("until the password is reset by mail"),
        "{}",
        mail.text
    );

    // Closed: even the right code is not checked.
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (status, _) = post(
        &app.client,
        "/auth/two-factor-challenge",
        json!({"code": code(&secret, now() + 30)}),
    )
    .await;
    assert_eq!(status, Status::TooManyRequests, "closed");

    // A reset by mail opens it again.
    let link = request_link(&app, &mailbox, EMAIL).await;
    let new_password = "an entirely new passphrase";
    let answer = reset(&app.client, &link.token, EMAIL, new_password).await;
    assert_eq!(answer.status(), Status::Ok);
    drop(answer);
    let (status, _) = post(
        &app.client,
        "/auth/login",
        json!({"email": EMAIL, "password": new_password}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let (status, body) = post(
        &app.client,
        "/auth/two-factor-challenge",
        json!({"code": code(&secret, now() + 30)}),
    )
    .await;
    assert_eq!(status, Status::Ok, "open again: {body}");
}

#[rocket::async_test]
async fn recovery_codes_of_an_earlier_set_work_once_and_ask_to_be_renewed() {
    let (app, user_id, secret) = enrolling().await;
    let (status, body) = post(
        &app.client,
        "/auth/two-factor/confirm",
        json!({"code": code(&secret, now())}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    let codes: Vec<String> = serde_json::from_value(body["recovery_codes"].clone()).expect("codes");
    let renew_prompt = |html: &str| html.contains("data-recovery-codes-renew");
    let account = app.get_html("/account").await;
    assert!(!renew_prompt(
        &account.into_string().await.unwrap_or_default()
    ));

    // The set as an earlier, 80-bit set is stored.
    app.db
        .execute(
            app.db
                .query("UPDATE gatehouse_recovery_codes SET bits = 80 WHERE user_id = $1")
                .bind(user_id),
        )
        .await
        .expect("an earlier set");
    let account = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(renew_prompt(&account), "the account screen asks");
    assert!(account.contains("earlier, weaker set"), "{account}");

    app.client.post("/logout").dispatch().await;
    assert_eq!(sign_in(&app.client, false).await.0, Status::Ok);
    let (status, body) = post(
        &app.client,
        "/auth/two-factor-challenge",
        json!({"recovery_code": codes[0]}),
    )
    .await;
    assert_eq!(status, Status::Ok, "{body}");
    assert_eq!(body["renew_recovery_codes"], true, "{body}");
    let account = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(
        account.contains("recovery code from an earlier, weaker set"),
        "{account}"
    );

    let (status, _) = post(
        &app.client,
        "/auth/two-factor/recovery-codes",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let account = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(!renew_prompt(&account), "a new set needs no renewal");
}
