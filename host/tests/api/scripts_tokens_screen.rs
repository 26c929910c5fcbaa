//! Access for scripts on the account screen, without JavaScript: the
//! tokens listed (never a token), a new one made by the form and shown in
//! the answer only, its errors shown at their fields, a token revoked by
//! its form; in English and German.

use rocket::http::{Header, Status};
use serde_json::{json, Value};

use crate::helpers::{location, spawn_app, spawn_app_with, TestApp};
use crate::scripts_tokens::{ada, listing, read, seconds_until};
use crate::second_step::post;

/// The account screen as the browser shows it now.
async fn account(app: &TestApp) -> String {
    let page = app.get_html("/account").await;
    assert_eq!(page.status(), Status::Ok);
    page.into_string().await.unwrap_or_default()
}

/// The text of the first element carrying `attribute` in `html`.
fn inside<'h>(html: &'h str, attribute: &str) -> Option<&'h str> {
    let at = html.find(attribute)?;
    let start = at + html[at..].find('>')? + 1;
    let end = start + html[start..].find('<')?;
    Some(html[start..end].trim())
}

/// Posts the new-token form with `fields`: its status, and its page or
/// where it leads.
async fn make_by_form(app: &TestApp, fields: &str) -> (Status, String) {
    let answer = app.post_form("/auth/tokens", fields).await;
    let status = answer.status();
    if status == Status::SeeOther {
        return (status, location(&answer));
    }
    (status, answer.into_string().await.unwrap_or_default())
}

#[rocket::async_test]
async fn the_account_screen_lists_a_token_by_its_first_characters_never_the_token() {
    let app = spawn_app().await;
    ada(&app).await;
    let html = account(&app).await;
    assert!(
        html.contains(r#"id="tokens-heading">Access for scripts<"#),
        "{html}"
    );
    assert!(html.contains("No tokens."), "{html}");

    let (status, made) = post(
        &app.client,
        "/auth/tokens",
        json!({"name": "Nightly export", "sets": ["Users"]}),
    )
    .await;
    assert_eq!(status, Status::Created, "{made}");
    let token = made["token"].as_str().unwrap();
    let html = account(&app).await;
    let row = format!(r#"data-token-id="{}""#, made["id"]);
    assert!(html.contains(&row), "{html}");
    assert!(html.contains("Nightly export"), "{html}");
    assert!(
        html.contains(&format!("<code>{}…</code>", &token[..8])),
        "{html}"
    );
    assert_eq!(inside(&html, "data-token-sets"), Some("Reads: Users"));
    assert!(html.contains("last used never"), "{html}");
    assert!(
        html.contains(r#"action="/auth/tokens/"#),
        "a revoke form: {html}"
    );
    assert!(!html.contains("No tokens."), "{html}");
    assert!(!html.contains(token), "never the token: {html}");
}

#[rocket::async_test]
async fn a_token_made_by_the_form_is_shown_once_and_reads_its_sets_only() {
    let app = spawn_app().await;
    ada(&app).await;
    let (status, html) = make_by_form(
        &app,
        "name=Nightly+export&expires_days=90&scope=some&sets=Users",
    )
    .await;
    assert_eq!(status, Status::Ok, "the screen rendered in place: {html}");
    let token = inside(&html, "data-new-token>")
        .expect("the new token in the page")
        .to_owned();
    assert_eq!(token.len(), 64, "the token itself: {token}");
    assert_eq!(html.matches(&token).count(), 1, "shown once: {html}");
    assert!(html.contains("it will not be shown again"), "{html}");
    assert!(html.contains("The token was made."), "the message: {html}");

    let again = account(&app).await;
    assert!(!again.contains(&token), "never shown again: {again}");
    assert!(!again.contains("data-new-token"), "{again}");

    read(&app, &token, "Users").await.ok();
    read(&app, &token, "Organisations")
        .await
        .assert_error(Status::Forbidden, None);
    let listed = &listing(&app.client).await["value"][0];
    assert_eq!(listed["name"], json!("Nightly export"));
    assert_eq!(listed["sets"], json!(["Users"]));
    let days = seconds_until(&listed["expires_at"]) as f64 / 86_400.0;
    assert!((89.9..=90.0).contains(&days), "{days}");
}

#[rocket::async_test]
async fn the_form_gives_every_set_or_the_checked_ones() {
    let app = spawn_app().await;
    ada(&app).await;
    // `all` ignores boxes left checked; `some` takes every checked one.
    let (status, _) = make_by_form(&app, "name=all&scope=all&sets=Users").await;
    assert_eq!(status, Status::Ok);
    let (status, _) = make_by_form(&app, "name=two&scope=some&sets=Users&sets=Organisations").await;
    assert_eq!(status, Status::Ok);
    let listed = listing(&app.client).await["value"].clone();
    assert_eq!(listed[0]["sets"], Value::Null, "{listed}");
    assert_eq!(
        listed[1]["sets"],
        json!(["Organisations", "Users"]),
        "{listed}"
    );
}

#[rocket::async_test]
async fn a_form_without_a_checked_set_or_a_lifetime_allowed_shows_the_error_at_its_field() {
    let app = spawn_app().await;
    ada(&app).await;
    let (status, to) = make_by_form(&app, "name=CI&expires_days=30&scope=some").await;
    assert_eq!((status, to.as_str()), (Status::SeeOther, "/account"));
    let html = account(&app).await;
    assert_eq!(
        inside(&html, r#"id="token-sets-error""#),
        Some("This field is required.")
    );
    assert!(
        html.contains(r#"data-action="token-new" open"#),
        "the form is open: {html}"
    );
    assert!(html.contains(r#"value="CI""#), "the name as typed: {html}");
    assert_eq!(listing(&app.client).await["value"], json!([]));

    // No expiry only where the setting allows it.
    let (status, _) = make_by_form(&app, "name=CI&expires_days=none&scope=all").await;
    assert_eq!(status, Status::SeeOther);
    let html = account(&app).await;
    assert_eq!(
        inside(&html, r#"id="token-expires_days-error""#),
        Some("Please choose one of the offered values.")
    );
    assert!(!html.contains(r#"value="none""#), "not offered: {html}");
    assert_eq!(listing(&app.client).await["value"], json!([]));

    let app = spawn_app_with(|f| f.merge(("tokens.allow_no_expiry", true))).await;
    ada(&app).await;
    assert!(account(&app).await.contains(r#"<option value="none""#));
    let (status, _) = make_by_form(&app, "name=CI&expires_days=none&scope=all").await;
    assert_eq!(status, Status::Ok);
    assert_eq!(
        listing(&app.client).await["value"][0]["expires_at"],
        Value::Null
    );
}

#[rocket::async_test]
async fn a_token_revoked_by_its_form_reads_nothing() {
    let app = spawn_app().await;
    ada(&app).await;
    let (_, made) = post(&app.client, "/auth/tokens", json!({"name": "CI"})).await;
    let token = made["token"].as_str().unwrap();
    read(&app, token, "Users").await.ok();
    let revoke = format!("/auth/tokens/{}/revoke", made["id"]);
    let answer = app.post_form(&revoke, "").await;
    assert_eq!(answer.status(), Status::SeeOther);
    assert_eq!(location(&answer), "/account");
    drop(answer);
    let html = account(&app).await;
    assert!(html.contains("The token was revoked"), "{html}");
    assert!(!html.contains("data-token-id"), "{html}");
    read(&app, token, "Users")
        .await
        .assert_error(Status::Unauthorized, None);
    let answer = app.post_form(&revoke, "").await;
    assert_eq!(answer.status(), Status::NotFound, "once");
}

#[rocket::async_test]
async fn the_section_speaks_german_to_a_german_browser() {
    let app = spawn_app().await;
    ada(&app).await;
    let page = app
        .client
        .get("/account")
        .header(Header::new("Accept", "text/html"))
        .header(Header::new("Accept-Language", "de"))
        .dispatch()
        .await;
    let html = page.into_string().await.unwrap_or_default();
    assert!(
        html.contains(r#"id="tokens-heading">Zugriff für Skripte<"#),
        "{html}"
    );
    assert!(html.contains("Keine Tokens."), "{html}");
    assert!(html.contains("Alles, was Sie lesen dürfen"), "{html}");
}
