//! The screens in a real browser: headless chromium, driven through
//! chromedriver, against the real `gatehouse serve` on a fresh database
//! (SQLite, or a PostgreSQL schema when `GATEHOUSE_TEST_DATABASE_URL` is set).
//!
//! Every flow runs twice: with JavaScript off (form posts and 303s) and on
//! (the screens' script makes JSON calls). Tests find elements by the screens'
//! DOM contract only: forms post to `/auth/...`, inputs have `id` = `name` =
//! the field name, the form-level message is `#form-message`, a field's error
//! `#<field>-error`, the logo `img.logo`. On the account screen, where several
//! forms share field names, a field's `id` is its form's prefix and its name
//! (`change-current_password`, `enable-password`, `confirm-code`,
//! `others-password`, `reauth-password`, …), its error `#<id>-error` with
//! `data-error-for="<field>"`; each form but the enrolment code's sits in a
//! `<details>` opened by its summary (the harness opens it before filling or
//! submitting), and the password fields of the changes sudo mode guards are
//! there only outside its window (`[data-reauth-open]` says it is open, the
//! confirm box is `details[data-reauth]`, its passkey button
//! `[data-confirm-passkey]`); the QR code is `.qr svg`, the key
//! `[data-secret]`, the recovery codes `[data-recovery-codes] code`, each
//! session a `[data-session="<handle>"]` whose device (in words) is `.device`. With
//! passkeys on (a site served as `localhost`), the sign-in screen's button is
//! `[data-passkey-sign-in]`, the two-factor screen's `[data-passkey-second-step]`,
//! each listed passkey a `[data-passkey-id="<id>"]` with `.name` and `.meta`,
//! the form adding one `#add-name` and `#add-password`; every control that
//! needs the script is `[data-passkey]` (served hidden), and the note saying
//! so `[data-passkey-note]`. The browser's virtual authenticator (WebDriver's
//! WebAuthn extension) makes and uses the passkeys.
//!
//! chromium and chromedriver come from Debian (`apt-get install chromium
//! chromium-driver`). Without them the tests are skipped with a message, and
//! fail when `CI` is set. `GATEHOUSE_SCREENSHOTS=1` also saves a screenshot of
//! every screen to `docs/screenshots/`.

mod common;
#[path = "browser/harness.rs"]
mod harness;
#[path = "oidc/harness.rs"]
#[allow(dead_code)]
mod oidc_provider;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use common::PASSWORD;
use harness::{tools, Browser, BrowserOptions, Js, Site, SiteOptions, Tools};
use serde_json::{json, Value};
use totp_rs::{Algorithm, Secret, TOTP};

const EMAIL: &str = "ada@example.org";
const NAME: &str = "Ada Lovelace";
const WRONG_PASSWORD: &str = "not the password at all";
/// Safari on an iPhone, as it introduces itself.
const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                      (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
/// Chrome on an Android tablet.
const ANDROID_TABLET: &str = "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 \
                              (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const NEW_PASSWORD: &str = "violet gearwheels hum at midnight";

/// One test function per behaviour, run as `<name>::with_js` and
/// `<name>::without_js`.
macro_rules! with_and_without_js {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn with_js() {
                super::$name(super::Js::On).await
            }

            #[tokio::test]
            async fn without_js() {
                super::$name(super::Js::Off).await
            }
        }
    )*};
}

with_and_without_js!(
    sign_in_leads_a_new_user_through_org_setup_to_the_dashboard,
    wrong_password_shows_a_message,
    sixth_wrong_attempt_shows_the_throttle_message,
    forgotten_password_is_replaced_through_the_mailed_link,
    signing_out_from_the_dashboard_lands_on_home,
    signing_out_from_the_confirm_screen_lands_on_home,
    a_field_error_is_shown_at_its_field,
    the_password_is_changed_from_the_account_screen,
    two_factor_sign_in_is_turned_on_from_the_account_screen_and_asks_for_a_code,
    a_recovery_code_signs_in_from_the_two_factor_screen,
    other_sessions_are_ended_from_the_sessions_list,
    a_recalled_browser_confirms_with_its_password,
    a_breached_password_is_replaced_before_anything_else,
    an_openid_provider_signs_a_new_user_in_and_makes_the_account,
    a_token_for_scripts_is_made_shown_once_and_revoked_from_the_account_screen,
);

#[path = "browser/device.rs"]
mod device;

/// The browser tools and a site with Ada's account; `None` when the test is
/// skipped.
async fn setup(options: SiteOptions) -> Option<(Tools, Site)> {
    let tools = tools()?;
    let site = Site::start(&[(EMAIL, NAME, PASSWORD)], options).await;
    Some((tools, site))
}

/// A message shown to a person: words, not the wire code `code`, with every
/// placeholder filled in.
fn assert_worded(message: &str, code: &str) {
    let message = message.trim();
    assert!(!message.is_empty(), "an empty message instead of {code}");
    let looks_like_a_code = message.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    assert!(
        message != code && !looks_like_a_code,
        "the screen shows the raw code {code:?} instead of words: {message:?}"
    );
    assert!(
        !message.contains('{') && !message.contains('}'),
        "a placeholder is left in the message: {message:?}"
    );
}

async fn sign_in_leads_a_new_user_through_org_setup_to_the_dashboard(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;

    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;

    browser.fill("org_name", "Analytical Engines Ltd").await;
    browser.choose("legal_form", "1").await;
    browser.choose("company_size", "small").await;
    browser.choose("function", "tech_lead").await;
    browser.fill("billing_email", "billing@example.org").await;
    browser.submit("/auth/intents/org-setup").await;

    browser.wait_for_path("/dashboard").await;
    assert_eq!(
        browser.wait_for_text("#user-email").await,
        EMAIL,
        "the dashboard shows who is signed in"
    );

    // With an organisation, the next sign-in goes straight to the dashboard.
    browser.submit("/logout").await;
    browser.wait_for_path("/").await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/dashboard").await;
}

async fn wrong_password_shows_a_message(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;

    browser.goto("/login").await;
    browser.fill("email", EMAIL).await;
    browser.fill("password", WRONG_PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/login").await;

    let message = browser.wait_for_message().await;
    assert_eq!(
        browser.path().await,
        "/login",
        "still on the sign-in screen"
    );
    assert_eq!(
        browser.page_was_replaced().await,
        js == Js::Off,
        "without JavaScript the form post loads the screen anew; with it the script shows \
         the answer in place"
    );
    assert_worded(&message, "credentials_do_not_match");
    assert!(
        message.to_lowercase().contains("match"),
        "the English message says the credentials do not match: {message:?}"
    );
    assert_eq!(
        browser.attribute("#form-message", "role").await.as_deref(),
        Some("alert"),
        "the form message is announced"
    );
}

async fn sixth_wrong_attempt_shows_the_throttle_message(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;

    browser.goto("/login").await;
    let mut messages = Vec::new();
    for attempt in 1..=6 {
        browser.wait_for_path("/login").await;
        browser.fill("email", EMAIL).await;
        browser
            .fill("password", &format!("{WRONG_PASSWORD} {attempt}"))
            .await;
        browser.mark_page().await;
        browser.submit("/auth/login").await;
        messages.push(browser.wait_for_message().await);
    }
    assert!(
        messages[..5].iter().all(|m| m == &messages[0]),
        "the first five failures say the same: {messages:#?}"
    );
    assert_ne!(
        messages[5], messages[4],
        "the sixth attempt is refused with the throttle message: {messages:#?}"
    );
    assert_worded(&messages[5], "auth_throttle");
    assert!(
        messages[5].chars().any(|c| c.is_ascii_digit()),
        "the throttle message says how many seconds to wait: {:?}",
        messages[5]
    );

    // Even the right password is refused now.
    browser.fill("email", EMAIL).await;
    browser.fill("password", PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/login").await;
    let refused = browser.wait_for_message().await;
    assert_eq!(
        browser.path().await,
        "/login",
        "not signed in while throttled"
    );
    assert_ne!(
        refused, messages[0],
        "throttled, not told the credentials are wrong"
    );
}

async fn forgotten_password_is_replaced_through_the_mailed_link(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;

    browser.goto("/login/forgot-password").await;
    browser.fill("email", EMAIL).await;
    browser.mark_page().await;
    browser.submit("/auth/forgot-password").await;
    let message = browser.wait_for_message().await;
    assert_worded(&message, "reset_link_sent");

    let link = site.wait_for_link(EMAIL, "/password/reset/").await;
    assert!(
        link.starts_with(&format!("{}/", site.base)),
        "the mailed link uses base_url: {link}"
    );
    browser.goto(&link).await;
    browser
        .wait_for_path_where("the set-password screen", |p| {
            p.starts_with("/login/set-password/")
        })
        .await;
    browser.fill("password", NEW_PASSWORD).await;
    browser.fill("password_confirmation", NEW_PASSWORD).await;
    browser.submit("/auth/reset-password").await;
    browser.wait_for_path("/login").await;

    browser.fill("email", EMAIL).await;
    browser.fill("password", PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/login").await;
    browser.wait_for_message().await;
    assert_eq!(
        browser.path().await,
        "/login",
        "the old password no longer works"
    );

    browser.sign_in(EMAIL, NEW_PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
}

async fn signing_out_from_the_dashboard_lands_on_home(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;

    browser.goto("/dashboard").await;
    assert_eq!(browser.wait_for_text("#user-email").await, EMAIL);
    browser.submit("/logout").await;
    browser.wait_for_path("/").await;

    browser.goto("/dashboard").await;
    browser.wait_for_path("/login").await;
}

async fn signing_out_from_the_confirm_screen_lands_on_home(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;

    browser.goto("/logout").await;
    browser.wait_for_path("/logout").await;
    browser.submit("/logout").await;
    browser.wait_for_path("/").await;

    browser.goto("/dashboard").await;
    browser.wait_for_path("/login").await;
}

async fn a_field_error_is_shown_at_its_field(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;

    // No organisation name.
    browser.choose("legal_form", "2").await;
    browser.mark_page().await;
    browser.submit("/auth/intents/org-setup").await;
    let error = browser.wait_for_text("#org_name-error").await;
    assert_eq!(browser.path().await, "/login/org-setup");
    assert_worded(&error, "required");
    assert_eq!(
        browser
            .attribute("#org_name", "aria-invalid")
            .await
            .as_deref(),
        Some("true"),
        "the field is marked invalid"
    );
    let described_by = browser
        .attribute("#org_name", "aria-describedby")
        .await
        .unwrap_or_default();
    assert!(
        described_by
            .split_whitespace()
            .any(|id| id == "org_name-error"),
        "the error is tied to its field: aria-describedby={described_by:?}"
    );
}

async fn a_breached_password_is_replaced_before_anything_else(js: Js) {
    let options = SiteOptions {
        breached: vec![PASSWORD],
        ..SiteOptions::default()
    };
    let Some((tools, site)) = setup(options).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/change-password").await;
    let why = browser.text(".intro").await;
    assert!(why.contains("breach"), "the screen says why: {why:?}");

    // Nothing else opens until the password is changed.
    browser.goto("/account").await;
    browser.wait_for_path("/login/change-password").await;

    // The same password again is refused, in words, at its field.
    browser.fill("password", PASSWORD).await;
    browser.fill("password_confirmation", PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/intents/password-change").await;
    let error = browser.wait_for_text("#password-error").await;
    assert_worded(&error, "breached");
    assert_eq!(browser.path().await, "/login/change-password");

    // A new one goes on with the host's own intent: a new user sets up an
    // organisation.
    browser.fill("password", NEW_PASSWORD).await;
    browser.fill("password_confirmation", NEW_PASSWORD).await;
    browser.submit("/auth/intents/password-change").await;
    browser.wait_for_path("/login/org-setup").await;
    site.wait_for_link(EMAIL, "/login/forgot-password").await;

    browser.sign_out().await;
    browser.sign_in(EMAIL, NEW_PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
}

/// An OpenID provider with Grace's account (`grace@acme.example`), and
/// `gatehouse serve` configured with it as `acme` (accounts made for
/// `acme.example`), with `users` and `options`; `None` when the provider
/// cannot run here (outside CI).
async fn site_with_provider(
    users: &[(&str, &str, &str)],
    options: SiteOptions,
) -> Option<(oidc_provider::Provider, Site)> {
    let port = harness::free_port();
    let client = oidc_provider::OidcClient {
        client_id: "gatehouse".into(),
        client_secret: "the site's client secret".into(),
        redirect_uris: vec![format!("http://127.0.0.1:{port}/auth/oidc/acme/callback")],
    };
    let grace = oidc_provider::OidcAccount {
        sub: "grace-sub".into(),
        email: "grace@acme.example".into(),
        email_verified: true,
        name: "Grace Hopper".into(),
    };
    let provider = oidc_provider::Provider::start(&[client], &[grace]).await?;
    let acme = format!(
        "{{issuer=\"{}\",client_id=\"gatehouse\",client_secret=\"the site's client secret\",\
         label=\"Acme ID\",create_accounts=true,email_domains=[\"acme.example\"]}}",
        provider.issuer()
    );
    let options = SiteOptions {
        port: Some(port),
        oidc_acme: Some(acme),
        ..options
    };
    let site = Site::start(users, options).await;
    Some((provider, site))
}

async fn an_openid_provider_signs_a_new_user_in_and_makes_the_account(js: Js) {
    let Some(tools) = harness::tools() else {
        return;
    };
    let users = [(EMAIL, NAME, PASSWORD)];
    let Some((_provider, site)) = site_with_provider(&users, SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.goto("/login").await;
    browser.wait_for_path("/login").await;
    if js == Js::On {
        browser.click("#remember").await;
    }
    browser.click("button[data-oidc=acme]").await;

    // The provider's own sign-in page.
    browser
        .wait_for_path_where("the provider's sign-in page", |p| {
            p.starts_with("/interaction/")
        })
        .await;
    browser.fill("login", "grace@acme.example").await;
    browser.fill("password", "any password at all").await;
    browser.click("#sign-in").await;

    // Back signed in, in a new account: the host's intent loop goes on.
    browser.wait_for_path("/login/org-setup").await;
    browser.goto("/account").await;
    browser.wait_for_path("/account").await;
    let linked = browser.text("[data-oidc-link] .name").await;
    assert_eq!(linked.trim(), "Acme ID");
}

/// Fills the account screen's change-password form and sends it.
async fn change_password(browser: &Browser, current: &str, new: &str) {
    browser.fill("change-current_password", current).await;
    browser.fill("change-password", new).await;
    browser.fill("change-password_confirmation", new).await;
    browser.mark_page().await;
    browser.submit("/auth/password").await;
}

async fn the_password_is_changed_from_the_account_screen(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    browser.goto("/account").await;

    change_password(&browser, WRONG_PASSWORD, NEW_PASSWORD).await;
    let error = browser
        .wait_for_text("#change-current_password-error")
        .await;
    assert_worded(&error, "current_password");
    assert_eq!(browser.path().await, "/account");

    change_password(&browser, PASSWORD, NEW_PASSWORD).await;
    let message = browser.wait_for_message().await;
    assert_worded(&message, "password_changed");
    assert!(
        message.to_lowercase().contains("changed"),
        "the English message says the password was changed: {message:?}"
    );

    browser.sign_out().await;
    browser.sign_in(EMAIL, NEW_PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
}

/// Makes a token named `name` for the set `Users` from the account screen
/// shown, and answers it as the page shows it.
async fn make_token(browser: &Browser, name: &str) -> String {
    browser.fill("token-name", name).await;
    browser.choose("token-expires_days", "7").await;
    browser.choose("scope", "some").await;
    browser.click("input[name=sets][value=Users]").await;
    browser.mark_page().await;
    browser.submit("/auth/tokens").await;
    browser.wait_for_text("[data-new-token]").await
}

/// The status of `GET /odata/Users` with `token` as a script sends it.
async fn read_with(site: &Site, token: &str) -> u16 {
    let answer = reqwest::Client::new()
        .get(site.url("/odata/Users"))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET /odata/Users");
    answer.status().as_u16()
}

async fn a_token_for_scripts_is_made_shown_once_and_revoked_from_the_account_screen(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    browser.goto("/account").await;
    assert_eq!(browser.count("[data-token-id]").await, 0);

    // "Only these sets" with none checked: the error at the boxes.
    browser.fill("token-name", "Nightly export").await;
    browser.choose("scope", "some").await;
    browser.mark_page().await;
    browser.submit("/auth/tokens").await;
    assert_worded(
        &browser.wait_for_text("#token-sets-error").await,
        "required",
    );
    assert_eq!(browser.count("[data-token-id]").await, 0);

    let token = make_token(&browser, "Nightly export").await;
    assert_worded(&browser.wait_for_message().await, "token_created");
    assert_eq!(token.len(), 64, "the token itself: {token:?}");
    let listed = browser.texts("[data-token-id] .name").await;
    assert_eq!(listed, [format!("Nightly export {}…", &token[..8])]);
    assert_eq!(browser.text("[data-token-sets]").await, "Reads: Users");
    assert_eq!(read_with(&site, &token).await, 200);

    browser.goto("/account").await;
    let page = browser
        .eval("return document.documentElement.outerHTML", vec![])
        .await;
    let page = page.as_str().unwrap_or_default();
    assert!(page.contains("data-token-id"), "still listed");
    assert!(!page.contains(&token), "shown once only");

    let id = browser
        .attribute("[data-token-id]", "data-token-id")
        .await
        .expect("the token's row");
    browser.mark_page().await;
    browser.submit(&format!("/auth/tokens/{id}/revoke")).await;
    assert_worded(&browser.wait_for_message().await, "token_revoked");
    assert_eq!(browser.count("[data-token-id]").await, 0);
    assert_eq!(read_with(&site, &token).await, 401);
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// The 6-digit code an authenticator app shows for `key` (base32) at Unix
/// time `at`.
fn code(key: &str, at: u64) -> String {
    let bytes = Secret::Encoded(key.to_owned())
        .to_bytes()
        .expect("a base32 key");
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, bytes).generate(at)
}

/// Asks the account screen to turn two-factor sign-in on: waits for the QR
/// code and answers the key shown beside it.
async fn start_two_factor(browser: &Browser) -> String {
    browser.goto("/account").await;
    // Signed in moments ago: sudo mode asks no password.
    assert!(
        !browser.exists("#enable-password").await,
        "no password field in the window"
    );
    browser.submit("/auth/two-factor").await;
    browser.wait_for_element(".qr svg").await;
    browser.text("[data-secret]").await
}

/// Confirms two-factor sign-in with the code of `key` at this moment;
/// answers the recovery codes shown.
async fn confirm_two_factor(browser: &Browser, key: &str) -> Vec<String> {
    browser.fill("confirm-code", &code(key, now())).await;
    browser.mark_page().await;
    browser.submit("/auth/two-factor/confirm").await;
    assert_worded(&browser.wait_for_message().await, "two_factor_enabled");
    let codes = browser.texts("[data-recovery-codes] code").await;
    assert_eq!(codes.len(), 10, "ten recovery codes are shown: {codes:?}");
    assert!(
        !browser.exists(".qr svg").await && !browser.exists("[data-secret]").await,
        "once two-factor sign-in is on, the QR code and the key are gone"
    );
    codes
}

/// Turns two-factor sign-in on from the account screen; answers the key and
/// the recovery codes.
async fn turn_on_two_factor(browser: &Browser) -> (String, Vec<String>) {
    let key = start_two_factor(browser).await;
    let codes = confirm_two_factor(browser, &key).await;
    (key, codes)
}

async fn two_factor_sign_in_is_turned_on_from_the_account_screen_and_asks_for_a_code(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    let (key, _) = turn_on_two_factor(&browser).await;
    assert!(
        key.len() >= 32 && key.chars().all(|c| c.is_ascii_alphanumeric()),
        "the key is shown for typing in: {key:?}"
    );

    browser.sign_out().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/two-factor").await;
    browser.fill("code", "000000").await;
    browser.mark_page().await;
    browser.submit("/auth/two-factor-challenge").await;
    let message = browser.wait_for_message().await;
    assert_worded(&message, "two_factor_failed");
    assert_eq!(browser.path().await, "/login/two-factor");

    // The step that confirmed the enrolment is spent; the app's next one
    // signs in.
    browser.fill("code", &code(&key, now() + 30)).await;
    browser.submit("/auth/two-factor-challenge").await;
    browser.wait_for_path("/login/org-setup").await;
}

async fn a_recovery_code_signs_in_from_the_two_factor_screen(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    let (_, codes) = turn_on_two_factor(&browser).await;

    browser.sign_out().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/two-factor").await;
    browser.click("details summary").await;
    browser.fill("recovery_code", &codes[0]).await;
    browser.submit("/auth/two-factor-challenge").await;
    browser.wait_for_path("/login/org-setup").await;
}

async fn other_sessions_are_ended_from_the_sessions_list(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    let phone = site.sign_in_elsewhere(EMAIL, PASSWORD, IPHONE).await;
    let tablet = site
        .sign_in_elsewhere(EMAIL, PASSWORD, ANDROID_TABLET)
        .await;

    browser.goto("/account").await;
    let devices = browser.texts("[data-session] .device").await;
    assert_eq!(devices.len(), 3, "three sessions are listed: {devices:?}");
    assert!(
        devices.iter().any(|d| d == "Safari on iPhone"),
        "devices in words: {devices:?}"
    );
    let handle = browser
        .eval(
            "const row = [...document.querySelectorAll('[data-session]')] \
                 .find(r => r.querySelector('.device').innerText.trim() === arguments[0]); \
             return row ? row.dataset.session : null",
            vec![json!("Safari on iPhone")],
        )
        .await;
    let handle = handle.as_str().expect("the phone's row");
    browser.mark_page().await;
    browser
        .submit(&format!("/auth/sessions/{handle}/end"))
        .await;
    assert_worded(&browser.wait_for_message().await, "session_ended");
    let devices = browser.texts("[data-session] .device").await;
    assert_eq!(
        devices.len(),
        2,
        "the phone is gone from the list: {devices:?}"
    );
    assert!(
        !devices.iter().any(|d| d == "Safari on iPhone"),
        "{devices:?}"
    );
    assert!(
        devices.iter().any(|d| d == "Chrome on Android"),
        "{devices:?}"
    );
    assert!(!site.is_signed_in(&phone).await, "the phone is signed out");
    assert!(
        site.is_signed_in(&tablet).await,
        "the tablet is still signed in"
    );

    browser.mark_page().await;
    browser.submit("/auth/sessions/end-others").await;
    assert_worded(&browser.wait_for_message().await, "other_sessions_ended");
    assert_eq!(
        browser.count("[data-session]").await,
        1,
        "only this device is left"
    );
    assert!(
        !site.is_signed_in(&tablet).await,
        "the tablet is signed out"
    );
    browser.goto("/dashboard").await;
    assert_eq!(
        browser.wait_for_text("#user-email").await,
        EMAIL,
        "this browser is still signed in"
    );
}

#[tokio::test]
async fn with_js_errors_show_in_place_and_sign_in_needs_no_form_post() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;

    browser.goto("/login").await;
    browser.fill("email", EMAIL).await;
    browser.fill("password", WRONG_PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/login").await;
    browser.wait_for_message().await;
    assert!(
        !browser.page_was_replaced().await,
        "with JavaScript the error appears without loading a new page"
    );

    browser.fill("password", PASSWORD).await;
    browser.submit("/auth/login").await;
    browser.wait_for_path("/login/org-setup").await;
    let navigation = browser
        .eval(
            "const n = performance.getEntriesByType('navigation')[0]; \
             return n ? {type: n.type, redirects: n.redirectCount} : null",
            vec![],
        )
        .await;
    assert_eq!(
        navigation["redirects"],
        json!(0),
        "with JavaScript the script follows the intent itself (no form post answered by a 303): \
         {navigation}"
    );
}

/// A site with passkeys on: served as `http://localhost:<port>` (WebAuthn
/// refuses an IP address).
fn with_passkeys() -> SiteOptions {
    SiteOptions {
        localhost: true,
        ..SiteOptions::default()
    }
}

/// Whether any element matching `css` takes up room on the page.
async fn shown(browser: &Browser, css: &str) -> bool {
    browser
        .eval(
            "return [...document.querySelectorAll(arguments[0])].some(e => { \
                 const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })",
            vec![json!(css)],
        )
        .await
        == json!(true)
}

/// Sets up Ada's organisation, so that signing in leads to the dashboard.
async fn set_up_organisation(browser: &Browser) {
    submit_organisation(browser).await;
    browser.wait_for_path("/dashboard").await;
}

/// Fills in and submits the organisation set-up screen (does not wait for
/// where the intent loop goes next).
async fn submit_organisation(browser: &Browser) {
    browser.wait_for_path("/login/org-setup").await;
    browser.fill("org_name", "Analytical Engines Ltd").await;
    browser.choose("legal_form", "1").await;
    browser.choose("company_size", "small").await;
    browser.choose("function", "tech_lead").await;
    browser.submit("/auth/intents/org-setup").await;
}

/// Adds a passkey named `name` from the account screen (the browser's
/// virtual authenticator makes it) and waits for the screen to list it.
async fn add_passkey(browser: &Browser, name: &str) {
    browser.goto("/account").await;
    browser
        .wait_for_element("form[action=\"/auth/passkeys\"] button[type=submit]")
        .await;
    browser.fill("add-name", name).await;
    browser.mark_page().await;
    browser.submit("/auth/passkeys").await;
    let listed = browser.wait_for_text("[data-passkey-id] .name").await;
    assert_eq!(listed, name, "the new passkey is listed");
    assert!(
        browser.page_was_replaced().await,
        "the account screen was loaded again"
    );
    assert_worded(&browser.wait_for_message().await, "passkey_added");
}

/// The browser at Ada's dashboard, with a passkey named `name` added from
/// the account screen, then signed out.
async fn ada_with_a_passkey(browser: &Browser, name: &str) {
    browser.goto("/login").await;
    browser.add_virtual_authenticator().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    set_up_organisation(browser).await;
    add_passkey(browser, name).await;
    browser.sign_out().await;
}

#[tokio::test]
async fn a_passkey_added_on_the_account_screen_signs_in_alone() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    browser.without_passkey_autofill().await;
    browser.goto("/login").await;
    browser.add_virtual_authenticator().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    set_up_organisation(&browser).await;

    add_passkey(&browser, "Ada's laptop").await;
    let meta = browser.text("[data-passkey-id] .meta").await;
    assert!(
        meta.contains("never"),
        "a new passkey was never used: {meta:?}"
    );
    browser.reveal(".activity li").await;
    let activity = browser.texts(".activity li").await;
    assert!(
        activity.iter().any(|e| e.contains("Passkey added")),
        "the activity names the new passkey: {activity:?}"
    );
    browser.sign_out().await;

    browser.goto("/login").await;
    browser.wait_for_element("[data-passkey-sign-in]").await;
    browser.click("#remember").await;
    browser.click("[data-passkey-sign-in]").await;
    browser.wait_for_path("/dashboard").await;
    assert_eq!(
        browser.wait_for_text("#user-email").await,
        EMAIL,
        "the passkey alone signed Ada in"
    );
    let cookies = browser.client().get_all_cookies().await.expect("cookies");
    assert!(
        cookies.iter().any(|c| c.name() == "gatehouse_remember"),
        "\"Keep me signed in\" was sent with the passkey: {cookies:?}"
    );

    browser.goto("/account").await;
    let meta = browser.text("[data-passkey-id] .meta").await;
    assert!(
        !meta.contains("never"),
        "the passkey's last use is shown: {meta:?}"
    );
}

/// A browser whose WebAuthn predates the JSON helpers (WebAuthn Level 3's
/// `parse…OptionsFromJSON`, `toJSON`): the screens' script converts the
/// binary fields itself.
#[tokio::test]
async fn passkeys_work_where_the_browser_has_no_json_helpers() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    browser.without_passkey_autofill().await;
    browser
        .before_every_page(
            "if (window.PublicKeyCredential) { \
                 delete PublicKeyCredential.parseCreationOptionsFromJSON; \
                 delete PublicKeyCredential.parseRequestOptionsFromJSON; \
                 delete PublicKeyCredential.prototype.toJSON; }",
        )
        .await;
    browser.goto("/login").await;
    assert_eq!(
        browser
            .eval(
                "return [typeof PublicKeyCredential.parseRequestOptionsFromJSON, \
                     typeof PublicKeyCredential.prototype.toJSON]",
                vec![],
            )
            .await,
        json!(["undefined", "undefined"]),
        "the helpers are gone"
    );
    ada_with_a_passkey(&browser, "Ada's old browser").await;

    browser.goto("/login").await;
    browser.wait_for_element("[data-passkey-sign-in]").await;
    browser.click("[data-passkey-sign-in]").await;
    browser.wait_for_path("/dashboard").await;
    assert_eq!(browser.wait_for_text("#user-email").await, EMAIL);
}

#[tokio::test]
async fn passkey_autofill_on_the_address_field_signs_in() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    browser.goto("/login").await;
    assert_eq!(
        browser.attribute("#email", "autocomplete").await.as_deref(),
        Some("username webauthn"),
        "the address field offers passkeys"
    );
    ada_with_a_passkey(&browser, "Ada's laptop").await;

    // The virtual authenticator picks the passkey from the suggestions as
    // soon as the screen asks (a person would choose it under the field).
    browser.goto("/login").await;
    browser.wait_for_path("/dashboard").await;
    assert_eq!(browser.wait_for_text("#user-email").await, EMAIL);
}

/// Sudo mode in the browser: a browser that was closed and signed in again
/// by its remember-me cookie asks who it is before a passkey is removed; a
/// wrong password is refused at its field, the passkey confirms, and then
/// the passkey goes without a password.
#[tokio::test]
async fn a_recalled_browser_confirms_with_a_passkey_then_removes_one() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = remembered_with_a_passkey(&tools, &site).await;
    assert!(
        browser.exists("[data-reauth-open]").await,
        "signed in moments ago"
    );

    browser.forget_session().await;
    browser.goto("/account").await;
    assert!(
        !browser.exists("[data-reauth-open]").await,
        "a recall is no proof"
    );
    let id = browser
        .attribute("[data-passkey-id]", "data-passkey-id")
        .await
        .expect("the passkey's row");
    let action = format!("/auth/passkeys/{id}/delete");
    browser
        .fill(&format!("remove-{id}-password"), WRONG_PASSWORD)
        .await;
    browser.mark_page().await;
    browser.submit(&action).await;
    let error = browser
        .wait_for_text(&format!("#remove-{id}-password-error"))
        .await;
    assert_worded(&error, "current_password");
    assert_eq!(browser.count("[data-passkey-id]").await, 1, "still listed");

    // The passkey confirms who this is.
    browser.mark_page().await;
    browser.reveal("[data-confirm-passkey]").await;
    browser.click("[data-confirm-passkey]").await;
    assert_worded(&browser.wait_for_message().await, "identity_confirmed");
    assert!(
        browser.page_was_replaced().await,
        "the screen was loaded again"
    );
    browser.wait_for_element("[data-reauth-open]").await;
    assert!(
        !browser.exists(&format!("#remove-{id}-password")).await,
        "no password field in the window"
    );

    browser.mark_page().await;
    browser.submit(&action).await;
    assert_worded(&browser.wait_for_message().await, "passkey_removed");
    assert!(
        browser.page_was_replaced().await,
        "the screen was loaded again"
    );
    assert_eq!(
        browser.count("[data-passkey-id]").await,
        0,
        "no longer listed"
    );
    browser.reveal(".activity li").await;
    let activity = browser.texts(".activity li").await;
    assert!(
        activity.iter().any(|e| e.contains("Passkey removed")),
        "the activity names the removal: {activity:?}"
    );
}

/// A browser (JavaScript on) signed in as Ada with "remember me", who
/// added a passkey made by its virtual authenticator.
async fn remembered_with_a_passkey(tools: &Tools, site: &Site) -> Browser {
    let browser = Browser::open(tools, site, BrowserOptions::new(Js::On)).await;
    browser.goto("/login").await;
    browser.add_virtual_authenticator().await;
    browser.sign_in_remembered(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    add_passkey(&browser, "Ada's laptop").await;
    browser
}

/// axe-core's script, installed by `npm ci --prefix host/tests/axe`;
/// without it the test is skipped with a message (and fails in CI).
fn axe_script() -> Option<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/axe/node_modules/axe-core/axe.min.js");
    match std::fs::read_to_string(&path) {
        Ok(script) => Some(script),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!(
                "{}: {e}; run npm ci --prefix host/tests/axe",
                path.display()
            )
        }
        Err(e) => {
            eprintln!(
                "skipped: {}: {e}; run npm ci --prefix host/tests/axe",
                path.display()
            );
            None
        }
    }
}

/// What axe finds against WCAG 2.1 A and AA on the page shown, with every
/// `<details>` opened (the forms behind their actions included): each
/// violation's rule, impact and elements.
async fn axe_violations(browser: &Browser, axe: &str) -> Vec<Value> {
    browser.eval(&format!("{axe}\n;return null"), vec![]).await;
    let found = browser
        .eval(
            "document.querySelectorAll('details').forEach(d => { d.open = true; }); \
             return axe.run(document, { runOnly: { type: 'tag', \
                 values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }) \
               .then(r => r.violations.map(v => ({ rule: v.id, impact: v.impact, \
                   nodes: v.nodes.map(n => n.target.join(' ')) })))",
            vec![],
        )
        .await;
    found.as_array().cloned().unwrap_or_default()
}

/// axe finds no violation on the account screen, in English and German,
/// inside sudo mode's window and outside it (its confirm box shown), with
/// a token for scripts listed and with a new one shown.
#[tokio::test]
async fn axe_finds_no_violation_on_the_account_screen() {
    let Some(axe) = axe_script() else {
        return;
    };
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = remembered_with_a_passkey(&tools, &site).await;
    site.sign_in_elsewhere(EMAIL, PASSWORD, IPHONE).await;
    // axe runs, and sees what it should: an image without words.
    browser.goto("/account").await;
    browser
        .eval("document.querySelector('main').appendChild(document.createElement('img')); return null", vec![])
        .await;
    let probe = axe_violations(&browser, &axe).await;
    assert!(probe.iter().any(|v| v["rule"] == "image-alt"), "{probe:#?}");
    for (state, lang) in [("in the window", "en"), ("in the window", "de")] {
        browser.goto(&format!("/account?lang={lang}")).await;
        browser.wait_for_element("[data-reauth-open]").await;
        let found = axe_violations(&browser, &axe).await;
        assert!(found.is_empty(), "{lang}, {state}: {found:#?}");
    }
    // A token listed, and the answer that shows a new one.
    browser.goto("/account?lang=en").await;
    make_token(&browser, "Nightly export").await;
    let found = axe_violations(&browser, &axe).await;
    assert!(found.is_empty(), "a new token shown: {found:#?}");
    browser.forget_session().await;
    for lang in ["de", "en"] {
        browser.goto(&format!("/account?lang={lang}")).await;
        browser.wait_for_element("details[data-reauth]").await;
        browser.wait_for_element("[data-token-id]").await;
        let found = axe_violations(&browser, &axe).await;
        assert!(found.is_empty(), "{lang}, outside the window: {found:#?}");
    }
}

/// Sudo mode without a passkey, with JavaScript on and off: after a recall
/// the forms ask for the password, the box confirms once (a wrong password
/// refused at its field), and then the forms ask nothing for a while.
async fn a_recalled_browser_confirms_with_its_password(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    browser.sign_in_remembered(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    let phone = site.sign_in_elsewhere(EMAIL, PASSWORD, IPHONE).await;

    browser.forget_session().await;
    browser.goto("/account").await;
    assert!(
        browser.exists("#others-password").await,
        "outside the window the form asks"
    );
    browser.fill("reauth-password", WRONG_PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/confirm").await;
    let error = browser.wait_for_text("#reauth-password-error").await;
    assert_worded(&error, "current_password");

    browser.fill("reauth-password", PASSWORD).await;
    browser.mark_page().await;
    browser.submit("/auth/confirm").await;
    assert_worded(&browser.wait_for_message().await, "identity_confirmed");
    browser.wait_for_element("[data-reauth-open]").await;
    assert!(
        !browser.exists("#others-password").await,
        "no password field in the window"
    );
    let until = browser.text("[data-reauth-open] time").await;
    // The window's end, in the reader's language: in UTC (marked) from the
    // server, in the browser's own zone once the script has run.
    let marked_utc = until.ends_with(" UTC");
    assert_eq!(marked_utc, matches!(js, Js::Off), "{until:?}");
    let month = until.split(' ').nth(1).unwrap_or_default();
    assert_eq!(month.len(), 3, "26 Nov 2026, 04:14: {until:?}");

    browser.mark_page().await;
    browser.submit("/auth/sessions/end-others").await;
    assert_worded(&browser.wait_for_message().await, "other_sessions_ended");
    assert!(!site.is_signed_in(&phone).await, "the phone is signed out");
}

#[tokio::test]
async fn the_passkey_button_says_when_no_passkey_was_used() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    browser.goto("/login").await;
    // An authenticator without any passkey for this site.
    browser.add_virtual_authenticator().await;
    browser.wait_for_element("[data-passkey-sign-in]").await;
    browser.mark_page().await;
    browser.click("[data-passkey-sign-in]").await;
    assert_worded(&browser.wait_for_message().await, "passkey_cancelled");
    assert_eq!(browser.path().await, "/login", "nobody is signed in");

    // The password still signs in.
    browser.fill("email", EMAIL).await;
    browser.fill("password", PASSWORD).await;
    browser.submit("/auth/login").await;
    browser.wait_for_path("/login/org-setup").await;
}

#[tokio::test]
async fn the_second_step_is_answered_with_a_passkey() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    // Else the sign-in screen's autofill would sign in with the passkey
    // alone, which needs no second step.
    browser.without_passkey_autofill().await;
    browser.goto("/login").await;
    browser.add_virtual_authenticator().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    set_up_organisation(&browser).await;
    turn_on_two_factor(&browser).await;
    add_passkey(&browser, "Ada's laptop").await;
    browser.sign_out().await;

    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/two-factor").await;
    browser.wait_for_element("[data-passkey-second-step]").await;
    browser.click("[data-passkey-second-step]").await;
    browser.wait_for_path("/dashboard").await;
    assert_eq!(
        browser.wait_for_text("#user-email").await,
        EMAIL,
        "the passkey answered the second step"
    );
}

#[tokio::test]
async fn without_a_passkey_the_second_step_says_so() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    browser.sign_in(EMAIL, PASSWORD).await;
    set_up_organisation(&browser).await;
    turn_on_two_factor(&browser).await;
    browser.sign_out().await;

    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/two-factor").await;
    browser.wait_for_element("[data-passkey-second-step]").await;
    browser.mark_page().await;
    browser.click("[data-passkey-second-step]").await;
    assert_worded(&browser.wait_for_message().await, "passkey_none");
    assert!(
        !shown(&browser, "[data-passkey-second-step]").await,
        "the passkey button is gone"
    );
    assert!(
        shown(&browser, "#code").await,
        "the code is still asked for"
    );
}

#[tokio::test]
async fn without_js_no_passkey_control_is_shown_and_the_password_signs_in() {
    let Some((tools, site)) = setup(with_passkeys()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::Off)).await;

    browser.goto("/login").await;
    assert!(
        browser.exists("[data-passkey-sign-in]").await,
        "passkeys are on: the screen holds the (hidden) button; {}",
        browser.describe().await
    );
    assert!(
        !shown(&browser, "[data-passkey], [data-passkey-sign-in]").await,
        "no passkey control is shown without JavaScript"
    );
    let buttons = browser
        .eval(
            "return [...document.querySelectorAll('button')] \
                 .filter(b => b.getBoundingClientRect().height > 0).length",
            vec![],
        )
        .await;
    assert_eq!(buttons, json!(1), "the only button shown is the form's");

    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    browser.goto("/account").await;
    assert!(
        shown(&browser, "#passkeys-heading").await,
        "the account screen has its passkeys section"
    );
    assert!(
        !shown(&browser, "#passkeys [data-passkey], #passkeys button").await,
        "nothing in it that needs JavaScript is shown"
    );
    assert_worded(
        &browser.text("[data-passkey-note]").await,
        "passkeys_need_script",
    );
}

/// `(lang attribute, title, submit text)` of the page shown.
async fn wording(browser: &Browser) -> (String, String, String) {
    let lang = browser.attribute("html", "lang").await.unwrap_or_default();
    let title = browser.client().title().await.unwrap_or_default();
    let submit = browser.text("form button[type=submit]").await;
    (lang, title, submit)
}

#[tokio::test]
async fn accept_language_de_gets_german_screens() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let german = Browser::open(&tools, &site, BrowserOptions::new(Js::On).lang("de")).await;
    let english = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;

    for screen in ["/login", "/login/forgot-password"] {
        german.goto(screen).await;
        english.goto(screen).await;
        let (de_lang, de_title, de_submit) = wording(&german).await;
        let (en_lang, en_title, en_submit) = wording(&english).await;
        assert_eq!(en_lang, "en", "{screen} in English: <html lang>");
        assert_eq!(
            de_lang, "de",
            "{screen} for Accept-Language: de: <html lang>"
        );
        assert_ne!(de_title, en_title, "{screen}: the title is translated");
        assert_ne!(de_submit, en_submit, "{screen}: the button is translated");
    }

    let mut messages = Vec::new();
    for browser in [&english, &german] {
        browser.goto("/login").await;
        browser.fill("email", EMAIL).await;
        browser.fill("password", WRONG_PASSWORD).await;
        browser.mark_page().await;
        browser.submit("/auth/login").await;
        messages.push(browser.wait_for_message().await);
    }
    assert_ne!(
        messages[0], messages[1],
        "the error message is translated: {messages:?}"
    );
    assert_worded(&messages[1], "credentials_do_not_match");
}

#[tokio::test]
async fn lang_query_switches_to_german_and_is_kept() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;

    browser.goto("/login?lang=de").await;
    assert_eq!(
        browser.attribute("html", "lang").await.as_deref(),
        Some("de")
    );
    browser.goto("/login/forgot-password").await;
    assert_eq!(
        browser.attribute("html", "lang").await.as_deref(),
        Some("de"),
        "the chosen language is kept on the next screen"
    );
    browser.goto("/login?lang=en").await;
    assert_eq!(
        browser.attribute("html", "lang").await.as_deref(),
        Some("en")
    );
}

/// `[src attribute, loaded, natural width]` of `img.logo`, or null.
async fn logo(browser: &Browser) -> Value {
    browser
        .eval(
            "const i = document.querySelector('img.logo'); \
             return i ? [i.getAttribute('src'), i.complete, i.naturalWidth] : null",
            vec![],
        )
        .await
}

#[tokio::test]
async fn logo_is_shown_when_the_host_has_one() {
    let options = SiteOptions {
        logo: true,
        ..SiteOptions::default()
    };
    let Some((tools, site)) = setup(options).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    for screen in ["/login", "/login/forgot-password"] {
        browser.goto(screen).await;
        let logo = logo(&browser).await;
        assert_eq!(
            logo[0],
            json!("/assets/ci/logo-full.svg"),
            "{screen} shows img.logo (got {logo}); {}",
            browser.describe().await
        );
        assert!(
            logo[1] == json!(true) && logo[2].as_u64().is_some_and(|w| w > 0),
            "{screen}: the logo loads (GET /assets/ci/logo-full.svg serves the host's file): {logo}"
        );
    }
}

#[tokio::test]
async fn no_logo_without_the_file() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    assert!(!site.public_dir().join("assets/ci/logo-full.svg").exists());
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    for screen in ["/login", "/login/forgot-password"] {
        browser.goto(screen).await;
        assert_eq!(logo(&browser).await, Value::Null, "{screen}: no img.logo");
        assert!(
            !browser.exists("img[src*=\"logo\"]").await,
            "{screen}: no logo image at all"
        );
    }
}

/// Checks the DOM contract of the form posting to `action` on the page shown:
/// `method="post"`, each of `fields` an element whose `id` and `name` are the
/// field name inside that form, and a submit button.
async fn assert_form(browser: &Browser, action: &str, fields: &[&str]) {
    assert_form_with_ids(browser, action, None, fields).await;
}

/// [`assert_form`] for a form of the account screen, whose fields' ids carry
/// the form's `prefix` (`<prefix>-<field>`), each with its error element
/// `#<prefix>-<field>-error` marked `data-error-for="<field>"`.
async fn assert_account_form(browser: &Browser, action: &str, prefix: &str, fields: &[&str]) {
    assert_form_with_ids(browser, action, Some(prefix), fields).await;
}

async fn assert_form_with_ids(
    browser: &Browser,
    action: &str,
    prefix: Option<&str>,
    fields: &[&str],
) {
    let found = browser
        .eval(
            "const form = [...document.querySelectorAll('form')] \
                 .find(f => f.getAttribute('action') === arguments[0]); \
             if (!form) return null; \
             const fields = {}; \
             for (const name of arguments[1]) { \
                 const id = arguments[2] ? arguments[2] + '-' + name : name; \
                 const e = document.getElementById(id); \
                 const error = document.getElementById(id + '-error'); \
                 fields[name] = e ? { \
                     name: e.getAttribute('name'), \
                     inForm: form.contains(e), \
                     errorFor: error && form.contains(error) \
                         ? error.getAttribute('data-error-for') : null, \
                 } : null; \
             } \
             return { \
                 method: (form.getAttribute('method') || '').toLowerCase(), \
                 submit: form.querySelector('button[type=submit]') !== null, \
                 fields }",
            vec![json!(action), json!(fields), json!(prefix)],
        )
        .await;
    let page = browser.path().await;
    assert!(
        !found.is_null(),
        "{page}: a form with action=\"{action}\"; {}",
        browser.describe().await
    );
    assert_eq!(found["method"], "post", "{page}: the form posts");
    assert_eq!(found["submit"], true, "{page}: a button[type=submit]");
    for field in fields {
        let shown = &found["fields"][field];
        match prefix {
            None => assert_eq!(
                (&shown["name"], &shown["inForm"]),
                (&json!(field), &json!(true)),
                "{page}: #{field} with name=\"{field}\" inside the form: {shown}"
            ),
            Some(prefix) => assert_eq!(
                shown,
                &json!({"name": field, "inForm": true, "errorFor": field}),
                "{page}: #{prefix}-{field} with name=\"{field}\" and its error \
                 #{prefix}-{field}-error (data-error-for=\"{field}\") inside the form"
            ),
        }
    }
    let lang = browser.attribute("html", "lang").await.unwrap_or_default();
    assert!(
        lang == "en" || lang == "de",
        "{page}: <html lang> is en or de, got {lang:?}"
    );
}

#[tokio::test]
async fn every_screen_follows_the_dom_contract() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::Off)).await;

    browser.goto("/login").await;
    assert_form(&browser, "/auth/login", &["email", "password", "remember"]).await;
    browser.goto("/login/forgot-password").await;
    assert_form(&browser, "/auth/forgot-password", &["email"]).await;
    browser
        .goto("/login/set-password/not-a-live-token/ada%40example.org")
        .await;
    assert_form(
        &browser,
        "/auth/reset-password",
        &["password", "password_confirmation"],
    )
    .await;

    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/org-setup").await;
    assert_form(
        &browser,
        "/auth/intents/org-setup",
        &[
            "org_name",
            "legal_form",
            "company_size",
            "function",
            "billing_email",
            "marketing_consent",
        ],
    )
    .await;
    browser.goto("/logout").await;
    assert_form(&browser, "/logout", &[]).await;
    browser.goto("/dashboard").await;
    assert_eq!(browser.wait_for_text("#user-email").await, EMAIL);
    assert!(
        browser
            .exists("form[action=\"/logout\"] button[type=submit]")
            .await,
        "the dashboard has a sign-out form"
    );

    browser.click("a[href=\"/account\"]").await;
    browser.wait_for_path("/account").await;
    assert_account_form(
        &browser,
        "/auth/password",
        "change",
        &["current_password", "password", "password_confirmation"],
    )
    .await;
    // Signed in moments ago: the changes sudo mode guards ask nothing.
    assert_account_form(&browser, "/auth/two-factor", "enable", &[]).await;
    assert_account_form(&browser, "/auth/sessions/end-others", "others", &[]).await;
    assert_account_form(&browser, "/auth/tokens", "token", &["name", "expires_days"]).await;
    let key = start_two_factor(&browser).await;
    assert_account_form(&browser, "/auth/two-factor/confirm", "confirm", &["code"]).await;
    confirm_two_factor(&browser, &key).await;
    assert_account_form(&browser, "/auth/two-factor/recovery-codes", "codes", &[]).await;
    assert_account_form(&browser, "/auth/two-factor/disable", "disable", &[]).await;

    browser.sign_out().await;
    browser.sign_in(EMAIL, PASSWORD).await;
    browser.wait_for_path("/login/two-factor").await;
    assert_form(
        &browser,
        "/auth/two-factor-challenge",
        &["code", "recovery_code"],
    )
    .await;
}

/// Saves `<screen>-<lang>-<width>.png` for both widths.
async fn shoot(browser: &Browser, screen: &str, lang: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots");
    for width in [1280, 320] {
        let file = dir.join(format!("{screen}-{lang}-{width}.png"));
        browser.screenshot(width, &file).await;
        eprintln!("saved {}", file.display());
    }
}

/// With `GATEHOUSE_SCREENSHOTS=1`: every screen in English and German, 1280
/// and 320 pixels wide, saved to `docs/screenshots/<screen>-<lang>-<width>.png`.
#[tokio::test]
async fn screenshots_of_every_screen() {
    if std::env::var("GATEHOUSE_SCREENSHOTS").as_deref() != Ok("1") {
        return;
    }
    let Some(tools) = tools() else {
        return;
    };
    // Ada for the sign-in screens; in each language, a user of its own for
    // the account screens, who turns two-factor sign-in on.
    let accounts = [("en", "grace@example.org"), ("de", "emmy@example.org")];
    let site = Site::start(
        &[
            (EMAIL, NAME, PASSWORD),
            (accounts[0].1, "Grace Hopper", PASSWORD),
            (accounts[1].1, "Emmy Noether", PASSWORD),
        ],
        SiteOptions {
            logo: true,
            ..SiteOptions::default()
        },
    )
    .await;

    // One reset link serves both languages (the screen does not consume it).
    let http = reqwest::Client::new();
    let answer = http
        .post(site.url("/auth/forgot-password"))
        .json(&json!({ "email": EMAIL }))
        .send()
        .await
        .expect("POST /auth/forgot-password");
    assert!(answer.status().is_success(), "{}", answer.status());
    let link = site.wait_for_link(EMAIL, "/password/reset/").await;

    for (lang, account) in accounts {
        let options = BrowserOptions::new(Js::On).lang(lang);
        let browser = Browser::open(&tools, &site, options).await;

        browser.goto("/login").await;
        shoot(&browser, "login", lang).await;
        browser.fill("email", EMAIL).await;
        browser.fill("password", WRONG_PASSWORD).await;
        browser.mark_page().await;
        browser.submit("/auth/login").await;
        browser.wait_for_message().await;
        shoot(&browser, "login-error", lang).await;

        browser.goto("/login/forgot-password").await;
        shoot(&browser, "forgot-password", lang).await;

        browser.goto(&link).await;
        browser
            .wait_for_path_where("the set-password screen", |p| {
                p.starts_with("/login/set-password/")
            })
            .await;
        shoot(&browser, "set-password", lang).await;

        browser.sign_in(EMAIL, PASSWORD).await;
        browser.wait_for_path("/login/org-setup").await;
        shoot(&browser, "org-setup", lang).await;

        browser.goto("/logout").await;
        browser.wait_for_path("/logout").await;
        shoot(&browser, "logout", lang).await;
        browser.submit("/logout").await;
        browser.wait_for_path("/").await;

        browser.sign_in(account, PASSWORD).await;
        browser.wait_for_path("/login/org-setup").await;
        // A script's user code to answer on the device screen.
        let asked: Value = http
            .post(site.url("/auth/device/code"))
            .form(&[
                ("client_id", "cli"),
                ("scope", "odata:read:Users odata:read:Organisations"),
            ])
            .send()
            .await
            .expect("POST /auth/device/code")
            .json()
            .await
            .expect("device codes");
        let code = asked["user_code"].as_str().expect("a user code");
        browser.goto(&format!("/device?user_code={code}")).await;
        browser.wait_for_element("[data-device-request]").await;
        shoot(&browser, "device", lang).await;
        browser.goto("/account").await;
        shoot(&browser, "account", lang).await;
        let key = start_two_factor(&browser).await;
        shoot(&browser, "account-two-factor", lang).await;
        // Loaded again, the screen names the enrolment but not its key.
        browser.goto("/account").await;
        browser.wait_for_element("[data-two-factor-state]").await;
        shoot(&browser, "account-two-factor-pending", lang).await;
        confirm_two_factor(&browser, &key).await;
        shoot(&browser, "account-recovery-codes", lang).await;
        make_token(&browser, "Nightly export").await;
        browser.reveal("#token-name").await;
        shoot(&browser, "account-token", lang).await;

        browser.sign_out().await;
        browser.sign_in(account, PASSWORD).await;
        browser.wait_for_path("/login/two-factor").await;
        shoot(&browser, "two-factor", lang).await;
    }

    // The sign-in screen with a provider's button, and the change a
    // breached password asks for (Ada's password is in the corpus there).
    let options = SiteOptions {
        logo: true,
        breached: vec![PASSWORD],
        ..SiteOptions::default()
    };
    if let Some((_provider, provider_site)) =
        site_with_provider(&[(EMAIL, NAME, PASSWORD)], options).await
    {
        for (lang, _) in accounts {
            let options = BrowserOptions::new(Js::On).lang(lang);
            let browser = Browser::open(&tools, &provider_site, options).await;
            browser.goto("/login").await;
            browser.wait_for_element("button[data-oidc=acme]").await;
            shoot(&browser, "login-provider", lang).await;
            browser.sign_in(EMAIL, PASSWORD).await;
            browser.wait_for_path("/login/change-password").await;
            shoot(&browser, "change-password", lang).await;
        }
    }

    // The same screens with passkeys on (a site served as `localhost`): each
    // language's user turns two-factor sign-in on and adds a passkey, made
    // by the browser's virtual authenticator.
    let passkey_site = Site::start(
        &[
            (accounts[0].1, "Grace Hopper", PASSWORD),
            (accounts[1].1, "Emmy Noether", PASSWORD),
        ],
        SiteOptions {
            logo: true,
            localhost: true,
            ..SiteOptions::default()
        },
    )
    .await;
    for ((lang, account), passkey) in accounts.into_iter().zip(["Work laptop", "Arbeitslaptop"]) {
        let options = BrowserOptions::new(Js::On).lang(lang);
        let browser = Browser::open(&tools, &passkey_site, options).await;
        // Else the sign-in screen signs in by autofill once there is a passkey.
        browser.without_passkey_autofill().await;
        browser.goto("/login").await;
        browser.add_virtual_authenticator().await;
        browser.wait_for_element("[data-passkey-sign-in]").await;
        shoot(&browser, "login-passkey", lang).await;

        browser.sign_in_remembered(account, PASSWORD).await;
        browser.wait_for_path("/login/org-setup").await;
        turn_on_two_factor(&browser).await;
        add_passkey(&browser, passkey).await;
        shoot(&browser, "account-passkeys", lang).await;
        // Closed and opened again (signed in by its remember-me cookie),
        // the browser is asked who it is before a change.
        browser.forget_session().await;
        browser.goto("/account").await;
        browser.click("details[data-reauth] > summary").await;
        shoot(&browser, "account-confirm", lang).await;

        browser.sign_out().await;
        browser.sign_in(account, PASSWORD).await;
        browser.wait_for_path("/login/two-factor").await;
        browser.wait_for_element("[data-passkey-second-step]").await;
        shoot(&browser, "two-factor-passkey", lang).await;
    }
}
