//! The screens' template context without a browser: language, logo, footer
//! links, translated messages, every screen in both languages, and a host's
//! own templates.

use gatehouse::{AuthUser, Gatehouse};
use rocket::http::{Header, Status};
use rocket::{get, routes};

use crate::helpers::{location, spawn_app, spawn_app_with, spawn_host, PASSWORD};

#[get("/")]
fn home() -> &'static str {
    "home"
}

#[get("/dashboard")]
fn dashboard(user: AuthUser) -> String {
    user.email
}

async fn page(
    app: &crate::helpers::TestApp,
    path: &str,
    accept_language: Option<&str>,
) -> (Status, String) {
    let mut request = app
        .client
        .get(path.to_owned())
        .header(Header::new("Accept", "text/html"));
    if let Some(language) = accept_language {
        request = request.header(Header::new("Accept-Language", language.to_owned()));
    }
    let response = request.dispatch().await;
    let status = response.status();
    (status, response.into_string().await.unwrap_or_default())
}

#[rocket::async_test]
async fn accept_language_de_renders_german_with_html_lang() {
    let app = spawn_app().await;
    let (status, body) = page(&app, "/login", Some("de-DE,de;q=0.9,en;q=0.5")).await;
    assert_eq!(status, Status::Ok);
    assert!(body.contains("<html lang=\"de\">"), "{body}");
    assert!(body.contains("<title>Anmelden</title>"));
    assert!(body.contains("Passwort vergessen?"));
}

#[rocket::async_test]
async fn accept_language_weights_decide_over_the_written_order() {
    let app = spawn_app().await;
    let (status, body) = page(&app, "/login", Some("en;q=0.2, de;q=0.9")).await;
    assert_eq!(status, Status::Ok);
    assert!(body.contains("<html lang=\"de\">"), "{body}");
    assert!(body.contains("<title>Anmelden</title>"));
    let (_, body) = page(&app, "/login", Some("de;q=0, en;q=0.1")).await;
    assert!(body.contains("<html lang=\"en\">"), "q=0 refuses German");
}

#[rocket::async_test]
async fn english_is_the_default_language() {
    let app = spawn_app().await;
    for accept in [None, Some("fr-FR,fr;q=0.9")] {
        let (_, body) = page(&app, "/login", accept).await;
        assert!(body.contains("<html lang=\"en\">"));
        assert!(body.contains("<title>Sign in</title>"));
    }
}

#[rocket::async_test]
async fn lang_query_wins_over_accept_language_and_is_kept_in_a_cookie() {
    let app = spawn_app().await;
    let (_, body) = page(&app, "/login?lang=de", Some("en")).await;
    assert!(body.contains("<html lang=\"de\">"));
    assert_eq!(
        app.client
            .cookies()
            .get("gatehouse_lang")
            .map(|c| c.value().to_owned()),
        Some("de".into())
    );
    let (_, later) = page(&app, "/login/forgot-password", Some("en")).await;
    assert!(
        later.contains("<html lang=\"de\">"),
        "the cookie keeps the choice"
    );
    assert!(later.contains("Passwort vergessen?"));
}

#[rocket::async_test]
async fn every_screen_offers_a_language_switch() {
    let app = spawn_app().await;
    let (_, body) = page(&app, "/login", None).await;
    assert!(body.contains("href=\"?lang=en\""));
    assert!(body.contains("href=\"?lang=de\""));
    assert!(body.contains("aria-current=\"true\">English</a>"));
}

#[rocket::async_test]
async fn no_logo_without_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let public = dir.path().to_str().unwrap().to_owned();
    let app = spawn_app_with(|f| f.merge(("public_dir", public))).await;
    let (_, body) = page(&app, "/login", None).await;
    assert!(!body.contains("<img"), "{body}");
    let logo = app.client.get("/assets/ci/logo-full.svg").dispatch().await;
    assert_eq!(logo.status(), Status::NotFound);
}

#[rocket::async_test]
async fn logo_is_shown_and_served_when_the_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("assets/ci")).unwrap();
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>";
    std::fs::write(dir.path().join("assets/ci/logo-full.svg"), svg).unwrap();
    let public = dir.path().to_str().unwrap().to_owned();
    let app = spawn_app_with(|f| f.merge(("public_dir", public))).await;
    let (_, body) = page(&app, "/login", None).await;
    assert!(
        body.contains("<img class=\"logo\" src=\"/assets/ci/logo-full.svg\""),
        "{body}"
    );
    let logo = app.client.get("/assets/ci/logo-full.svg").dispatch().await;
    assert_eq!(logo.status(), Status::Ok);
    assert_eq!(
        logo.content_type().map(|c| c.to_string()),
        Some("image/svg+xml".into())
    );
    assert_eq!(logo.into_string().await.unwrap(), svg);
}

#[rocket::async_test]
async fn footer_links_the_hosts_legal_pages_in_the_screen_language() {
    let app = spawn_app().await;
    let (_, en) = page(&app, "/login", None).await;
    // Tera escapes `/` in attributes as `&#x2F;`, which browsers read as `/`.
    for link in [
        "<a href=\"&#x2F;terms\">Terms</a>",
        "<a href=\"&#x2F;privacy\">Privacy</a>",
        "<a href=\"&#x2F;cookies\">Cookies</a>",
    ] {
        assert!(en.contains(link), "{link} missing");
    }
    let (_, de) = page(&app, "/login", Some("de")).await;
    assert!(de.contains("<a href=\"&#x2F;privacy\">Datenschutz</a>"));
}

#[rocket::async_test]
async fn no_footer_when_the_host_has_no_legal_pages() {
    let app = spawn_host(|f| {
        rocket::custom(f)
            .mount("/", routes![home, dashboard])
            .attach(Gatehouse::new())
    })
    .await;
    let (status, body) = page(&app, "/login", None).await;
    assert_eq!(status, Status::Ok);
    assert!(!body.contains("<footer"), "{body}");
}

#[rocket::async_test]
async fn failed_form_login_shows_the_translated_message_once() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .client
        .post("/auth/login")
        .header(rocket::http::ContentType::Form)
        .header(Header::new("Accept-Language", "de"))
        .body("email=ada%40example.org&password=wrong-password")
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::SeeOther);
    assert_eq!(location(&response), "/login");
    let (_, body) = page(&app, "/login", Some("de")).await;
    let message = "Diese Zugangsdaten stimmen nicht mit unseren Unterlagen überein.";
    let shown = &body[..body.find("id=\"gatehouse-messages\"").unwrap()];
    assert_eq!(shown.matches(message).count(), 1, "{body}");
    assert!(!shown.contains("credentials_do_not_match"));
    let (_, again) = page(&app, "/login", Some("de")).await;
    let shown_again = &again[..again.find("id=\"gatehouse-messages\"").unwrap()];
    assert!(!shown_again.contains(message), "the flash is shown once");
}

#[rocket::async_test]
async fn validation_errors_sit_next_to_their_fields() {
    let app = spawn_app().await;
    app.post_form("/auth/login", "email=not-an-address&password=")
        .await;
    let (_, body) = page(&app, "/login", None).await;
    assert!(body.contains("<p class=\"field-error\" id=\"email-error\" aria-live=\"polite\">Please enter a valid email address.</p>"), "{body}");
    assert!(body.contains("<p class=\"field-error\" id=\"password-error\" aria-live=\"polite\">This field is required.</p>"));
    assert!(body.contains("aria-describedby=\"email-error\" aria-invalid=\"true\""));
}

#[rocket::async_test]
async fn throttle_message_names_the_seconds() {
    let app = spawn_app().await;
    for _ in 0..6 {
        app.post_form(
            "/auth/login",
            "email=ada%40example.org&password=wrong-password",
        )
        .await;
    }
    let (_, body) = page(&app, "/login", None).await;
    let start = body
        .find("Too many attempts. Please try again in ")
        .expect("throttle message");
    let seconds: String = body[start + 39..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let seconds: u32 = seconds.parse().expect("seconds");
    assert!((1..=60).contains(&seconds));
}

#[rocket::async_test]
async fn forgot_form_shows_the_uniform_message() {
    let app = spawn_app().await;
    let response = app
        .post_form("/auth/forgot-password", "email=nobody%40example.org")
        .await;
    assert_eq!(location(&response), "/login/forgot-password");
    let (_, body) = page(&app, "/login/forgot-password", None).await;
    assert!(body.contains("form-message success"));
    assert!(body.contains("If an account exists for that address"));
}

#[rocket::async_test]
async fn every_screen_renders_in_both_languages() {
    let app = spawn_app().await;
    for language in ["en", "de"] {
        for path in [
            "/login",
            "/login/forgot-password",
            "/login/set-password/abc/ada%40example.org",
        ] {
            let (status, body) = page(&app, path, Some(language)).await;
            assert_eq!(status, Status::Ok, "{path} {language}");
            assert!(body.contains(&format!("<html lang=\"{language}\">")));
        }
    }
    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    for (language, title, size) in [
        ("en", "Set up your organisation", "2–10 people"),
        ("de", "Organisation einrichten", "2–10 Personen"),
    ] {
        let (status, body) = page(&app, "/login/org-setup", Some(language)).await;
        assert_eq!(status, Status::Ok);
        assert!(body.contains(title) && body.contains(size), "{body}");
        assert!(body.contains("Test User"), "greets the user by name");
        let (status, body) = page(&app, "/logout", Some(language)).await;
        assert_eq!(status, Status::Ok);
        assert!(body.contains("action=\"/logout\""));
    }
}

#[rocket::async_test]
async fn script_and_styles_are_served_from_the_binary() {
    let app = spawn_app().await;
    let script = app.client.get("/gatehouse/app.js").dispatch().await;
    assert_eq!(script.status(), Status::Ok);
    assert_eq!(
        script.content_type().map(|c| c.to_string()),
        Some("text/javascript".into())
    );
    assert!(script
        .into_string()
        .await
        .unwrap()
        .contains("form[data-gatehouse]"));
    let css = app.client.get("/gatehouse/app.css").dispatch().await;
    assert_eq!(
        css.content_type().map(|c| c.to_string()),
        Some("text/css; charset=utf-8".into())
    );
    let (_, body) = page(&app, "/login", None).await;
    let start = body.find("id=\"gatehouse-messages\">").unwrap();
    let json = &body[start + 24..body[start..].find("</script>").unwrap() + start];
    let messages: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        messages["auth_throttle"],
        "Too many attempts. Please try again in {seconds} seconds."
    );
}

#[rocket::async_test]
async fn templates_dir_replaces_a_screen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("login.html"),
        "<!doctype html><html lang=\"{{ lang }}\"><title>{{ t.title }}</title><h1>Our own sign-in</h1>\
         <form method=\"post\" action=\"/auth/login\"></form></html>",
    )
    .unwrap();
    let templates = dir.path().to_str().unwrap().to_owned();
    let app = spawn_app_with(|f| f.merge(("templates_dir", templates))).await;
    let (_, body) = page(&app, "/login", Some("de")).await;
    assert!(body.contains("<h1>Our own sign-in</h1>"));
    assert!(body.contains("<title>Anmelden</title>"));
    let (_, forgot) = page(&app, "/login/forgot-password", None).await;
    assert!(
        forgot.contains("Send reset link"),
        "other screens keep the embedded set"
    );
}

#[rocket::async_test]
async fn failed_form_post_keeps_the_typed_address_but_never_the_password() {
    let app = spawn_app().await;
    app.post_form(
        "/auth/login",
        "email=ada%40example.org&password=secret-typed-here",
    )
    .await;
    let (_, body) = page(&app, "/login", None).await;
    assert!(body.contains("value=\"ada@example.org\""), "{body}");
    assert!(!body.contains("secret-typed-here"));
}

/// The opening tag of the element whose `id` is `id`, and the text right
/// after it (up to the next tag); `None` unless exactly one element has it.
fn element<'b>(body: &'b str, id: &str) -> Option<(&'b str, &'b str)> {
    let needle = format!(" id=\"{id}\"");
    let at = body.find(&needle)?;
    if body.matches(&needle).count() != 1 {
        return None;
    }
    let start = body[..at].rfind('<')?;
    let end = at + body[at..].find('>')?;
    let rest = &body[end + 1..];
    Some((
        &body[start..=end],
        &rest[..rest.find('<').unwrap_or(rest.len())],
    ))
}

fn attribute<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

/// Asserts that the control `id` is marked invalid and that its
/// `aria-describedby` (or that of `described`, the element carrying it) names
/// an element on the page that shows `words`.
fn assert_error_tied(body: &str, id: &str, described: &str, words: &str) {
    let (control, _) = element(body, id).unwrap_or_else(|| panic!("no #{id}: {body}"));
    assert_eq!(
        attribute(control, "aria-invalid"),
        Some("true"),
        "{control}"
    );
    let (carrier, _) = element(body, described).unwrap_or_else(|| panic!("no #{described}"));
    let target = attribute(carrier, "aria-describedby")
        .unwrap_or_else(|| panic!("#{described} has no aria-describedby: {carrier}"));
    let (_, shown) =
        element(body, target).unwrap_or_else(|| panic!("#{id} points at a missing #{target}"));
    assert_eq!(shown.trim(), words, "#{id} is described by #{target}");
}

async fn follow(
    app: &crate::helpers::TestApp,
    response: rocket::local::asynchronous::LocalResponse<'_>,
) -> String {
    assert_eq!(response.status(), Status::SeeOther);
    let screen = location(&response);
    page(app, &screen, None).await.1
}

#[rocket::async_test]
async fn failed_form_sign_in_ties_the_message_to_the_email_field() {
    let app = spawn_app().await;
    app.create_user("ada@example.org", PASSWORD).await;
    let response = app
        .post_form(
            "/auth/login",
            "email=ada%40example.org&password=wrong-password",
        )
        .await;
    assert_eq!(location(&response), "/login");
    let body = follow(&app, response).await;
    let message = "These credentials do not match our records.";
    assert_error_tied(&body, "email", "email", message);
    let (password, _) = element(&body, "password").unwrap();
    assert_eq!(attribute(password, "aria-invalid"), None, "{password}");
}

#[rocket::async_test]
async fn form_field_errors_are_tied_to_their_fields_on_every_screen() {
    let app = spawn_app().await;
    let response = app
        .post_form("/auth/forgot-password", "email=not-an-address")
        .await;
    let body = follow(&app, response).await;
    assert_error_tied(
        &body,
        "email",
        "email",
        "Please enter a valid email address.",
    );

    let response = app
        .post_form(
            "/auth/reset-password",
            "token=abc&email=ada%40example.org&password=short&password_confirmation=other",
        )
        .await;
    let body = follow(&app, response).await;
    assert_error_tied(
        &body,
        "password",
        "password",
        "The two passwords do not match.",
    );

    app.create_user("ada@example.org", PASSWORD).await;
    assert_eq!(app.login("ada@example.org", PASSWORD).await, Status::Ok);
    let response = app.post_form("/auth/intents/org-setup", "org_name=").await;
    assert_eq!(location(&response), "/login/org-setup");
    let body = follow(&app, response).await;
    let required = "This field is required.";
    assert_error_tied(&body, "org_name", "org_name", required);
    assert_error_tied(&body, "legal_form", "legal_form-group", required);
    assert_error_tied(&body, "company_size", "company_size", required);
    assert_error_tied(&body, "function", "function", required);
}
