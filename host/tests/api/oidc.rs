//! Sign-in with an OpenID provider, against a real one the test starts
//! (`oidc-provider`, see `tests/oidc/harness.rs`): whose account a provider
//! account signs in (a link, a new account for a verified address in the
//! provider's domains, never an existing account by its address), linking
//! and unlinking from the account screen, the second step, and every
//! answer that must be refused — a forged or replayed `state`, a callback in
//! another browser, another `iss`, ID tokens unsigned, signed with another
//! key or algorithm, expired or from another issuer — and the provider down.

use gatehouse::db::TextColumn;
use rocket::http::{Header, Status};
use serde_json::{json, Value};

use crate::helpers::{header, json, location, spawn_app_with, TestApp, BASE_URL, PASSWORD};
use crate::mailbox::{request_link, reset, spawn_mail_app_with, CHANGED_SUBJECT};
use crate::oidc_provider::{OidcAccount, OidcClient, Provider, Tamper};

const ADA: &str = "ada@acme.example";
const SECRET: &str = "a client secret of the test's";
const FIRST_PASSWORD: &str = "an amber lighthouse keeps the harbour";

fn account(sub: &str, email: &str, verified: bool) -> OidcAccount {
    OidcAccount {
        sub: sub.into(),
        email: email.into(),
        email_verified: verified,
        name: "Ada Lovelace".into(),
    }
}

/// The provider's accounts: Ada (verified), Bob (not verified), Eve (an
/// address outside the provider's domains).
fn accounts() -> Vec<OidcAccount> {
    vec![
        account("ada-sub", ADA, true),
        account("bob-sub", "bob@acme.example", false),
        account("eve-sub", "eve@elsewhere.example", true),
    ]
}

/// A provider, and the reference host configured with it as `acme`
/// (`create_accounts` as given, for `acme.example`); `None` when the
/// provider cannot run here (outside CI).
async fn with_provider(create_accounts: bool) -> Option<(TestApp, Provider)> {
    let client = OidcClient {
        client_id: "gatehouse".into(),
        client_secret: SECRET.into(),
        redirect_uris: vec![format!("{BASE_URL}/auth/oidc/acme/callback")],
    };
    let provider = Provider::start(&[client], &accounts()).await?;
    let issuer = provider.issuer().to_owned();
    let app = spawn_app_with(|f| configured(f, &issuer, create_accounts)).await;
    Some((app, provider))
}

fn configured(
    figment: rocket::figment::Figment,
    issuer: &str,
    create_accounts: bool,
) -> rocket::figment::Figment {
    figment
        .merge(("auth.oidc.acme.issuer", issuer))
        .merge(("auth.oidc.acme.client_id", "gatehouse"))
        .merge(("auth.oidc.acme.client_secret", SECRET))
        .merge(("auth.oidc.acme.label", "Acme ID"))
        .merge(("auth.oidc.acme.create_accounts", create_accounts))
        .merge(("auth.oidc.acme.email_domains", vec!["acme.example"]))
}

/// Where `GET path` sends a browser (its `Location`), with its status.
async fn visit(app: &TestApp, path: &str) -> (Status, String) {
    let response = app.get_html(path).await;
    (
        response.status(),
        header(&response, "Location").unwrap_or_default(),
    )
}

/// Starts a sign-in with `acme` and answers the provider's redirect back
/// (an absolute URL of ours) after signing in there as `login`.
async fn at_provider(app: &TestApp, provider: &Provider, path: &str, login: &str) -> String {
    let (status, authorize) = visit(app, path).await;
    assert_eq!(
        status,
        Status::SeeOther,
        "{path} sends the browser to the provider"
    );
    assert!(authorize.starts_with(provider.issuer()), "{authorize}");
    provider.authorize(&authorize, login).await
}

/// Posts `body` to `path` (a route answering `{"redirect": URL}`), signs
/// in at the provider there as `login` (it asks again, whatever session it
/// has) and answers the provider's redirect back.
async fn posted_to_provider(
    app: &TestApp,
    provider: &Provider,
    path: &str,
    body: Value,
    login: &str,
) -> String {
    let started = app.post_json(path, body).await;
    assert_eq!(started.status(), Status::Ok, "{path}");
    let authorize = json(started).await["redirect"]
        .as_str()
        .expect("a URL")
        .to_owned();
    provider.authorize(&authorize, login).await
}

/// Follows the provider's redirect back into our app: the status and where
/// the app sends the browser next.
async fn back(app: &TestApp, callback: &str) -> (Status, String) {
    let path = callback.strip_prefix(BASE_URL).expect("a callback of ours");
    visit(app, path).await
}

/// The sign-in screen's text (where a failed flow's message shows).
async fn login_screen(app: &TestApp) -> String {
    app.get_html("/login")
        .await
        .into_string()
        .await
        .unwrap_or_default()
}

async fn links(app: &TestApp) -> Value {
    json(app.get_json("/auth/oidc/links").await).await
}

#[rocket::async_test]
async fn a_first_sign_in_makes_an_account_that_the_link_signs_in_again() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let screen = app.get_html("/login").await;
    let csp = header(&screen, "Content-Security-Policy").expect("the screen's policy");
    let form_action = format!("form-action 'self' {};", provider.issuer());
    assert!(
        csp.contains(&form_action),
        "a form may lead to the provider: {csp}"
    );
    drop(screen);
    let page = login_screen(&app).await;
    assert!(page.contains("formaction=\"/auth/oidc/acme\""), "{page}");
    assert!(page.contains("Acme ID"));

    let callback = at_provider(&app, &provider, "/auth/oidc/acme?remember=1", "ada-sub").await;
    assert!(callback.contains("iss="), "RFC 9207: {callback}");
    let (status, next) = back(&app, &callback).await;
    assert_eq!(status, Status::SeeOther);
    assert!(
        next.ends_with("/login/org-setup"),
        "the intent loop follows: {next}"
    );
    assert!(app.is_signed_in().await);
    assert!(
        app.client.cookies().get("gatehouse_remember").is_some(),
        "remembered"
    );
    let ada = app.user_id(ADA).await;
    let events = app.event_names(ada).await;
    assert_eq!(
        events.first().map(String::as_str),
        Some("login"),
        "{events:?}"
    );
    let listed = links(&app).await;
    assert_eq!(listed["value"][0]["provider"], "acme");
    assert_eq!(listed["value"][0]["label"], "Acme ID");

    // The account has no password: a password sign-in fails as a wrong one.
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(app.login(ADA, PASSWORD).await, Status::UnprocessableEntity);
    assert_eq!(app.login(ADA, "!").await, Status::UnprocessableEntity);

    // The link signs the same account in again; no second account is made.
    let users = app.count("users").await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let (status, _) = back(&app, &callback).await;
    assert_eq!(status, Status::SeeOther);
    assert!(app.is_signed_in().await);
    assert_eq!(app.count("users").await, users);
}

#[rocket::async_test]
async fn no_account_is_made_for_an_unverified_or_foreign_address_or_without_create_accounts() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let users = app.count("users").await;
    for login in ["bob-sub", "eve-sub"] {
        let callback = at_provider(&app, &provider, "/auth/oidc/acme", login).await;
        let (status, next) = back(&app, &callback).await;
        assert_eq!(
            (status, next.as_str()),
            (Status::SeeOther, "/login"),
            "{login}"
        );
        assert!(
            login_screen(&app).await.contains("No account is linked"),
            "{login}"
        );
        assert!(!app.is_signed_in().await);
    }
    assert_eq!(app.count("users").await, users, "no account made");

    let Some((app, provider)) = with_provider(false).await else {
        return;
    };
    let users = app.count("users").await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert_eq!(app.count("users").await, users, "create_accounts is off");
}

#[rocket::async_test]
async fn an_existing_account_is_never_linked_by_its_address_but_from_the_account_screen() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let ada = app.create_user(ADA, PASSWORD).await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert!(login_screen(&app).await.contains("already exists"));
    assert!(!app.is_signed_in().await);
    assert_eq!(app.count("gatehouse_oidc_links").await, 0);

    // Signed in with her password, Ada links the provider.
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let wrong = app
        .post_json(
            "/auth/oidc/acme/link",
            json!({"password": "not hers at all"}),
        )
        .await;
    assert_eq!(wrong.status(), Status::UnprocessableEntity);
    drop(wrong);
    let link = json!({"password": PASSWORD});
    let callback =
        posted_to_provider(&app, &provider, "/auth/oidc/acme/link", link, "ada-sub").await;
    let (status, next) = back(&app, &callback).await;
    assert_eq!((status, next.as_str()), (Status::SeeOther, "/account"));
    assert!(app
        .event_names(ada)
        .await
        .contains(&"oidc_linked".to_owned()));
    let id = links(&app).await["value"][0]["id"]
        .as_i64()
        .expect("a link");
    let again = app
        .post_json("/auth/oidc/acme/link", json!({"password": PASSWORD}))
        .await;
    assert_eq!(json(again).await, json!({"message": "oidc_already_linked"}));

    // Outside sudo mode's window, the linked provider is one way to
    // confirm who she is, beside her password.
    app.set_session_data(ada, "reauth", json!({"user": ada, "at": 0}))
        .await;
    let refused = app.post_json("/auth/sessions/end-others", json!({})).await;
    assert_eq!(
        json(refused).await,
        json!({"message": "reauth_required", "methods": ["password", "oidc:acme"]})
    );

    // The link signs her in.
    assert_eq!(app.logout().await, Status::SeeOther);
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    assert!(app.is_signed_in().await);

    // Another user cannot link the same provider account.
    assert_eq!(app.logout().await, Status::SeeOther);
    app.create_user("grace@acme.example", PASSWORD).await;
    assert_eq!(app.login("grace@acme.example", PASSWORD).await, Status::Ok);
    let callback = posted_to_provider(
        &app,
        &provider,
        "/auth/oidc/acme/link",
        json!({"password": PASSWORD}),
        "ada-sub",
    )
    .await;
    assert_eq!(back(&app, &callback).await.1, "/account");
    assert_eq!(
        links(&app).await["value"],
        json!([]),
        "oidc_linked_elsewhere"
    );

    // Ada unlinks it; someone else's link is not found.
    let not_hers = app
        .post_json(
            &format!("/auth/oidc/links/{id}/delete"),
            json!({"password": PASSWORD}),
        )
        .await;
    assert_eq!(not_hers.status(), Status::NotFound);
    drop(not_hers);
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let removed = app
        .post_json(
            &format!("/auth/oidc/links/{id}/delete"),
            json!({"password": PASSWORD}),
        )
        .await;
    assert_eq!(removed.status(), Status::NoContent);
    drop(removed);
    assert_eq!(links(&app).await["value"], json!([]));
    assert!(app
        .event_names(ada)
        .await
        .contains(&"oidc_unlinked".to_owned()));
}

#[rocket::async_test]
async fn the_last_way_in_is_not_unlinked() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    let id = links(&app).await["value"][0]["id"]
        .as_i64()
        .expect("a link");
    // Proven afresh at the provider, the account still keeps its only way in.
    let callback = posted_to_provider(
        &app,
        &provider,
        "/auth/oidc/acme/confirm",
        json!({}),
        "ada-sub",
    )
    .await;
    assert_eq!(back(&app, &callback).await.1, "/account");
    let removed = app
        .post_json(&format!("/auth/oidc/links/{id}/delete"), json!({}))
        .await;
    assert_eq!(removed.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(removed).await,
        json!({"message": "last_sign_in_method"})
    );
    assert_eq!(app.count("gatehouse_oidc_links").await, 1);
}

#[rocket::async_test]
async fn a_forged_replayed_or_foreign_callback_signs_nobody_in() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    // Forged state.
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let forged = callback.replace("state=", "state=forged");
    assert_eq!(back(&app, &forged).await.1, "/login");
    assert!(login_screen(&app).await.contains("did not work"));
    // The flow is gone with the forged try: the real answer is refused too.
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert!(!app.is_signed_in().await);

    // Another iss in the answer.
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let other_iss = callback.replace("iss=", "iss=http%3A%2F%2F127.0.0.1%3A1%2Fother&was=");
    assert_eq!(back(&app, &other_iss).await.1, "/login");
    assert!(!app.is_signed_in().await);

    // A browser that did not start the flow.
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let issuer = provider.issuer().to_owned();
    let elsewhere = app
        .another_instance_with(|f| configured(f, &issuer, true))
        .await;
    let path = callback.strip_prefix(BASE_URL).expect("ours").to_owned();
    let response = elsewhere
        .get(path)
        .header(Header::new("Accept", "text/html"))
        .dispatch()
        .await;
    assert_eq!(location(&response), "/login");
    drop(response);

    // Replayed: the first use signs in, the second finds no flow.
    let (_, next) = back(&app, &callback).await;
    assert_ne!(next, "/login", "the browser that started it signs in");
    assert_eq!(app.logout().await, Status::SeeOther);
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert!(!app.is_signed_in().await);
}

#[rocket::async_test]
async fn an_id_token_that_does_not_verify_signs_nobody_in() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let users = app.count("users").await;
    for tamper in [
        Tamper::AlgNone,
        Tamper::WrongKey,
        Tamper::Hs256,
        Tamper::Expired,
        Tamper::OtherIssuer,
        Tamper::OtherAudience,
        Tamper::TwoAudiences,
        Tamper::WrongNonce,
        Tamper::UnknownKid,
    ] {
        provider.tamper(tamper).await;
        let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
        assert_eq!(back(&app, &callback).await.1, "/login", "{tamper:?}");
        assert!(!app.is_signed_in().await, "{tamper:?}");
    }
    assert_eq!(app.count("users").await, users, "no account made");
}

#[rocket::async_test]
async fn a_new_signing_key_is_fetched_once_and_signs_in() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    // Discovery fetched the keys once.
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    assert!(app.is_signed_in().await);
    assert_eq!(app.logout().await, Status::SeeOther);
    let fetched = provider.requests("/jwks").await;
    provider.tamper(Tamper::Rotate).await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    assert!(
        app.is_signed_in().await,
        "signed with the provider's new key"
    );
    assert_eq!(provider.requests("/jwks").await, fetched + 1);
}

#[rocket::async_test]
async fn a_two_factor_account_is_still_asked_for_its_code() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    app.create_user(ADA, PASSWORD).await;
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let enrolment = app
        .post_json("/auth/two-factor", json!({"password": PASSWORD}))
        .await;
    let secret = json(enrolment).await["secret"]
        .as_str()
        .expect("a secret")
        .to_owned();
    let code = crate::two_factor::code(&secret, crate::two_factor::now());
    let confirmed = app
        .post_json("/auth/two-factor/confirm", json!({"code": code}))
        .await;
    assert_eq!(confirmed.status(), Status::Ok);
    let recovery = json(confirmed).await["recovery_codes"][0]
        .as_str()
        .expect("a recovery code")
        .to_owned();
    let callback = posted_to_provider(
        &app,
        &provider,
        "/auth/oidc/acme/link",
        json!({"password": PASSWORD}),
        "ada-sub",
    )
    .await;
    assert_eq!(back(&app, &callback).await.1, "/account");
    assert_eq!(app.logout().await, Status::SeeOther);

    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let (status, next) = back(&app, &callback).await;
    assert_eq!(
        (status, next.as_str()),
        (Status::SeeOther, "/login/two-factor")
    );
    assert!(!app.is_signed_in().await, "not before the code");

    // The second step ends the provider's sign-in, recorded as such.
    let answered = app
        .post_json(
            "/auth/two-factor-challenge",
            json!({"recovery_code": recovery}),
        )
        .await;
    assert_eq!(answered.status(), Status::Ok);
    drop(answered);
    assert!(app.is_signed_in().await);
    let row = app
        .db
        .fetch_optional(app.db.query(
            "SELECT detail FROM gatehouse_security_events WHERE event = 'login' ORDER BY id DESC",
        ))
        .await
        .expect("the events")
        .expect("a login");
    assert_eq!(
        row.text("detail").expect("detail").as_deref(),
        Some("oidc acme")
    );
}

#[rocket::async_test]
async fn a_provider_that_is_down_is_said_so_and_signs_nobody_in() {
    let Some((app, mut provider)) = with_provider(true).await else {
        return;
    };
    let (status, _) = visit(&app, "/auth/oidc/acme").await;
    assert_eq!(status, Status::SeeOther, "discovered");
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    provider.stop();
    assert_eq!(
        back(&app, &callback).await.1,
        "/login",
        "the code cannot be exchanged"
    );
    assert!(!app.is_signed_in().await);

    // A provider never reached: its button shows, its route says so.
    let never = spawn_app_with(|f| configured(f, "http://127.0.0.1:9", true)).await;
    assert!(login_screen(&never).await.contains("Acme ID"));
    let (status, next) = visit(&never, "/auth/oidc/acme").await;
    assert_eq!((status, next.as_str()), (Status::SeeOther, "/login"));
    assert!(login_screen(&never).await.contains("cannot be reached"));
    let unknown = visit(&never, "/auth/oidc/nobody").await;
    assert_eq!(unknown.0, Status::NotFound);
}

#[rocket::async_test]
async fn the_account_screen_links_and_unlinks_by_form_posts() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    app.create_user(ADA, PASSWORD).await;
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
    let page = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(page.contains(r#"action="/auth/oidc/acme/link""#), "{page}");

    let wrong = app
        .post_form("/auth/oidc/acme/link", "password=not+hers")
        .await;
    assert_eq!(
        (wrong.status(), location(&wrong)),
        (Status::SeeOther, "/account".to_owned())
    );
    drop(wrong);
    let started = app
        .post_form(
            "/auth/oidc/acme/link",
            &format!("password={}", PASSWORD.replace(' ', "+")),
        )
        .await;
    assert_eq!(started.status(), Status::SeeOther);
    let authorize = location(&started);
    drop(started);
    assert!(authorize.starts_with(provider.issuer()), "{authorize}");
    let callback = provider.authorize(&authorize, "ada-sub").await;
    assert_eq!(back(&app, &callback).await.1, "/account");
    let page = app
        .get_html("/account")
        .await
        .into_string()
        .await
        .unwrap_or_default();
    assert!(page.contains("is linked"), "the message shows: {page}");
    let id = links(&app).await["value"][0]["id"]
        .as_i64()
        .expect("a link");
    let unlink = format!("/auth/oidc/links/{id}/delete");
    assert!(page.contains(&format!(r#"action="{unlink}""#)));
    assert!(
        !page.contains(r#"action="/auth/oidc/acme/link""#),
        "linked: no link form"
    );

    let removed = app
        .post_form(&unlink, &format!("password={}", PASSWORD.replace(' ', "+")))
        .await;
    assert_eq!(
        (removed.status(), location(&removed)),
        (Status::SeeOther, "/account".to_owned())
    );
    drop(removed);
    assert_eq!(links(&app).await["value"], json!([]));
}

#[rocket::async_test]
async fn a_reset_by_mail_sets_a_password_and_its_mail_names_the_linked_providers() {
    let client = OidcClient {
        client_id: "gatehouse".into(),
        client_secret: SECRET.into(),
        redirect_uris: vec![format!("{BASE_URL}/auth/oidc/acme/callback")],
    };
    let Some(provider) = Provider::start(&[client], &accounts()).await else {
        return;
    };
    let issuer = provider.issuer().to_owned();
    let (app, mailbox) = spawn_mail_app_with(|f| configured(f, &issuer, true)).await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    assert!(app.is_signed_in().await);
    assert_eq!(app.logout().await, Status::SeeOther);

    // Mailbox control is account control: the reset sets a first password.
    let link = request_link(&app, &mailbox, ADA).await;
    let done = reset(&app.client, &link.token, &link.email, PASSWORD).await;
    assert_eq!(done.status(), Status::Ok);
    drop(done);
    let mail = mailbox.wait_for_mail(ADA, CHANGED_SUBJECT).await;
    assert!(mail.text.contains("Acme ID"), "{}", mail.text);
    assert!(
        mail.text.contains(&format!("{BASE_URL}/account")),
        "{}",
        mail.text
    );
    assert!(mail.html.contains("Acme ID"), "{}", mail.html);
    assert_eq!(app.login(ADA, PASSWORD).await, Status::Ok);
}

#[rocket::async_test]
async fn an_account_without_a_password_proves_itself_afresh_at_its_provider() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    let ada = app.user_id(ADA).await;

    // The provider's sign-in opened sudo mode's window: nothing is asked.
    let within = app.post_json("/auth/sessions/end-others", json!({})).await;
    assert_eq!(within.status(), Status::Ok, "a fresh sign-in is a proof");
    drop(within);
    // But a first password needs a proof made for it: a plain sign-in's
    // window (which a copied session cookie shares) is not one.
    let first = json!({"password": FIRST_PASSWORD, "password_confirmation": FIRST_PASSWORD});
    let refused = app.post_json("/auth/password", first).await;
    assert_eq!(
        json(refused).await,
        json!({"message": "reauth_required", "methods": ["oidc:acme"]})
    );

    // The window closes; no password to ask for: the ways to prove it are
    // named.
    app.set_session_data(ada, "reauth", json!({"user": ada, "at": 0}))
        .await;
    let refused = app.post_json("/auth/two-factor", json!({})).await;
    assert_eq!(refused.status(), Status::UnprocessableEntity);
    assert_eq!(
        json(refused).await,
        json!({"message": "reauth_required", "methods": ["oidc:acme"]})
    );
    // A password in the body is checked, and wrong, as everywhere.
    let wrong = app
        .post_json("/auth/two-factor", json!({"password": "a guess"}))
        .await;
    assert_eq!(
        json(wrong).await["errors"]["password"][0],
        "current_password"
    );
    assert!(app.event_names(ada).await.contains(&"failed".to_owned()));
    // A first password is a change like these: the body's `password` is the
    // new one, never taken for a confirmation.
    let first = json!({"password": FIRST_PASSWORD, "password_confirmation": FIRST_PASSWORD});
    let refused = app.post_json("/auth/password", first.clone()).await;
    assert_eq!(
        json(refused).await,
        json!({"message": "reauth_required", "methods": ["oidc:acme"]})
    );

    // A sign-in at the provider made now (it asks again, whatever session
    // it has) opens the window again.
    let browser = provider.user_agent();
    let started = app.post_json("/auth/oidc/acme/confirm", json!({})).await;
    assert_eq!(started.status(), Status::Ok);
    let authorize = json(started).await["redirect"]
        .as_str()
        .expect("a URL")
        .to_owned();
    assert!(authorize.contains("prompt=login"), "{authorize}");
    let callback = browser.authorize(&authorize, "ada-sub").await;
    assert_eq!(browser.logins(), 1, "the provider asked again");
    assert_eq!(back(&app, &callback).await.1, "/account");
    let enrolment = app.post_json("/auth/two-factor", json!({})).await;
    assert_eq!(
        enrolment.status(),
        Status::Ok,
        "proven: no password asked for"
    );
    drop(enrolment);

    // Another user's provider account is no proof for Ada.
    let other = app.post_json("/auth/oidc/nobody/confirm", json!({})).await;
    assert_eq!(other.status(), Status::NotFound);

    // Inside the window the account sets its first password, which then
    // signs it in and is asked for from then on.
    let set = app.post_json("/auth/password", first).await;
    assert_eq!(json(set).await, json!({"message": "password_changed"}));
    app.set_session_data(ada, "reauth", json!({"user": ada, "at": 0}))
        .await;
    let refused = app.post_json("/auth/two-factor", json!({})).await;
    assert_eq!(
        json(refused).await["methods"],
        json!(["password", "oidc:acme"])
    );
}

#[rocket::async_test]
async fn a_provider_giving_its_claims_at_user_info_makes_an_account_and_one_that_gives_them_in_the_id_token_too(
) {
    // oidc-provider's default: the ID token carries no address or name;
    // UserInfo gives them.
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let (status, next) = back(&app, &callback).await;
    assert_eq!(status, Status::SeeOther);
    assert!(next.ends_with("/login/org-setup"), "{next}");
    assert!(app.is_signed_in().await);
    assert_eq!(user_name(&app, ADA).await, "Ada Lovelace");
    assert_eq!(provider.requests("/me").await, 1, "UserInfo was asked");

    // A provider that puts the claims into the ID token is not asked.
    let Some(fat) = Provider::start_with_id_token_claims(&[client()], &accounts()).await else {
        return;
    };
    let issuer = fat.issuer().to_owned();
    let app = spawn_app_with(|f| configured(f, &issuer, true)).await;
    let callback = at_provider(&app, &fat, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    assert!(app.is_signed_in().await);
    assert_eq!(user_name(&app, ADA).await, "Ada Lovelace");
    assert_eq!(fat.requests("/me").await, 0, "UserInfo was not needed");
}

#[rocket::async_test]
async fn user_info_about_another_subject_signs_nobody_in() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let users = app.count("users").await;
    provider.tamper(Tamper::UserInfoOtherSub).await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert!(login_screen(&app).await.contains("did not work"));
    assert!(!app.is_signed_in().await);
    assert_eq!(app.count("users").await, users, "no account made");
}

/// The test's client of the provider.
fn client() -> OidcClient {
    OidcClient {
        client_id: "gatehouse".into(),
        client_secret: SECRET.into(),
        redirect_uris: vec![format!("{BASE_URL}/auth/oidc/acme/callback")],
    }
}

/// `users.name` of the account with `email`.
async fn user_name(app: &TestApp, email: &str) -> String {
    let id = app.user_id(email).await;
    let sql = app
        .db
        .dialect()
        .placeholders("SELECT name FROM users WHERE id = $1");
    let row = app
        .db
        .fetch_optional(sqlx::query(&sql).bind(id))
        .await
        .expect("the query")
        .expect("the user");
    row.text("name").expect("name").expect("a name")
}

#[rocket::async_test]
async fn a_long_name_is_cut_and_an_address_that_folds_into_ascii_makes_no_account() {
    let long = OidcAccount {
        sub: "long-sub".into(),
        email: "long@acme.example".into(),
        email_verified: true,
        name: "N".repeat(5_000),
    };
    // The Kelvin sign, which Unicode folds into an ASCII k.
    let kelvin = account("kelvin-sub", "\u{212A}ate@acme.example", true);
    let Some(provider) = Provider::start(&[client()], &[long, kelvin]).await else {
        return;
    };
    let issuer = provider.issuer().to_owned();
    let app = spawn_app_with(|f| configured(f, &issuer, true)).await;
    let users = app.count("users").await;
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "long-sub").await;
    let (status, next) = back(&app, &callback).await;
    assert_eq!(status, Status::SeeOther);
    assert_ne!(next, "/login", "signed in");
    assert_eq!(user_name(&app, "long@acme.example").await, "N".repeat(255));
    assert_eq!(app.logout().await, Status::SeeOther);

    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "kelvin-sub").await;
    assert_eq!(back(&app, &callback).await.1, "/login");
    assert!(login_screen(&app).await.contains("No account is linked"));
    assert!(!app.is_signed_in().await);
    assert_eq!(app.count("users").await, users + 1, "no kate@acme.example");
}

#[rocket::async_test]
async fn two_callbacks_of_one_flow_at_once_exchange_its_code_once() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let path = callback.strip_prefix(BASE_URL).expect("ours").to_owned();
    let exchanged = provider.requests("/token").await;
    let answer = |path: String| {
        app.client
            .get(path)
            .header(Header::new("Accept", "text/html"))
            .dispatch()
    };
    let (first, second) = futures::join!(answer(path.clone()), answer(path));
    let mut places = vec![location(&first), location(&second)];
    places.sort();
    drop((first, second));
    assert_eq!(places[0], "/login", "one is refused: {places:?}");
    assert_ne!(places[1], "/login", "one signs in: {places:?}");
    assert_eq!(
        provider.requests("/token").await,
        exchanged + 1,
        "the refused one never reached the provider"
    );
}

/// Two providers (`acme` and `beta`, each its own oidc-provider) with the
/// same person, and the reference host configured with both.
async fn with_two_providers() -> Option<(TestApp, Provider, Provider)> {
    let beta_client = OidcClient {
        redirect_uris: vec![format!("{BASE_URL}/auth/oidc/beta/callback")],
        ..client()
    };
    let acme = Provider::start(&[client()], &accounts()).await?;
    let beta = Provider::start(&[beta_client], &accounts()).await?;
    let (acme_issuer, beta_issuer) = (acme.issuer().to_owned(), beta.issuer().to_owned());
    let app = spawn_app_with(|f| {
        configured(f, &acme_issuer, true)
            .merge(("auth.oidc.beta.issuer", beta_issuer.as_str()))
            .merge(("auth.oidc.beta.client_id", "gatehouse"))
            .merge(("auth.oidc.beta.client_secret", SECRET))
            .merge(("auth.oidc.beta.label", "Beta ID"))
    })
    .await;
    Some((app, acme, beta))
}

#[rocket::async_test]
async fn unlinking_the_last_two_providers_at_once_leaves_one() {
    let Some((app, acme, beta)) = with_two_providers().await else {
        return;
    };
    // An account made by acme, without a password, links beta too.
    let callback = at_provider(&app, &acme, "/auth/oidc/acme", "ada-sub").await;
    back(&app, &callback).await;
    let linked = app.post_json("/auth/oidc/beta/link", json!({})).await;
    assert_eq!(linked.status(), Status::Ok, "inside the sign-in's window");
    let authorize = json(linked).await["redirect"]
        .as_str()
        .expect("a URL")
        .to_owned();
    let callback = beta.authorize(&authorize, "ada-sub").await;
    let path = callback.strip_prefix(BASE_URL).expect("ours").to_owned();
    assert_eq!(visit(&app, &path).await.1, "/account");
    let ids: Vec<i64> = links(&app).await["value"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| l["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(ids.len(), 2);

    let unlink = |id: i64| {
        app.client
            .post(format!("/auth/oidc/links/{id}/delete"))
            .header(rocket::http::ContentType::JSON)
            .body("{}")
            .dispatch()
    };
    let (first, second) = futures::join!(unlink(ids[0]), unlink(ids[1]));
    let mut statuses = vec![first.status().code, second.status().code];
    statuses.sort();
    drop((first, second));
    assert_eq!(statuses, vec![204, 422], "one way in is kept");
    assert_eq!(app.count("gatehouse_oidc_links").await, 1);
}

#[rocket::async_test]
async fn a_providers_sign_in_offers_a_device_binding() {
    let Some((app, provider)) = with_provider(true).await else {
        return;
    };
    let callback = at_provider(&app, &provider, "/auth/oidc/acme", "ada-sub").await;
    let path = callback.strip_prefix(BASE_URL).expect("a callback of ours");
    let response = app.get_html(path).await;
    assert_eq!(response.status(), Status::SeeOther);
    let (register, challenge) = crate::dbsc_client::offered(&response).expect("a binding offered");
    drop(response);
    let mut device = crate::dbsc_client::Device::new(crate::dbsc_client::DeviceKey::rs256());
    let (status, body) = device.register(&app.client, &register, &challenge).await;
    assert_eq!(status, Status::Ok, "{body}");
}
