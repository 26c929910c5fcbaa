//! `POST /auth/password`: the signed-in user changes their password.

use rocket::{get, post, State};
use secrecy::SecretString;
use serde_json::{json, Value};

use super::confirm::current_password;
use super::posting::{AccountRequest, Keeping};
use super::sessions::listing;
use crate::auth::two_factor::Status;
use crate::auth::oidc::Links;
use crate::auth::users;
use crate::body::{BodyError, Input};
use crate::domain::Password;
use crate::error::AuthError;
use crate::events::AuthEvent;
use crate::i18n::Language;
use crate::mail::mailbox;
use crate::reply::Reply;
use crate::screens::{Page, Posted, Screen, View};
use crate::db::Tx;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// Replaces the password after checking the current one, in one
/// transaction with every session of the user, every remember cookie and
/// every pending second step it ends; `remember_token` rotates, this
/// session goes on under a new id (with a new remember cookie if it had
/// one), and the "password changed" mail goes out.
#[post("/auth/password", data = "<body>")]
pub async fn change_password(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let AccountRequest {
        who: user, session, ..
    } = &caller;
    let answer = async {
        let input = body?;
        let password = input.valid_new_password(&gh.new_passwords, &[&user.email])?;
        current_password(gh, &caller, &input, "current_password").await?;
        set_new_password(&caller, gh, &password).await?;
        if input.is_form() {
            session.set_flash(json!({"message": "password_changed"}));
            return Ok(Reply::screen(Screen::Account.path()));
        }
        Ok(Reply::json(json!({"message": "password_changed"})))
    }
    .await;
    Posted(answer)
}

/// Sets `password` as the caller's new one, in one transaction with every
/// session of theirs, every remember cookie and every pending second step it
/// ends (and the breached mark it clears); this browser stays signed in
/// under an id minted now, with a new remember cookie if it had one; the
/// event is recorded and the "password changed" mail goes out.
pub async fn set_new_password(
    caller: &AccountRequest<'_>,
    gh: &GatehouseState,
    password: &Password,
) -> Result<(), AuthError> {
    let user = &caller.who;
    let hash = gh
        .hasher
        .hash(&SecretString::from(password.expose().to_owned()))
        .await
        .map_err(AuthError::Internal)?;
    let new_password = async |tx: &mut Tx| users::set_password_hash_in(tx, user.id, &hash).await;
    caller
        .change_credentials(gh, Keeping::NoneButThisBrowser, new_password)
        .await?;
    let changed = AuthEvent::PasswordChanged { user_id: user.id };
    gh.events.emit(changed, &caller.from).await;
    send_password_changed(gh, caller.language, user.id, &user.name, &user.email).await;
    Ok(())
}

/// How many of the latest security events the account screen shows.
const LATEST_EVENTS: i64 = 10;

/// `GET /account`: the account screen.
#[get("/account?<notice>")]
pub async fn screen(
    user: AuthUser,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
    notice: Option<&str>,
) -> Result<Page, AuthError> {
    let view = View {
        flash: session.take_flash(),
        notice: super::screens::notice(notice),
        ..View::default()
    };
    render(gh, &user, &session, language, view).await
}

/// The account screen with `view` (a message, recovery codes or a new
/// enrolment's key to show once) and what it always shows: the two-factor
/// state (an enrolment waiting for its first code is named, never its key),
/// the sessions, the latest security events.
pub async fn render(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    language: Language,
    mut view: View,
) -> Result<Page, AuthError> {
    let mut sessions = listing(gh, user, session).await?;
    // The key of a pending enrolment is never read back: only the answer
    // that made it (`view.extra`, from `POST /auth/two-factor`) shows it.
    let (state, status) = match gh.two_factor.status(user.id).await? {
        Status::Pending => ("pending", Value::Null),
        Status::On {
            recovery_codes_left,
            renew_recovery_codes,
        } => (
            "on",
            json!({ "recovery_codes_left": recovery_codes_left,
                    "renew": renew_recovery_codes }),
        ),
        Status::Off => ("off", Value::Null),
    };
    let screens = &gh.screens;
    let when = |value: &Value, key: &str| screens.when(language, value[key].as_str());
    let events = crate::events::latest_events(&gh.db, user.id, LATEST_EVENTS).await?;
    let events: Vec<Value> = events
        .into_iter()
        .map(|e| {
            let label = screens.text(language, &format!("account-event-{}", e.event));
            json!({"at": screens.when(language, Some(&e.occurred_at)), "event": e.event,
                   "label": label, "ip_address": e.ip_address})
        })
        .collect();
    // Each listed credential with its times as the screen shows them.
    let with_times = |mut list: Value| {
        for item in list.as_array_mut().into_iter().flatten() {
            item["added"] = when(item, "created_at");
            item["last_used"] = when(item, "last_used_at");
        }
        list
    };
    let passkeys = super::passkeys::listing(gh, user).await?;
    let passkeys = passkeys.map_or(Value::Null, |p| with_times(p["value"].clone()));
    let links = with_times(super::oidc_links::listing(gh, user).await?["value"].take());
    let passkey = passkeys.as_array().is_some_and(|p| !p.is_empty());
    let linked: Vec<&str> = links
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["provider"].as_str())
        .collect();
    let providers: Vec<Value> = gh
        .oidc
        .all()
        .map(|p| {
            let on = linked.contains(&p.name.as_str());
            json!({"name": p.name, "label": p.settings.label, "linked": on})
        })
        .collect();
    let mut sessions = sessions["value"].take();
    for s in sessions.as_array_mut().into_iter().flatten() {
        s["seen"] = when(s, "last_activity");
    }
    let reauth =
        super::confirm::screen_state(gh, user, session, language, passkey, &linked).await?;
    view.args.push(("minutes", gh.settings.session.reauth_minutes.to_string()));
    view.extra.extend([
        ("reauth", reauth),
        ("oidc_links", links),
        ("oidc_providers", Value::Array(providers)),
        ("passkey_list", passkeys),
        ("sessions", sessions),
        ("two_factor", json!(state)),
        ("two_factor_status", status),
        ("events", json!(events)),
    ]);
    gh.screens.render(Screen::Account, language, view)
}

/// Sends the "password changed" notice, which links to the forgot-password
/// screen in case it was not the user and names every OpenID provider that
/// can also sign the account in (with the account screen, to unlink one); a
/// failure is logged.
pub async fn send_password_changed(
    gh: &GatehouseState,
    language: Language,
    user_id: i64,
    name: &str,
    email: &str,
) {
    let forgot = gh.settings.absolute(Screen::ForgotPassword.path());
    let account = gh.settings.absolute(Screen::Account.path());
    let providers: Vec<(String, String)> = match Links(&gh.db).of_user(user_id).await {
        Ok(links) => links
            .into_iter()
            .map(|link| {
                let label = gh
                    .oidc
                    .get(&link.provider)
                    .map_or(link.provider, |p| p.settings.label.clone());
                (label, account.clone())
            })
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "the providers of a password-changed mail were not read");
            Vec::new()
        }
    };
    let sent = gh
        .composer
        .password_changed(language, name, &forgot, &providers)
        .and_then(|mail| mailbox(name, email).map(|to| gh.mailer.send(to, mail)));
    if let Err(e) = sent {
        tracing::error!(error = %e, "password-changed mail not sent");
    }
}
