//! The mails of the reset flow as their recipient reads them (multipart, in
//! the requester's language, links from `base_url` only), enumeration safety
//! of `POST /auth/forgot-password`, and delivery through each transport —
//! including real SMTP to a server started on loopback.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use gatehouse::auth::users;
use gatehouse::domain::Email;
use rocket::http::{ContentType, Cookie, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use serde_json::json;

use crate::helpers::{location, spawn_app_with, TestApp, BASE_URL, PASSWORD};
use crate::mailbox::{
    forgot, in_ci, request_link, reset, reset_with_headers, second_instance, spawn_mail_app,
    spawn_mail_app_with, Mail, Mailbox, ResetLink, SmtpServer, CHANGED_SUBJECT, MAIL_TIMEOUT,
    RESET_SUBJECT,
};

const ADA: &str = "ada@example.org";
const NEW_PASSWORD: &str = "violet meadow lantern orbit";

/// `POST /auth/forgot-password` (JSON) with extra headers and a query string.
async fn forgot_with<'c>(
    client: &'c Client,
    query: &str,
    email: &str,
    headers: &[(&'static str, &'static str)],
) -> LocalResponse<'c> {
    let mut request = client
        .post(format!("/auth/forgot-password{query}"))
        .header(ContentType::JSON)
        .body(json!({ "email": email }).to_string());
    for (name, value) in headers {
        request = request.header(Header::new(*name, *value));
    }
    request.dispatch().await
}

/// Requests a link with `headers`/`query` and answers the reset-link mail.
async fn reset_mail(
    app: &TestApp,
    mailbox: &Mailbox,
    query: &str,
    headers: &[(&'static str, &'static str)],
) -> Mail {
    let response = forgot_with(&app.client, query, ADA, headers).await;
    assert_eq!(response.status(), Status::Ok);
    let mails = mailbox.wait_for(1).await;
    assert_eq!(mails.len(), 1);
    mails.into_iter().next().unwrap()
}

fn assert_multipart_alternative(mail: &Mail) {
    assert_eq!(mail.content_type, "multipart/alternative");
    assert_eq!(mail.part_types, ["text/plain", "text/html"]);
}

fn assert_contains_all(haystack: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "{needle:?} is missing from:\n{haystack}"
        );
    }
}

// ---------------------------------------------------------------------------
// Content and language

#[rocket::async_test]
async fn reset_link_mail_is_multipart_text_and_html_in_english_by_default() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(&app, &mailbox, "", &[]).await;

    assert_multipart_alternative(&mail);
    assert_eq!(mail.from, "no-reply@localhost");
    assert_eq!(mail.from_name.as_deref(), Some("Gatehouse"));
    assert_eq!(mail.to, ADA);
    assert_eq!(mail.to_name.as_deref(), Some("Test User"));
    assert_eq!(mail.subject, "Reset your password");

    let link = mail.reset_link();
    assert_eq!(link.email, ADA);
    assert!(
        link.url.starts_with(&format!("{BASE_URL}/password/reset/")),
        "{}",
        link.url
    );
    assert_eq!(mail.text_links(), [link.url.as_str()], "one link");
    assert_eq!(mail.html_links(), [link.url.as_str()], "one link");

    let wording = [
        "Hello Test User,",
        "We received a request to reset the password of your account.",
        "Choose a new password",
        "This link expires in 60 minutes and works once.",
        "If you did not ask for this, ignore this message: your password stays as it is.",
        "— Gatehouse",
    ];
    assert_contains_all(&mail.text, &wording);
    assert_contains_all(&mail.html_words(), &wording);
    assert!(mail.html.contains("<html lang=\"en\">"), "{}", mail.html);
    assert!(!mail.text.contains("mail-"), "no untranslated message ids");
}

#[rocket::async_test]
async fn reset_link_mail_is_german_for_accept_language_de() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(
        &app,
        &mailbox,
        "",
        &[("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")],
    )
    .await;

    assert_multipart_alternative(&mail);
    assert_eq!(mail.subject, "Passwort zurücksetzen");
    let wording = [
        "Hallo Test User,",
        "wir haben eine Anfrage erhalten, das Passwort Ihres Kontos zurückzusetzen.",
        "Neues Passwort wählen",
        "Dieser Link ist 60 Minuten gültig und funktioniert nur einmal.",
        "Falls Sie das nicht angefordert haben, ignorieren Sie diese Nachricht",
        "— Gatehouse",
    ];
    assert_contains_all(&mail.text, &wording);
    assert_contains_all(&mail.html_words(), &wording);
    assert!(mail.html.contains("<html lang=\"de\">"));
    assert!(!mail.text.contains("Hello"), "no English left");
    let link = mail.reset_link();
    assert!(link.url.starts_with(&format!("{BASE_URL}/password/reset/")));
}

#[rocket::async_test]
async fn lang_query_wins_over_accept_language_for_the_mail() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(&app, &mailbox, "?lang=de", &[("Accept-Language", "en")]).await;
    assert_eq!(mail.subject, "Passwort zurücksetzen");
}

#[rocket::async_test]
async fn language_cookie_chooses_the_mail_language() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let response = app
        .client
        .post("/auth/forgot-password")
        .header(ContentType::JSON)
        .header(Header::new("Accept-Language", "en"))
        .cookie(Cookie::new("gatehouse_lang", "de"))
        .body(json!({ "email": ADA }).to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        mailbox.wait_for(1).await[0].subject,
        "Passwort zurücksetzen"
    );
}

#[rocket::async_test]
async fn unsupported_language_falls_back_to_english() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(&app, &mailbox, "", &[("Accept-Language", "fr-FR,fr;q=0.9")]).await;
    assert_eq!(mail.subject, RESET_SUBJECT);
}

#[rocket::async_test]
async fn reset_link_mail_states_the_configured_lifetime() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("auth.reset_token_minutes", 15))).await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(&app, &mailbox, "", &[]).await;
    assert!(mail.text.contains("This link expires in 15 minutes"));
}

#[rocket::async_test]
async fn mail_html_escapes_the_user_name() {
    let (app, mailbox) = spawn_mail_app().await;
    let name = "Ada <b>Lovelace</b> & Co";
    users::create(&app.db, name, &Email::parse(ADA).unwrap(), "x")
        .await
        .expect("create user");
    let mail = reset_mail(&app, &mailbox, "", &[]).await;
    assert!(mail.text.contains("Hello Ada <b>Lovelace</b> & Co,"));
    assert!(!mail.html.contains("<b>Lovelace</b>"), "{}", mail.html);
    assert!(mail
        .html_words()
        .contains("Hello Ada <b>Lovelace</b> & Co,"));
    assert_eq!(mail.to_name.as_deref(), Some(name));
}

#[rocket::async_test]
async fn password_changed_mail_is_multipart_in_english() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    let mail = mailbox.wait_for_mail(ADA, CHANGED_SUBJECT).await;
    assert_multipart_alternative(&mail);
    assert_eq!(mail.to_name.as_deref(), Some("Test User"));
    let wording = [
        "Hello Test User,",
        "The password of your account was just changed, and every session was signed out.",
        "If this was not you, reset your password at once:",
        "— Gatehouse",
    ];
    assert_contains_all(&mail.text, &wording);
    assert_contains_all(&mail.html_words(), &wording);
    let forgot_screen = format!("{BASE_URL}/login/forgot-password");
    assert_eq!(mail.text_links(), [forgot_screen.as_str()]);
    assert!(mail.html_words().contains(&forgot_screen));
}

#[rocket::async_test]
async fn password_changed_mail_is_german_when_the_reset_asks_in_german() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    let response = reset_with_headers(
        &app.client,
        &link.token,
        ADA,
        NEW_PASSWORD,
        &[("Accept-Language", "de")],
    )
    .await;
    assert_eq!(response.status(), Status::Ok);
    let mail = mailbox
        .wait_for_mail(ADA, "Ihr Passwort wurde geändert")
        .await;
    assert_multipart_alternative(&mail);
    let wording = [
        "Hallo Test User,",
        "das Passwort Ihres Kontos wurde soeben geändert, und alle Sitzungen wurden abgemeldet.",
        "Falls Sie das nicht waren, setzen Sie Ihr Passwort sofort zurück:",
    ];
    assert_contains_all(&mail.text, &wording);
    assert_contains_all(&mail.html_words(), &wording);
    assert!(mail.html.contains("<html lang=\"de\">"));
    assert_eq!(
        mail.text_links(),
        [format!("{BASE_URL}/login/forgot-password")]
    );
}

// ---------------------------------------------------------------------------
// Links come from base_url only

const FORGED: [(&str, &str); 4] = [
    ("Host", "evil.example"),
    ("X-Forwarded-Host", "evil.example"),
    ("X-Forwarded-Proto", "http"),
    ("Forwarded", "host=evil.example;proto=http"),
];

#[rocket::async_test]
async fn forged_host_header_never_changes_the_mailed_links() {
    let base = "https://accounts.example.com";
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("base_url", base))).await;
    app.create_user(ADA, PASSWORD).await;
    let mail = reset_mail(&app, &mailbox, "", &FORGED).await;
    let link = mail.reset_link();
    assert!(
        link.url.starts_with(&format!("{base}/password/reset/")),
        "{}",
        link.url
    );
    assert!(!mail.text.contains("evil") && !mail.html.contains("evil"));

    let response = reset_with_headers(&app.client, &link.token, ADA, NEW_PASSWORD, &FORGED).await;
    assert_eq!(response.status(), Status::Ok);
    let changed = mailbox.wait_for_mail(ADA, CHANGED_SUBJECT).await;
    assert_eq!(
        changed.text_links(),
        [format!("{base}/login/forgot-password")]
    );
    assert!(!changed.text.contains("evil") && !changed.html.contains("evil"));
}

// ---------------------------------------------------------------------------
// Enumeration safety

/// What a client can observe of a response, less the date and cookie values.
async fn observed(response: LocalResponse<'_>) -> (Status, Vec<(String, String)>, String) {
    let status = response.status();
    let mut headers: Vec<(String, String)> = response
        .headers()
        .iter()
        // Each response has its own date and request id, whatever the
        // address.
        .filter(|h| {
            let name = h.name().as_str();
            !name.eq_ignore_ascii_case("date") && !name.eq_ignore_ascii_case("x-request-id")
        })
        .map(|h| {
            let value = if h.name().as_str().eq_ignore_ascii_case("set-cookie") {
                h.value().split('=').next().unwrap_or_default().to_owned()
            } else {
                h.value().to_owned()
            };
            (h.name().as_str().to_ascii_lowercase(), value)
        })
        .collect();
    headers.sort();
    (
        status,
        headers,
        response.into_string().await.unwrap_or_default(),
    )
}

#[rocket::async_test]
async fn forgot_password_answers_known_and_unknown_addresses_identically() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    // Each request from a fresh browser: no cookies carried between them.
    let browser = second_instance(&app, &mailbox).await;
    let known = observed(forgot(&browser, ADA).await).await;
    let unknown = observed(forgot(&browser, "nobody@example.org").await).await;
    assert_eq!(known.0, Status::Ok);
    assert_eq!(known.2, r#"{"message":"reset_link_sent"}"#);
    assert_eq!(known, unknown);

    let known_again = observed(forgot(&browser, ADA).await).await;
    assert_eq!(known_again, unknown, "within the quiet period too");

    let form = |email: &'static str| {
        browser
            .post("/auth/forgot-password")
            .header(ContentType::Form)
            .header(Header::new("Accept", "text/html"))
            .body(format!("email={email}"))
            .dispatch()
    };
    let form_known = observed(form("ada%40example.org").await).await;
    let form_unknown = observed(form("nobody%40example.org").await).await;
    assert_eq!(form_known.0, Status::SeeOther);
    assert_eq!(form_known, form_unknown);

    let mails = mailbox.after_quiet_wait().await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, ADA);
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2
    } else {
        samples[mid]
    }
}

#[rocket::async_test]
async fn forgot_password_takes_the_same_time_for_known_and_unknown_addresses() {
    const ROUNDS: usize = 30;
    const WARM_UP: usize = 3;
    let (app, mailbox) = spawn_mail_app().await;
    let first = app.create_user("known0@example.org", PASSWORD).await;
    let hash = app.password_hash(first).await;
    for i in 1..WARM_UP + ROUNDS {
        app.create_user_with_hash(&format!("known{i}@example.org"), &hash)
            .await;
    }

    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for i in 0..WARM_UP + ROUNDS {
        // Every request is a fresh address (a mail for each known one), so
        // neither the quiet period nor the throttle shortens any of them.
        let mut pair = [
            (true, format!("known{i}@example.org")),
            (false, format!("unknown{i}@example.org")),
        ];
        if i % 2 == 1 {
            pair.reverse();
        }
        for (is_known, email) in pair {
            let started = Instant::now();
            let response = forgot(&app.client, &email).await;
            let elapsed = started.elapsed();
            assert_eq!(response.status(), Status::Ok);
            assert_eq!(
                response.into_string().await.unwrap(),
                r#"{"message":"reset_link_sent"}"#
            );
            if i >= WARM_UP {
                if is_known { &mut known } else { &mut unknown }.push(elapsed);
            }
        }
    }
    let (known_median, unknown_median) = (median(&mut known), median(&mut unknown));
    let difference = known_median.abs_diff(unknown_median);
    println!(
        "forgot-password medians over {ROUNDS} requests: known {known_median:?}, \
         unknown {unknown_median:?}, difference {difference:?}"
    );
    assert!(
        difference <= Duration::from_millis(5),
        "known {known_median:?} vs unknown {unknown_median:?}"
    );

    // The known addresses really were mailed (the work happened, off the path).
    let mails = mailbox.wait_for(WARM_UP + ROUNDS).await;
    assert!(mails.iter().all(|m| m.to.starts_with("known")));
}

// ---------------------------------------------------------------------------
// Transports

#[rocket::async_test]
async fn file_transport_writes_one_eml_file_per_message() {
    let (app, mailbox) = spawn_mail_app().await;
    app.create_user(ADA, PASSWORD).await;
    let link = request_link(&app, &mailbox, ADA).await;
    reset(&app.client, &link.token, ADA, NEW_PASSWORD).await;
    mailbox.wait_for_mail(ADA, CHANGED_SUBJECT).await;
    let files: Vec<String> = std::fs::read_dir(mailbox.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.iter().all(|f| f.ends_with(".eml")), "{files:?}");
}

#[rocket::async_test]
async fn log_transport_answers_the_same_and_writes_no_files() {
    let (app, mailbox) = spawn_mail_app_with(|f| f.merge(("mail.transport", "log"))).await;
    app.create_user(ADA, PASSWORD).await;
    let response = forgot(&app.client, ADA).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        response.into_string().await.unwrap(),
        r#"{"message":"reset_link_sent"}"#
    );
    assert!(mailbox.after_quiet_wait().await.is_empty());
    assert_eq!(
        std::fs::read_dir(mailbox.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[rocket::async_test]
async fn forgot_password_does_not_wait_for_the_mail_server() {
    // A mail server that accepts connections and never greets.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().unwrap().port();
    let mailbox = Mailbox::new();
    let app = spawn_app_with(|f| {
        mailbox
            .configure(f)
            .merge(("mail.transport", "smtp"))
            .merge(("mail.host", "127.0.0.1"))
            .merge(("mail.port", port))
            .merge(("mail.tls", "none"))
    })
    .await;
    app.create_user(ADA, PASSWORD).await;
    for email in [ADA, "nobody@example.org"] {
        let started = Instant::now();
        let response = forgot(&app.client, email).await;
        assert_eq!(response.status(), Status::Ok);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{email}: answered after {:?}",
            started.elapsed()
        );
    }
    // The known address was processed (its token issued) all the same.
    let deadline = Instant::now() + MAIL_TIMEOUT;
    while token_count(&app).await == 0 {
        assert!(Instant::now() < deadline, "no token issued");
        rocket::tokio::time::sleep(Duration::from_millis(25)).await;
    }
    drop(silent);
}

async fn token_count(app: &TestApp) -> i64 {
    app.count("password_reset_tokens").await
}

/// The envelope recipient aiosmtpd recorded, from the raw stored message.
fn envelope_recipient(dir: &Path, subject: &str) -> Option<String> {
    std::fs::read_dir(dir).ok()?.find_map(|entry| {
        let raw = std::fs::read(entry.ok()?.path()).ok()?;
        let message = mail_parser::MessageParser::default().parse(&raw)?;
        (message.subject() == Some(subject))
            .then(|| message.header_raw("X-RcptTo").map(|v| v.trim().to_owned()))
            .flatten()
    })
}

#[rocket::async_test]
async fn smtp_transport_delivers_both_mails_to_a_real_smtp_server() {
    let server = match SmtpServer::start() {
        Ok(server) => server,
        Err(reason) if in_ci() => panic!("CI needs the SMTP test server: {reason}"),
        Err(reason) => {
            println!("SKIPPED smtp_transport_delivers_both_mails_to_a_real_smtp_server: {reason}");
            return;
        }
    };
    let mailbox = Mailbox::new(); // must stay empty: mail goes over SMTP
    let port = server.port;
    let app = spawn_app_with(|f| {
        mailbox
            .configure(f)
            .merge(("mail.transport", "smtp"))
            .merge(("mail.host", "127.0.0.1"))
            .merge(("mail.port", port))
            .merge(("mail.tls", "none"))
            .merge(("mail.from", "Gatehouse <no-reply@gatehouse.test>"))
    })
    .await;
    app.create_user(ADA, PASSWORD).await;

    let response = forgot_with(&app.client, "", ADA, &[("Accept-Language", "de")]).await;
    assert_eq!(response.status(), Status::Ok);
    let mails = server.wait_for(1).await;
    let mail = &mails[0];
    assert_multipart_alternative(mail);
    assert_eq!(mail.from, "no-reply@gatehouse.test");
    assert_eq!(mail.to, ADA);
    assert_eq!(mail.subject, "Passwort zurücksetzen");
    assert!(mail.text.contains("Hallo Test User,"), "{}", mail.text);
    assert_eq!(
        envelope_recipient(&server.new_mail(), "Passwort zurücksetzen").as_deref(),
        Some(ADA)
    );

    // The link received over SMTP completes the reset.
    let link: ResetLink = mail.reset_link();
    assert!(link.url.starts_with(&format!("{BASE_URL}/password/reset/")));
    let response = app.get_html(&link.path_and_query).await;
    assert_eq!(response.status(), Status::SeeOther);
    assert!(location(&response).starts_with("/login/set-password/"));
    assert_eq!(
        reset(&app.client, &link.token, ADA, NEW_PASSWORD)
            .await
            .status(),
        Status::Ok
    );
    let mails = server.wait_for(2).await;
    assert!(
        mails
            .iter()
            .any(|m| m.subject == CHANGED_SUBJECT && m.to == ADA),
        "the confirmation came over SMTP too: {:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    assert!(
        mailbox.mails().is_empty(),
        "nothing went to the file transport"
    );
}

#[rocket::async_test]
async fn mail_is_retried_until_the_smtp_server_answers() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mailbox = Mailbox::new();
    let app = spawn_app_with(|f| {
        mailbox
            .configure(f)
            .merge(("mail.transport", "smtp"))
            .merge(("mail.host", "127.0.0.1"))
            .merge(("mail.port", port))
            .merge(("mail.tls", "none"))
    })
    .await;
    app.create_user(ADA, PASSWORD).await;
    let response = forgot_with(&app.client, "", ADA, &[]).await;
    assert_eq!(
        response.status(),
        Status::Ok,
        "the requester never sees the failure"
    );
    // Nothing listens yet: the first attempts fail and are retried with back-off.
    rocket::tokio::time::sleep(Duration::from_millis(1500)).await;
    let server = match SmtpServer::start_on(port) {
        Ok(server) => server,
        Err(reason) if in_ci() => panic!("CI needs the SMTP test server: {reason}"),
        Err(reason) => {
            println!("SKIPPED mail_is_retried_until_the_smtp_server_answers: {reason}");
            return;
        }
    };
    let mails = server.wait_for(1).await;
    assert_eq!(mails[0].to, ADA);
    assert!(mails[0]
        .reset_link()
        .url
        .starts_with(&format!("{BASE_URL}/password/reset/")));
}
