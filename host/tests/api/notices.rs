//! Security notices as their recipient reads them: a sign-in from a new
//! browser (over a real SMTP exchange), two-factor turned on and off,
//! recovery codes renewed, a passkey added and removed — each once, in the
//! request's language, pointing at the account screen.

use rocket::figment::Figment;
use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::Client;
use serde_json::{json, Value};

use crate::helpers::{figment, PASSWORD};
use crate::mailbox::{in_ci, spawn_mail_app_with, Mail, SmtpServer, QUIET_WAIT};
use crate::passkeys::Authenticator;
use crate::second_step::{enrol, post};

const ADA: &str = "ada@example.org";
const NEW_DEVICE: &str = "New sign-in to your Gatehouse account";

/// A browser (cookies kept) on a host of `database_url` with `configure`.
async fn browser(database_url: &str, configure: impl FnOnce(Figment) -> Figment) -> Client {
    Client::tracked(gatehouse_host::rocket(configure(figment(database_url))))
        .await
        .expect("host ignites")
}

/// Signs in with the password from a client that says it is Chrome.
async fn sign_in(client: &Client, language: &str) -> Status {
    client
        .post("/auth/login")
        .header(ContentType::JSON)
        .header(Header::new("Accept-Language", language.to_owned()))
        .header(Header::new(
            "User-Agent",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
             Chrome/131.0.6778.85 Safari/537.36",
        ))
        .body(json!({"email": ADA, "password": PASSWORD}).to_string())
        .dispatch()
        .await
        .status()
}

fn subjects(mails: &[Mail]) -> Vec<&str> {
    mails.iter().map(|m| m.subject.as_str()).collect()
}

#[rocket::async_test]
async fn a_first_sign_in_from_a_browser_is_mailed_once_over_smtp() {
    let server = match SmtpServer::start() {
        Ok(server) => server,
        Err(reason) if in_ci() => panic!("CI needs the SMTP test server: {reason}"),
        Err(reason) => {
            println!("SKIPPED a_first_sign_in_from_a_browser_is_mailed_once_over_smtp: {reason}");
            return;
        }
    };
    let smtp = |f: Figment| server.configure(f);
    let (app, mailbox) = spawn_mail_app_with(smtp).await;
    app.create_user(ADA, PASSWORD).await;
    let laptop = browser(&app.database_url, smtp).await;

    assert_eq!(sign_in(&laptop, "en").await, Status::Ok);
    let mails = server.wait_for(1).await;
    assert_eq!(subjects(&mails), [NEW_DEVICE]);
    let mail = &mails[0];
    assert_eq!(mail.to, ADA);
    // Rocket's local client has no peer address: the server saw 0.0.0.0.
    assert!(mail.text.contains("IP address: 0.0.0.0"), "{}", mail.text);
    assert!(
        mail.text.contains("Browser: Chrome 131.0 on Linux"),
        "{}",
        mail.text
    );
    assert!(mail.text.contains("(UTC)"), "{}", mail.text);
    assert!(
        mail.text.contains("http://127.0.0.1:8000/account"),
        "{}",
        mail.text
    );
    assert!(mail.html.contains("<a href="), "{}", mail.html);

    // The same browser again: nothing new.
    assert_eq!(
        laptop.post("/logout").dispatch().await.status(),
        Status::SeeOther
    );
    assert_eq!(sign_in(&laptop, "en").await, Status::Ok);
    rocket::tokio::time::sleep(QUIET_WAIT).await;
    assert_eq!(server.mails().len(), 1, "{:?}", subjects(&server.mails()));

    // Another browser is a new device, told in its language.
    let phone = browser(&app.database_url, smtp).await;
    assert_eq!(sign_in(&phone, "de").await, Status::Ok);
    let mails = server.wait_for(2).await;
    let german = mails
        .iter()
        .find(|m| m.subject != NEW_DEVICE)
        .expect("a second mail");
    assert_eq!(
        german.subject,
        "Neue Anmeldung bei Ihrem Konto bei Gatehouse"
    );
    assert!(
        german.text.contains("IP-Adresse: 0.0.0.0"),
        "{}",
        german.text
    );
    assert!(mailbox.mails().is_empty(), "mail goes over SMTP only");
}

#[rocket::async_test]
async fn a_browser_shared_by_two_users_is_new_to_each_of_them_once() {
    let (app, mailbox) = spawn_mail_app_with(|f| f).await;
    app.create_user(ADA, PASSWORD).await;
    app.create_user("bob@example.org", PASSWORD).await;
    let shared = &app.client;
    assert_eq!(sign_in(shared, "en").await, Status::Ok);
    shared.post("/logout").dispatch().await;
    let bob = json!({"email": "bob@example.org", "password": PASSWORD});
    let (status, _) = post(shared, "/auth/login", bob.clone()).await;
    assert_eq!(status, Status::Ok);
    shared.post("/logout").dispatch().await;
    post(shared, "/auth/login", bob).await;
    let mails = mailbox.after_quiet_wait().await;
    let to: Vec<&str> = mails.iter().map(|m| m.to.as_str()).collect();
    assert_eq!(to.len(), 2, "{:?}", subjects(&mails));
    assert!(
        to.contains(&ADA) && to.contains(&"bob@example.org"),
        "{to:?}"
    );
}

#[rocket::async_test]
async fn changes_to_how_an_account_signs_in_are_mailed_to_its_owner() {
    let (app, mailbox) =
        spawn_mail_app_with(|f| f.merge(("base_url", "http://localhost:8000"))).await;
    app.create_user(ADA, PASSWORD).await;
    let client = &app.client;
    assert_eq!(sign_in(client, "en").await, Status::Ok);
    mailbox.wait_for(1).await; // the new device

    enrol(client).await;
    let (status, _) = post(
        client,
        "/auth/two-factor/recovery-codes",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let (status, _) = post(
        client,
        "/auth/two-factor/disable",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let mails = mailbox.wait_for(4).await;
    assert_eq!(
        subjects(&mails)[1..],
        [
            "Two-factor sign-in was turned on",
            "Your recovery codes were renewed",
            "Two-factor sign-in was turned off",
        ]
    );
    for mail in &mails[1..] {
        assert_eq!(mail.to, ADA);
        assert!(
            mail.text.contains("http://localhost:8000/account"),
            "{}",
            mail.text
        );
        assert!(!mail.text.contains(PASSWORD));
    }
    assert!(
        mails[2].text.contains("earlier codes no longer work"),
        "{}",
        mails[2].text
    );
    // Nothing else was sent: no mail for a mere page view.
    assert_eq!(mailbox.after_quiet_wait().await.len(), 4);
}

#[rocket::async_test]
async fn a_passkey_added_and_removed_is_mailed_with_its_name() {
    let (app, mailbox) =
        spawn_mail_app_with(|f| f.merge(("base_url", "http://localhost:8000"))).await;
    app.create_user(ADA, PASSWORD).await;
    let client = &app.client;
    assert_eq!(sign_in(client, "de").await, Status::Ok);
    mailbox.wait_for(1).await;
    let (status, options) = post(
        client,
        "/auth/passkeys/options",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(status, Status::Ok);
    let credential = Authenticator::new().create(&options).expect("registered");
    let added = client
        .post("/auth/passkeys")
        .header(ContentType::JSON)
        .header(Header::new("Accept-Language", "de"))
        .body(json!({"name": "Büro-Laptop", "credential": credential}).to_string())
        .dispatch()
        .await;
    assert_eq!(added.status(), Status::Created);
    let id: Value = serde_json::from_str(&added.into_string().await.unwrap()).unwrap();
    let removed = client
        .post(format!("/auth/passkeys/{}/delete", id["id"]))
        .header(ContentType::JSON)
        .body(json!({"password": PASSWORD}).to_string())
        .dispatch()
        .await;
    assert_eq!(removed.status(), Status::NoContent);
    let mails = mailbox.wait_for(3).await;
    assert_eq!(
        subjects(&mails)[1..],
        [
            "Ihrem Konto wurde ein Passkey hinzugefügt",
            "A passkey was removed from your account",
        ]
    );
    assert!(mails[1].text.contains("„Büro-Laptop“"), "{}", mails[1].text);
    assert!(mails[2].text.contains("“Büro-Laptop”"), "{}", mails[2].text);
}
