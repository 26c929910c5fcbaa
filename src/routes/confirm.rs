//! `POST /auth/confirm`: the caller opens sudo mode's window by their
//! password or one of their passkeys (whose challenge
//! `POST /auth/confirm/passkey-options` gives). Sudo mode itself, the guard
//! of every sensitive change, is `sudo.rs`.

use rocket::serde::json::Json;
use rocket::{post, State};
use serde_json::{json, Value};

use super::ceremony::{public_key, Ceremony};
use super::posting::AccountRequest;
use super::sudo::{by_passkey, right_password};
use crate::body::Input;
use crate::clock::rfc3339;
use crate::error::{AuthError, FieldErrors};
use crate::reply::Reply;
use crate::screens::{Posted, Screen};
use crate::session::reauth;
use crate::state::GatehouseState;

/// `POST /auth/confirm` `{password}` or `{credential}` (the answer to
/// `POST /auth/confirm/passkey-options`): opens the window → 200
/// `{"message":"confirmed","until":"<RFC 3339>"}` (a form post: 303 to the
/// account screen). A wrong password is 422 and a failed sign-in; a wrong
/// passkey 422 `passkey_failed`, counted as a second step's answer is.
#[post("/auth/confirm", data = "<body>")]
pub async fn confirm_route(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, crate::body::BodyError>,
) -> Posted<Reply> {
    let answer = async {
        let input = body?;
        let mut ignored = FieldErrors::new();
        match input.object("credential", &mut ignored) {
            Some(credential) => by_passkey(gh, &caller, &credential).await?,
            None => right_password(gh, &caller, &input, "password").await?,
        }
        let minutes = gh.settings.session.reauth_minutes;
        let until = reauth::open_until(&caller.session, caller.who.id, minutes).unwrap_or_default();
        if input.is_form() {
            caller.session.set_flash(json!({"message": "identity_confirmed"}));
            return Ok(Reply::screen(Screen::Account.path()));
        }
        Ok(Reply::json(json!({"message": "confirmed", "until": rfc3339(until)})))
    }
    .await;
    Posted(answer)
}

/// `POST /auth/confirm/passkey-options`: request options for confirming
/// with one of the caller's own passkeys (404 while passkeys are off or
/// when they have none).
#[post("/auth/confirm/passkey-options")]
pub async fn passkey_options(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
) -> Result<Json<Value>, AuthError> {
    let (options, assertion) = gh
        .passkeys
        .start_second_step(caller.who.id)
        .await?
        .ok_or(AuthError::NotFound)?;
    Ceremony::Confirm.keep(&caller.session, &options, &assertion)?;
    Ok(Json(public_key(options)))
}
