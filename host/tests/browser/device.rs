//! The `/device` screen of the device authorization grant in Chromium: a
//! script (plain HTTP) asks for codes, the person follows the link it
//! shows, signs in, comes back to the code and allows or denies it, with
//! JavaScript on and off, in English and German; axe finds nothing.

use serde_json::Value;

use super::harness::{Browser, BrowserOptions, Js, Site, SiteOptions};
use super::{
    assert_worded, axe_script, axe_violations, setup, submit_organisation, EMAIL, PASSWORD,
};

/// The device authorization grant's form-encoded grant type.
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The command line asks `site` for codes, as a script does.
async fn codes(site: &Site) -> Value {
    let answer = reqwest::Client::new()
        .post(site.url("/auth/device/code"))
        .form(&[("client_id", "cli"), ("scope", "odata:read:Users")])
        .send()
        .await
        .expect("device codes");
    assert_eq!(answer.status(), 200);
    answer.json().await.expect("JSON")
}

/// One poll of the token endpoint: its status and JSON.
async fn poll(site: &Site, device_code: &str) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(site.url("/auth/device/token"))
        .form(&[
            ("grant_type", GRANT),
            ("device_code", device_code),
            ("client_id", "cli"),
        ])
        .send()
        .await
        .expect("a poll");
    (answer.status().as_u16(), answer.json().await.expect("JSON"))
}

/// The browser follows the link of `asked`, signs in as Ada (her
/// organisation set up on the way) and is back at the code.
async fn follow_the_link(browser: &Browser, site: &Site, asked: &Value) {
    let complete = asked["verification_uri_complete"].as_str().expect("a link");
    browser
        .goto(
            complete
                .strip_prefix(site.base.as_str())
                .expect("on the site"),
        )
        .await;
    browser.wait_for_path("/login").await;
    browser.fill("email", EMAIL).await;
    browser.fill("password", PASSWORD).await;
    browser.submit("/auth/login").await;
    submit_organisation(browser).await;
    browser.wait_for_path("/device").await;
    browser.wait_for_element("[data-device-request]").await;
}

/// Allowing a code on the screen gives the script its token; denying one
/// gives it `access_denied`.
async fn a_script_code_is_allowed_or_denied_on_the_device_screen(js: Js) {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(js)).await;
    let asked = codes(&site).await;
    follow_the_link(&browser, &site, &asked).await;
    assert_eq!(browser.text("[data-client]").await, "Command line");
    assert!(browser.text("[data-scope]").await.contains("Users"));
    let code = asked["user_code"].as_str().unwrap();
    assert_eq!(browser.text("[data-user-code]").await, code);
    let device_code = asked["device_code"].as_str().unwrap();
    assert_eq!(
        poll(&site, device_code).await.1["error"],
        "authorization_pending"
    );

    browser.mark_page().await;
    browser.submit("/auth/device/approve").await;
    let message = browser.wait_for_message().await;
    assert_worded(&message, "device_approved");
    assert!(message.contains("allowed"), "{message}");
    assert!(!browser.exists("[data-device-request]").await);
    let (status, token) = poll(&site, device_code).await;
    assert_eq!(status, 200, "{token}");
    assert_eq!(token["scope"], "odata:read:Users");

    // Another code, typed by hand on the screen, is denied.
    let asked = codes(&site).await;
    browser.goto("/device").await;
    browser
        .fill("user_code", asked["user_code"].as_str().unwrap())
        .await;
    browser.submit("/device").await;
    browser.wait_for_element("[data-device-request]").await;
    browser.mark_page().await;
    browser.submit("/auth/device/deny").await;
    assert_worded(&browser.wait_for_message().await, "device_denied");
    let (status, refused) = poll(&site, asked["device_code"].as_str().unwrap()).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("access_denied"))
    );
}

with_and_without_js!(a_script_code_is_allowed_or_denied_on_the_device_screen);

/// A wrong code is refused at its field, in German, without JavaScript.
#[tokio::test]
async fn a_wrong_code_is_refused_at_its_field_in_german() {
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::Off).lang("de")).await;
    let asked = codes(&site).await;
    follow_the_link(&browser, &site, &asked).await;
    assert!(browser.text("main").await.contains("Erlauben"));
    browser.goto("/device?user_code=BCDF-GHJK").await;
    let error = browser
        .wait_for_text("#user_code-error, #form-message")
        .await;
    assert_worded(&error, "device_code_unknown");
    assert!(error.contains("Code"), "{error}");
    assert_eq!(
        browser
            .attribute("#user_code", "aria-invalid")
            .await
            .as_deref(),
        Some("true")
    );
}

/// axe finds no violation on the screen: the code to type, a request to
/// answer, and an answer given, in English and German.
#[tokio::test]
async fn axe_finds_no_violation_on_the_device_screen() {
    let Some(axe) = axe_script() else {
        return;
    };
    let Some((tools, site)) = setup(SiteOptions::default()).await else {
        return;
    };
    let browser = Browser::open(&tools, &site, BrowserOptions::new(Js::On)).await;
    let asked = codes(&site).await;
    follow_the_link(&browser, &site, &asked).await;
    let code = asked["user_code"].as_str().unwrap();
    for lang in ["en", "de"] {
        for path in [
            format!("/device?lang={lang}"),
            format!("/device?lang={lang}&user_code={code}"),
            format!("/device?lang={lang}&user_code=BCDF-GHJK"),
        ] {
            browser.goto(&path).await;
            browser.wait_for_element("main").await;
            let found = axe_violations(&browser, &axe).await;
            assert!(found.is_empty(), "{path}: {found:#?}");
        }
    }
    browser.goto(&format!("/device?user_code={code}")).await;
    browser.submit("/auth/device/approve").await;
    browser.wait_for_message().await;
    let found = axe_violations(&browser, &axe).await;
    assert!(found.is_empty(), "answered: {found:#?}");
}
