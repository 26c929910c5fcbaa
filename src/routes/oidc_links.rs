//! The signed-in user's links to OpenID providers: `GET /auth/oidc/links`,
//! `POST /auth/oidc/<name>/link` (the provider's sign-in, whose callback
//! links its account) and `POST /auth/oidc/links/<id>/delete`. Each change
//! asks for the password again; the last way to sign in is never removed.

use rocket::http::Status;
use rocket::response::Redirect;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::account_screen;
use super::oidc_flow::{authorization_url, FlowKind};
use super::posting::AccountRequest;
use super::sudo::Confirmed;
use crate::auth::oidc::{Links, Provider};
use crate::auth::users;
use crate::body::{BodyError, Input};
use crate::db::Tx;
use crate::error::AuthError;
use crate::events::AuthEvent;
use crate::reply::Reply;
use crate::screens::{Posted, Screen};
use crate::session::AuthUser;
use crate::state::GatehouseState;

/// `GET /auth/oidc/links`.
#[get("/auth/oidc/links")]
pub async fn list(user: AuthUser, gh: &State<GatehouseState>) -> Result<Json<Value>, AuthError> {
    Ok(Json(account_screen::links(gh, &user).await?))
}

/// `POST /auth/oidc/<name>/link` `{password}`: the provider's sign-in,
/// whose callback links its account to the caller: 200 `{"redirect": URL}`
/// (a form post: 303 there); 422 `oidc_already_linked` when the caller has
/// a link to this provider; 503 `oidc_unavailable` while it cannot be
/// reached.
#[post("/auth/oidc/<name>/link", data = "<body>")]
pub async fn link(
    caller: AccountRequest<'_>,
    name: &str,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Reply> {
    let answer = async {
        let provider = gh.oidc.get(name).ok_or(AuthError::NotFound)?;
        let input = body?.into_input();
        let user = &caller.who;
        let links = Links(&gh.db).of_user(user.id).await?;
        if links.iter().any(|l| l.provider == name) {
            return Err(AuthError::Refused("oidc_already_linked"));
        }
        let kind = FlowKind::Link { user_id: user.id };
        to_provider(provider, &caller, kind, &input).await
    }
    .await;
    Posted(answer)
}

/// Starts a flow of `kind` for the caller and sends them to `provider`:
/// `{"redirect": URL}` to a script, a 303 there to a form; 503
/// `oidc_unavailable` while it cannot be reached.
async fn to_provider(
    provider: &Provider,
    caller: &AccountRequest<'_>,
    kind: FlowKind,
    input: &Input,
) -> Result<Reply, AuthError> {
    let url = authorization_url(provider, &caller.session, kind, false)
        .await
        .ok_or(AuthError::Refused("oidc_unavailable"))?;
    if input.is_form() {
        return Ok(Reply::screen(url));
    }
    Ok(Reply::json(json!({ "redirect": url })))
}

/// `POST /auth/oidc/<name>/confirm`: a fresh proof of who the caller is,
/// for an account without a password: the linked provider `name` signs
/// them in again now (`prompt=login`, `max_age=0`), and for five minutes
/// that proof stands in for the password: 200 `{"redirect": URL}` (a form
/// post: 303 there); 404 unless the caller has a link to `name`.
#[post("/auth/oidc/<name>/confirm", data = "<body>")]
pub async fn confirm(
    caller: AccountRequest<'_>,
    name: &str,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let answer = async {
        let provider = gh.oidc.get(name).ok_or(AuthError::NotFound)?;
        let input = body?;
        let user = &caller.who;
        let links = Links(&gh.db).of_user(user.id).await?;
        if !links.iter().any(|l| l.provider == name) {
            return Err(AuthError::NotFound);
        }
        let kind = FlowKind::Confirm { user_id: user.id };
        to_provider(provider, &caller, kind, &input).await
    }
    .await;
    Posted(answer)
}

/// What an unlink answers: 204 to a script, a 303 back to the account
/// screen (with its message) to a form.
#[derive(rocket::Responder)]
pub enum Unlinked {
    /// 204 No Content.
    Done(Status),
    /// 303 to the account screen.
    Screen(Box<Redirect>),
}

/// `POST /auth/oidc/links/<id>/delete` `{password}`: 204; 404 unless the
/// link is the caller's; 422 `last_sign_in_method` when the account would
/// be left without a password, a passkey or another link.
#[post("/auth/oidc/links/<id>/delete", data = "<body>")]
pub async fn remove(
    caller: AccountRequest<'_>,
    id: i64,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Unlinked> {
    let answer = async {
        let input = body?.into_input();
        let user = &caller.who;
        // Two unlinks at once (the last two providers of an account without
        // a password): the second waits for the first, then counts what is
        // left. A refusal drops the transaction, which rolls it back.
        let mut tx = Tx::begin(&gh.db).await?;
        users::hold_in(&mut tx, user.id).await?;
        let own = Links(&gh.db).of_user(user.id).await?;
        let link = own.iter().find(|l| l.id == id).ok_or(AuthError::NotFound)?;
        if own.len() == 1 && !other_way_in(gh, user.id).await? {
            return Err(AuthError::Refused("last_sign_in_method"));
        }
        if !Links::remove_in(&mut tx, user.id, id).await? {
            return Err(AuthError::NotFound);
        }
        tx.commit().await?;
        let unlinked = AuthEvent::OidcUnlinked {
            user_id: user.id,
            provider: link.provider.clone(),
        };
        gh.events.emit(unlinked, &caller.from).await;
        if input.is_form() {
            caller.session.set_flash(json!({"message": "oidc_unlinked"}));
            return Ok(Unlinked::Screen(Box::new(Redirect::to(Screen::Account.path()))));
        }
        Ok(Unlinked::Done(Status::NoContent))
    }
    .await;
    Posted(answer)
}

/// Whether `user_id` can sign in without any provider: a usable password
/// or a passkey.
async fn other_way_in(gh: &GatehouseState, user_id: i64) -> Result<bool, AuthError> {
    let user = users::find_by_id(&gh.db, user_id)
        .await?
        .ok_or(AuthError::NotFound)?;
    if users::has_password(&user.password_hash) {
        return Ok(true);
    }
    // With passkeys off (an IP address as base_url), none signs in.
    Ok(gh.passkeys.is_on() && !gh.passkeys.list(user_id).await?.is_empty())
}
