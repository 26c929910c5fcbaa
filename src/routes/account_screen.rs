//! The account screen (`GET /account`) and the lists it shows, which their
//! own routes answer as JSON too: the sessions (`GET /auth/sessions`), the
//! passkeys (`GET /auth/passkeys`) and the links to providers
//! (`GET /auth/oidc/links`); and the caller's tokens for scripts
//! (`token_list.rs`). Every route that answers a form post with the
//! screen rendered in place (a new enrolment's key, new recovery codes, a
//! new token for scripts: what must never wait in the session) renders it
//! here. It declares no route.

use rocket::Responder;
use serde_json::{json, Value};

use super::posting::AccountRequest;
use super::sudo::screen_state;
use super::token_list;
use crate::auth::oidc::{Link, Links};
use crate::auth::passkeys::PasskeySummary;
use crate::auth::two_factor::{RecoveryCodes, Status};
use crate::body::Input;
use crate::clock::rfc3339;
use crate::domain::SecretToken;
use crate::error::AuthError;
use crate::events::agent;
use crate::i18n::Language;
use crate::odata::Caller;
use crate::reply::Reply;
use crate::screens::{Page, Screen, View};
use crate::session::{store, AuthUser, Session};
use crate::state::GatehouseState;

/// How many of the latest security events the account screen shows.
const LATEST_EVENTS: i64 = 10;

/// The account screen with `view` (a message, recovery codes, a new
/// enrolment's key or a new token to show once) and what it always shows:
/// the two-factor state (an enrolment waiting for its first code is named,
/// never its key), the tokens for scripts (never a token) and the sets a
/// new one may read, the sessions, the latest security events.
pub async fn render(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    language: Language,
    mut view: View,
) -> Result<Page, AuthError> {
    let mut sessions = sessions(gh, user, session).await?;
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
    let passkeys = passkeys(gh, user).await?;
    let passkeys = passkeys.map_or(Value::Null, |p| with_times(p["value"].clone()));
    let links = with_times(links(gh, user).await?["value"].take());
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
    let mut tokens = with_times(token_list::of_user(gh, user).await?["value"].take());
    for t in tokens.as_array_mut().into_iter().flatten() {
        t["expires"] = when(t, "expires_at");
    }
    let token_sets = token_list::readable_sets(gh, &Caller::user(user.id));
    let mut sessions = sessions["value"].take();
    for s in sessions.as_array_mut().into_iter().flatten() {
        s["seen"] = when(s, "last_activity");
    }
    let reauth = screen_state(gh, user, session, language, passkey, &linked).await?;
    view.args
        .push(("minutes", gh.settings.session.reauth_minutes.to_string()));
    view.extra.extend([
        ("reauth", reauth),
        ("oidc_links", links),
        ("oidc_providers", Value::Array(providers)),
        ("passkey_list", passkeys),
        ("tokens", tokens),
        ("token_sets", json!(token_sets)),
        ("tokens_no_expiry", json!(gh.settings.tokens.allow_no_expiry)),
        ("sessions", sessions),
        ("two_factor", json!(state)),
        ("two_factor_status", status),
        ("events", json!(events)),
    ]);
    gh.screens.render(Screen::Account, language, view)
}

/// The user's sessions as `{"value": [...]}`, most recently active first.
pub async fn sessions(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
) -> Result<Value, AuthError> {
    let current = session.stored_id();
    let sessions = store::of_user(&gh.db, user.id).await?;
    let value: Vec<Value> = sessions
        .iter()
        .map(|s| {
            json!({
                "id": store::handle(&s.id_hash),
                "ip_address": s.ip_address,
                "user_agent": s.user_agent,
                "device": agent::device(s.user_agent.as_deref()),
                "last_activity": rfc3339(s.last_activity),
                "current": current.as_deref() == Some(s.id_hash.as_str()),
                "device_bound": s.device_bound,
            })
        })
        .collect();
    Ok(json!({ "value": value }))
}

/// A passkey as the list shows it.
fn passkey_summary(passkey: &PasskeySummary) -> Value {
    json!({
        "id": passkey.id,
        "name": passkey.name,
        "created_at": rfc3339(passkey.created_at),
        "last_used_at": passkey.last_used_at.map(rfc3339),
    })
}

/// The caller's passkeys as `{"value": [...]}`, oldest first; `None` while
/// passkeys are off.
pub async fn passkeys(gh: &GatehouseState, user: &AuthUser) -> Result<Option<Value>, AuthError> {
    if !gh.passkeys.is_on() {
        return Ok(None);
    }
    let passkeys = gh.passkeys.list(user.id).await?;
    let value: Vec<Value> = passkeys.iter().map(passkey_summary).collect();
    Ok(Some(json!({ "value": value })))
}

/// One link as the list shows it.
fn link_summary(gh: &GatehouseState, link: &Link) -> Value {
    let label = gh
        .oidc
        .get(&link.provider)
        .map_or_else(|| link.provider.clone(), |p| p.settings.label.clone());
    json!({
        "id": link.id,
        "provider": link.provider,
        "label": label,
        "created_at": rfc3339(link.created_at),
        "last_used_at": link.last_used_at.map(rfc3339),
    })
}

/// The caller's links as `{"value": [...]}`, oldest first.
pub async fn links(gh: &GatehouseState, user: &AuthUser) -> Result<Value, AuthError> {
    let links = Links(&gh.db).of_user(user.id).await?;
    let value: Vec<Value> = links.iter().map(|l| link_summary(gh, l)).collect();
    Ok(json!({ "value": value }))
}

/// A JSON or redirect answer, or a page rendered in place (what must never
/// wait in the session: recovery codes).
#[derive(Responder)]
#[allow(clippy::large_enum_variant)]
pub enum Shown {
    /// JSON, or a 303.
    Reply(Reply),
    /// A rendered screen (200).
    Page(Page),
}

/// The recovery codes as a JSON array.
fn codes_json(codes: &RecoveryCodes) -> Value {
    json!(codes.expose())
}

/// New recovery codes: JSON with them, or the account screen showing them,
/// rendered in place so that they are never kept in the session.
pub async fn shown_codes(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    language: Language,
    input: &Input,
    message: &'static str,
    codes: &RecoveryCodes,
) -> Result<Shown, AuthError> {
    if !input.is_form() {
        return Ok(Shown::Reply(Reply::json(
            json!({"message": message, "recovery_codes": codes_json(codes)}),
        )));
    }
    let view = View {
        flash: Some(json!({"message": message})),
        extra: vec![("recovery_codes", codes_json(codes))],
        ..View::default()
    };
    render(gh, user, session, language, view)
        .await
        .map(Shown::Page)
}

/// A new token for scripts: the account screen showing it (and
/// `token_created`), rendered in place so that it is never kept in the
/// session or a cookie. No other answer shows it again.
pub async fn shown_token(
    gh: &GatehouseState,
    caller: &AccountRequest<'_>,
    name: &str,
    token: &SecretToken,
) -> Result<Page, AuthError> {
    let view = View {
        flash: Some(json!({"message": "token_created"})),
        extra: vec![("new_token", json!({"name": name, "token": token.expose()}))],
        ..View::default()
    };
    render(gh, &caller.who, &caller.session, caller.language, view).await
}
