//! The reset link (`GET /password/reset/<token>?email=`) and the authoritative
//! `POST /auth/reset-password`.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use rocket::response::Redirect;
use rocket::{get, post, State};
use secrecy::SecretString;
use serde_json::json;

use super::new_password::send_password_changed;
use super::posting::GuestRequest;
use crate::auth::reset::broker;
use crate::auth::users;
use crate::body::{BodyError, Input};
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::reply::Reply;
use crate::screens::Screen;
use crate::db::Tx;
use crate::auth::tokens;
use crate::session::{credential_change, Ending};
use crate::state::GatehouseState;
use crate::security::SameOrigin;

/// The courtesy pre-check of a mailed link: to the set-password screen when
/// the account and a live token exist, else to `/login`. Nothing is consumed.
#[get("/password/reset/<token>?<email>")]
pub async fn reset_link(
    token: &str,
    email: Option<&str>,
    gh: &State<GatehouseState>,
) -> Result<Redirect, AuthError> {
    let Some(email) = email.and_then(Email::parse) else {
        return Ok(Redirect::to(Screen::Login.path()));
    };
    let exists = users::find_by_email(&gh.db, &email).await?.is_some();
    if !exists
        || !broker::is_live(&gh.db, &email, token, gh.settings.auth.reset_token_minutes).await?
    {
        return Ok(Redirect::to(Screen::Login.path()));
    }
    Ok(Redirect::to(set_password_path(token, email.as_str())))
}

/// The fields of a reset that are read before its token is checked: the
/// token, the address, and that a password was sent and confirmed. The new
/// password is held to its rules only once the token proved live, so a
/// bogus token learns nothing of the breached-password file.
struct ResetForm {
    token: String,
    email: Email,
}

impl ResetForm {
    fn from_input(input: &Input) -> Result<Self, AuthError> {
        let mut errors = FieldErrors::new();
        let token = input.required_text("token", &mut errors);
        let email = input.required_email("email", &mut errors);
        let password = input.required_password("password", &mut errors);
        let confirmation = input.password("password_confirmation", &mut errors);
        if password.is_some() && confirmation != password {
            errors.add("password", "confirmed");
        }
        match (token, email) {
            (Some(token), Some(email)) if errors.is_empty() => Ok(Self { token, email }),
            _ => Err(AuthError::Validation(errors)),
        }
    }
}

/// Replaces the password if the token is live for the address; then rotates
/// `remember_token`, ends every session of the user and sends a notice. A form
/// post that fails goes back to its set-password screen with the message.
#[post("/auth/reset-password", data = "<body>")]
pub async fn reset_password(
    guest: GuestRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Result<Reply, AuthError> {
    let GuestRequest {
        session,
        from,
        ..
    } = &guest;
    let language = guest.language;
    let input = body?;
    match reset(&input, gh, language, from).await {
        Ok(()) if input.is_form() => {
            session.set_flash(json!({"message": "reset_success"}));
            Ok(Reply::screen(Screen::Login.path()))
        }
        Ok(()) => Ok(Reply::json(json!({
            "message": "reset_success",
            "redirect": gh.settings.absolute(Screen::Login.path()),
        }))),
        Err(e @ (AuthError::Validation(_) | AuthError::ResetFailed)) if input.is_form() => {
            session.set_flash(e.body());
            let mut ignored = FieldErrors::new();
            let token = input.text("token", &mut ignored).unwrap_or_default();
            let email = input.text("email", &mut ignored).unwrap_or_default();
            Ok(Reply::screen(set_password_path(&token, &email)))
        }
        Err(e) => Err(e),
    }
}

/// `/login/set-password/<token>/<email>`, both percent-encoded.
pub fn set_password_path(token: &str, email: &str) -> String {
    format!(
        "/login/set-password/{}/{}",
        utf8_percent_encode(token, NON_ALPHANUMERIC),
        utf8_percent_encode(email, NON_ALPHANUMERIC)
    )
}

async fn reset(
    input: &Input,
    gh: &GatehouseState,
    language: Language,
    from: &Origin,
) -> Result<(), AuthError> {
    let form = ResetForm::from_input(input)?;
    let lifetime = gh.settings.auth.reset_token_minutes;
    let Some(user) = users::find_by_email(&gh.db, &form.email).await? else {
        return Err(AuthError::ResetFailed);
    };
    if !broker::is_live(&gh.db, &form.email, &form.token, lifetime).await? {
        return Err(AuthError::ResetFailed);
    }
    let password = input.valid_new_password(&gh.new_passwords, &[form.email.as_str()])?;
    let hash = gh
        .hasher
        .hash(&SecretString::from(password.expose().to_owned()))
        .await
        .map_err(AuthError::Internal)?;
    // The token spent, the password, and every session, remember cookie
    // and pending sign-in ended: all of it, or none of it.
    let new_password = async |tx: &mut Tx| {
        if !broker::consume_in(tx, &form.email, &form.token).await? {
            return Err(AuthError::ResetFailed);
        }
        users::reset_password_in(tx, user.id, &hash).await?;
        if gh.settings.tokens.revoke_on_password_reset {
            tokens::delete_for_user_in(tx, user.id).await?;
        }
        Ok(())
    };
    credential_change(&gh.db, user.id, Ending::All, new_password).await?;
    gh.events
        .emit(AuthEvent::PasswordReset { user_id: user.id }, from)
        .await;
    send_password_changed(gh, language, user.id, &user.name, &user.email).await;
    Ok(())
}

/// A signed-in browser goes to `dashboard`.
#[post("/auth/reset-password", rank = 2)]
pub fn reset_password_signed_in(_origin: SameOrigin, gh: &State<GatehouseState>) -> Redirect {
    gh.to_dashboard()
}
