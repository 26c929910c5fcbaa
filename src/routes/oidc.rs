//! Sign-in with an OpenID provider: `GET /auth/oidc/<name>` sends a guest's
//! browser to the provider (a flow kept in the session), and
//! `GET /auth/oidc/<name>/callback` takes the provider's answer back. Whose
//! account a verified identity signs in: a stored link decides; without
//! one, a provider with `create_accounts` makes an account for a verified
//! address in its domains that no account holds; an account with that
//! address is never linked by the address alone. A callback of a link flow
//! (started from the account screen) links the provider's account to the
//! user who started it. Every failure sends the browser to the screen it
//! came from with a message, and nothing is signed in.

use rocket::http::CookieJar;
use rocket::response::Redirect;
use rocket::{get, State};
use serde_json::json;

use super::oidc_flow::{authorization_url, Flow, FlowKind};
use super::pending;
use super::sign_in::{finish, Completing, Proven};
use super::sudo::PROOF_SECONDS;
use crate::auth::oidc::{Callback, Identity, LinkError, Links, OidcError, Provider};
use crate::auth::once;
use crate::auth::users::{self, CreateUserError, UserRecord};
use crate::clock::unix_now;
use crate::domain::Email;
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::reply::Reply;
use crate::screens::Screen;
use crate::session::{reauth, Guest, Session};
use crate::state::GatehouseState;

/// Sends a guest's browser to provider `name` to sign in (`remember=1`
/// asks to be remembered): 303 to its authorization endpoint, or back to
/// the sign-in screen with `oidc_unavailable` while it cannot be reached.
#[get("/auth/oidc/<name>?<remember>")]
pub async fn begin(
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
    name: &str,
    remember: Option<&str>,
) -> Result<Redirect, AuthError> {
    let provider = gh.oidc.get(name).ok_or(AuthError::NotFound)?;
    let remember = matches!(remember, Some("1" | "on" | "true"));
    start(provider, &session, FlowKind::SignIn, remember, Screen::Login).await
}

/// `GET /auth/oidc/<name>` for a signed-in browser: on to `dashboard`.
#[get("/auth/oidc/<_name>?<_remember>", rank = 2)]
pub fn begin_signed_in(
    gh: &State<GatehouseState>,
    _name: &str,
    _remember: Option<&str>,
) -> Redirect {
    gh.to_dashboard()
}

/// Starts a flow of `kind` with `provider` in `session`: the redirect to
/// the provider, or to `from` with `oidc_unavailable`.
async fn start(
    provider: &Provider,
    session: &Session,
    kind: FlowKind,
    remember: bool,
    from: Screen,
) -> Result<Redirect, AuthError> {
    match authorization_url(provider, session, kind, remember).await {
        Some(url) => Ok(Redirect::to(url)),
        None => {
            session.set_flash(json!({"message": "oidc_unavailable"}));
            Ok(Redirect::to(from.path()))
        }
    }
}

/// What the provider's redirect back carries in its query.
#[derive(Debug, rocket::FromForm)]
pub struct Answer<'r> {
    /// The authorization code, on success.
    code: Option<&'r str>,
    /// The flow's `state`.
    state: Option<&'r str>,
    /// RFC 9207's issuer.
    iss: Option<&'r str>,
    /// The provider's error code, on failure.
    error: Option<&'r str>,
}

/// The provider's answer: a sign-in or a link, by the flow `state` names.
#[get("/auth/oidc/<name>/callback?<answer..>")]
pub async fn callback(
    session: Session,
    jar: &CookieJar<'_>,
    from: Origin,
    language: Language,
    gh: &State<GatehouseState>,
    name: &str,
    answer: Answer<'_>,
) -> Result<Reply, AuthError> {
    let Answer {
        code,
        state,
        iss,
        error,
    } = answer;
    let provider = gh.oidc.get(name).ok_or(AuthError::NotFound)?;
    let Some(flow) = Flow::take(&session, name, state.unwrap_or_default()) else {
        return refuse(gh, &session, &from, name, None, "oidc_failed").await;
    };
    // Two callbacks of one flow at once both read it from the session
    // before either is stored: the state is claimed in one statement, so
    // only one of them goes on.
    if !once::claim(&gh.db, "oidc_state", &flow.state, flow.until).await? {
        return refuse(gh, &session, &from, name, None, "oidc_failed").await;
    }
    let linking = match flow.kind {
        FlowKind::Link { user_id } | FlowKind::Confirm { user_id } => Some(user_id),
        FlowKind::SignIn => None,
    };
    let identity = match (code, error) {
        (Some(code), None) => provider
            .finish(Callback { code, iss }, &flow.nonce, &flow.verifier)
            .await
            .map_err(|e| {
                tracing::info!(provider = name, error = %e, "OpenID callback refused");
                e
            }),
        _ => Err(OidcError::Refused(format!(
            "the provider answered {}",
            error.unwrap_or("without a code")
        ))),
    };
    let identity = match identity {
        Ok(identity) => identity,
        Err(OidcError::Unavailable) => {
            return refuse(gh, &session, &from, name, linking, "oidc_unavailable").await
        }
        Err(OidcError::Refused(_)) => {
            return refuse(gh, &session, &from, name, linking, "oidc_failed").await
        }
    };
    match flow.kind {
        FlowKind::Link { user_id } => {
            return link(gh, &session, &from, provider, user_id, &identity).await
        }
        FlowKind::Confirm { user_id } => {
            return confirmed(gh, &session, &from, provider, user_id, &identity).await
        }
        FlowKind::SignIn => {}
    }
    let user = match account(gh, provider, &identity).await? {
        Ok(user) => user,
        Err(code) => return refuse(gh, &session, &from, name, None, code).await,
    };
    if gh.two_factor.is_enabled(user.id).await? {
        let waiting = pending::Pending {
            user_id: user.id,
            remember: flow.remember,
            epoch: user.epoch,
            provider: Some(name.to_owned()),
            breached: false,
        };
        pending::begin(&session, &waiting);
        return Ok(Reply::screen(Screen::TwoFactor.path()));
    }
    let at = Completing::new(jar, &session, &from, language);
    finish(gh, at, Proven::oidc(user, flow.remember, name)).await
}

/// The account `identity` signs in, by the order DESIGN.md gives; else the
/// message saying why none.
async fn account(
    gh: &GatehouseState,
    provider: &Provider,
    identity: &Identity,
) -> Result<Result<UserRecord, &'static str>, AuthError> {
    let links = Links(&gh.db);
    if let Some(link) = links.of_account(identity.issuer(), identity.subject()).await? {
        links.used(link.id).await?;
        return Ok(users::find_by_id(&gh.db, link.user_id)
            .await?
            .ok_or("oidc_no_account"));
    }
    let email = identity
        .email()
        .filter(|_| identity.email_verified())
        .and_then(Email::parse);
    let Some(email) = email else {
        return Ok(Err("oidc_no_account"));
    };
    if users::find_by_email(&gh.db, &email).await?.is_some() {
        return Ok(Err("oidc_account_exists"));
    }
    let settings = &provider.settings;
    if !settings.create_accounts || !settings.speaks_for(email.as_str()) {
        return Ok(Err("oidc_no_account"));
    }
    let name = identity
        .name()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| email.as_str().split('@').next().unwrap_or_default())
        .to_owned();
    let id = match users::create_verified_without_password(&gh.db, &name, &email).await {
        Ok(id) => id,
        Err(CreateUserError::Duplicate) => return Ok(Err("oidc_account_exists")),
        Err(CreateUserError::Database(e)) => return Err(e.into()),
    };
    match links
        .add(id, &provider.name, identity.issuer(), identity.subject())
        .await
    {
        Ok(_) => {}
        // Another callback linked this provider account a moment ago.
        Err(LinkError::Taken) => return Ok(Err("oidc_failed")),
        Err(LinkError::Database(e)) => return Err(e.into()),
    }
    Ok(users::find_by_id(&gh.db, id).await?.ok_or("oidc_no_account"))
}

/// Links `identity` to `user_id`, who started the flow from the account
/// screen and is still signed in here.
async fn link(
    gh: &GatehouseState,
    session: &Session,
    from: &Origin,
    provider: &Provider,
    user_id: i64,
    identity: &Identity,
) -> Result<Reply, AuthError> {
    let name = provider.name.as_str();
    if session.user_id() != Some(user_id) {
        return refuse(gh, session, from, name, Some(user_id), "oidc_failed").await;
    }
    let links = Links(&gh.db);
    if let Some(existing) = links.of_account(identity.issuer(), identity.subject()).await? {
        let code = match existing.user_id == user_id {
            true => "oidc_already_linked",
            false => "oidc_linked_elsewhere",
        };
        return refuse(gh, session, from, name, Some(user_id), code).await;
    }
    match links
        .add(user_id, name, identity.issuer(), identity.subject())
        .await
    {
        Ok(_) => {}
        Err(LinkError::Taken) => {
            return refuse(gh, session, from, name, Some(user_id), "oidc_already_linked").await
        }
        Err(LinkError::Database(e)) => return Err(e.into()),
    }
    let linked = AuthEvent::OidcLinked {
        user_id,
        provider: name.to_owned(),
    };
    gh.events.emit(linked, from).await;
    session.set_flash(json!({"message": "oidc_linked"}));
    Ok(Reply::screen(Screen::Account.path()))
}

/// A fresh proof for `user_id`, who asked for it from this session: the
/// provider account must be theirs and its sign-in at most five minutes
/// old (`auth_time`); then the session's proof stands in for a password.
async fn confirmed(
    gh: &GatehouseState,
    session: &Session,
    from: &Origin,
    provider: &Provider,
    user_id: i64,
    identity: &Identity,
) -> Result<Reply, AuthError> {
    let name = provider.name.as_str();
    let linked = Links(&gh.db)
        .of_account(identity.issuer(), identity.subject())
        .await?
        .is_some_and(|link| link.user_id == user_id);
    let now = unix_now();
    let recent = identity
        .auth_time()
        .filter(|at| (now - PROOF_SECONDS..=now + 60).contains(at));
    let (true, true, Some(_)) = (session.user_id() == Some(user_id), linked, recent) else {
        return refuse(gh, session, from, name, Some(user_id), "oidc_failed").await;
    };
    reauth::proven(session, user_id);
    reauth::proven_afresh(session, user_id);
    session.set_flash(json!({"message": "identity_confirmed"}));
    Ok(Reply::screen(Screen::Account.path()))
}

/// Nothing signed in or linked: the screen the flow began on (the account
/// screen for a link, else the sign-in screen) says `code`, and a failure
/// is recorded.
async fn refuse(
    gh: &GatehouseState,
    session: &Session,
    from: &Origin,
    provider: &str,
    user_id: Option<i64>,
    code: &'static str,
) -> Result<Reply, AuthError> {
    let failed = AuthEvent::OidcFailed {
        provider: provider.to_owned(),
        user_id,
    };
    gh.events.emit(failed, from).await;
    session.set_flash(json!({"message": code}));
    let back = match user_id {
        Some(_) if session.user_id().is_some() => Screen::Account,
        _ => Screen::Login,
    };
    Ok(Reply::screen(back.path()))
}
