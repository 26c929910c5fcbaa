//! Passkeys on the account screen (`GET /auth/passkeys`, adding one with
//! `POST /auth/passkeys/options` then `POST /auth/passkeys`, removing one
//! with `POST /auth/passkeys/<id>/delete`) and signing in with one alone
//! (`POST /auth/passkey/options`, then `POST /auth/passkey/login`). Every
//! route is 404 while passkeys are off; each challenge is used once.

use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::account_screen;
use super::ceremony::{public_key, Ceremony};
use super::notify::{notify, recipient};
use super::posting::{AccountRequest, GuestRequest};
use super::sign_in::{finish, Completing, Proven};
use super::sudo::Confirmed;
use crate::auth::passkeys::{Assertion, PasskeyError, Registration, Verified, MAX_NAME_CHARS};
use crate::auth::users;
use crate::body::{BodyError, Input};
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
use crate::mail::Notice;
use crate::reply::Reply;
use crate::security::SameOrigin;
use crate::session::{store, AuthUser, Guest, Session};
use crate::state::GatehouseState;

/// 404 while passkeys are off.
fn on(gh: &GatehouseState) -> Result<(), AuthError> {
    if gh.passkeys.is_on() {
        Ok(())
    } else {
        Err(AuthError::NotFound)
    }
}

/// `GET /auth/passkeys`.
#[get("/auth/passkeys")]
pub async fn list(user: AuthUser, gh: &State<GatehouseState>) -> Result<Json<Value>, AuthError> {
    account_screen::passkeys(gh, &user)
        .await?
        .map(Json)
        .ok_or(AuthError::NotFound)
}

/// `POST /auth/passkeys/options` `{password}`: creation options for a new
/// passkey; the password is asked again (a wrong one counts as a failed
/// sign-in).
#[post("/auth/passkeys/options", data = "<body>")]
pub async fn registration_options(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Result<Json<Value>, AuthError> {
    let AccountRequest {
        who: user,
        session,
        ..
    } = &caller;
    body?;
    on(gh)?;
    let (options, registration) = gh
        .passkeys
        .start_registration(user.id, &user.email, &user.name)
        .await?;
    Ceremony::Registration.keep(session, &options, &registration)?;
    Ok(Json(public_key(options)))
}

/// Reads the passkey's name: required, at most [`MAX_NAME_CHARS`].
fn name_field(input: &Input, errors: &mut FieldErrors) -> Option<String> {
    let name = input.required_text("name", errors)?;
    let name = name.trim().to_owned();
    if name.chars().count() > MAX_NAME_CHARS {
        errors.add("name", "max_length");
        return None;
    }
    Some(name)
}

/// Reads the authenticator's answer.
fn credential_field(input: &Input, errors: &mut FieldErrors) -> Option<Value> {
    let credential = input.object("credential", errors);
    if credential.is_none() && errors.count("credential") == 0 {
        errors.add("credential", "required");
    }
    credential
}

/// `POST /auth/passkeys` `{name, credential}`: the authenticator's answer
/// to the challenge of `POST /auth/passkeys/options`; 201 `{"id","name"}`.
#[post("/auth/passkeys", data = "<body>")]
pub async fn register(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Result<(Status, Json<Value>), AuthError> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let language = caller.language;
    let input = body?;
    on(gh)?;
    let mut errors = FieldErrors::new();
    let name = name_field(&input, &mut errors);
    let credential = credential_field(&input, &mut errors);
    let (Some(name), Some(credential)) = (name, credential) else {
        return Err(AuthError::Validation(errors));
    };
    let registration: Registration = Ceremony::Registration
        .take(gh, session)
        .await?
        .ok_or(AuthError::PasskeyFailed)?;
    let added = gh
        .passkeys
        .finish_registration(user.id, &name, &credential, registration)
        .await?;
    let event = AuthEvent::PasskeyAdded {
        user_id: user.id,
        passkey_id: added.id,
        name: added.name.clone(),
    };
    gh.events.emit(event, from).await;
    let notice = Notice::PasskeyAdded {
        name: added.name.clone(),
    };
    notify(gh, recipient(user), language, &notice);
    Ok((
        Status::Created,
        Json(json!({"id": added.id, "name": added.name})),
    ))
}

/// `POST /auth/passkeys/<id>/delete` `{password}`: 204, or 404 unless the
/// passkey is the caller's. Every other session the passkey signed in ends
/// (this one was just proven again by the password).
#[post("/auth/passkeys/<id>/delete", data = "<body>")]
pub async fn remove(
    caller: AccountRequest<'_>,
    id: i64,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Result<Status, AuthError> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let language = caller.language;
    body?;
    on(gh)?;
    let name = gh
        .passkeys
        .remove(user.id, id)
        .await?
        .ok_or(AuthError::NotFound)?;
    let own = session.stored_id().unwrap_or_default();
    store::end_for_passkey(&gh.db, id, &own).await?;
    let event = AuthEvent::PasskeyRemoved {
        user_id: user.id,
        passkey_id: id,
    };
    gh.events.emit(event, from).await;
    notify(gh, recipient(user), language, &Notice::PasskeyRemoved { name });
    Ok(Status::NoContent)
}

/// `POST /auth/passkey/options`: request options for a sign-in with any
/// discoverable passkey.
#[post("/auth/passkey/options")]
pub fn sign_in_options(
    _origin: SameOrigin,
    _guest: Guest,
    session: Session,
    gh: &State<GatehouseState>,
) -> Result<Json<Value>, AuthError> {
    let (options, assertion) = gh.passkeys.start_sign_in()?;
    Ceremony::SignIn.keep(&session, &options, &assertion)?;
    Ok(Json(public_key(options)))
}

/// `POST /auth/passkey/login` `{credential, remember?}`: a completed
/// sign-in, exactly as a password and any second factor complete one; a
/// failure is 422 `passkey_failed` and spends the client's per-IP budget.
#[post("/auth/passkey/login", data = "<body>")]
pub async fn sign_in(
    guest: GuestRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Result<Reply, AuthError> {
    let GuestRequest {
        session,
        from,
        jar,
        ..
    } = &guest;
    let client = guest.client;
    let language = guest.language;
    let input = body?;
    on(gh)?;
    let ip_budget = &gh.throttles.login_ip;
    let ip_key = ip_budget.ip_key(&client.to_string());
    if let Some(retry_after) = ip_budget.refuses_from_memory(&ip_key) {
        return Err(AuthError::Throttled { retry_after });
    }
    if let Some(retry_after) = ip_budget.refuses(&ip_key).await? {
        return Err(AuthError::Throttled { retry_after });
    }
    let mut errors = FieldErrors::new();
    let credential = credential_field(&input, &mut errors);
    let remember = input.boolean("remember", &mut errors);
    let Some(credential) = credential.filter(|_| errors.is_empty()) else {
        return Err(AuthError::Validation(errors));
    };
    // A second step's assertion is refused by `finish_sign_in`.
    let verified = match Ceremony::SignIn.take::<Assertion>(gh, session).await? {
        Some(assertion) => verify(gh, from, &credential, assertion).await,
        None => Err(AuthError::PasskeyFailed),
    };
    let found = match verified {
        Ok(verified) => users::find_by_id(&gh.db, verified.user_id)
            .await?
            .map(|user| (user, verified.passkey_id)),
        Err(AuthError::PasskeyFailed) => None,
        Err(other) => return Err(other),
    };
    let Some((user, passkey_id)) = found else {
        ip_budget.record(&ip_key).await?;
        return Err(AuthError::PasskeyFailed);
    };
    let at = Completing::new(jar, session, from, language);
    finish(gh, at, Proven::passkey(user, remember, passkey_id)).await
}

/// Verifies `credential` against a passwordless sign-in's `assertion`; a
/// counter that went backwards is recorded (`passkey_refused`). Every
/// refusal is [`AuthError::PasskeyFailed`].
async fn verify(
    gh: &GatehouseState,
    from: &Origin,
    credential: &Value,
    assertion: Assertion,
) -> Result<Verified, AuthError> {
    match gh.passkeys.finish_sign_in(credential, assertion).await {
        Ok(verified) => Ok(verified),
        Err(PasskeyError::CounterWentBack {
            user_id,
            passkey_id,
        }) => {
            let event = AuthEvent::PasskeyRefused {
                user_id,
                passkey_id,
            };
            gh.events.emit(event, from).await;
            Err(AuthError::PasskeyFailed)
        }
        Err(error) => Err(error.into()),
    }
}
