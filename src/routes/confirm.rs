//! The signed-in user's own password, asked again before a change to the
//! account: checked as a sign-in checks it ([`check_password`]), so a wrong
//! one counts as a failed sign-in.

use rocket::http::CookieJar;
use secrecy::SecretString;

use super::password_check::{check_password, Checked};
use crate::auth::users;
use crate::body::Input;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::Origin;
use crate::security::ClientIp;
use crate::session::{remember, remember_cookie_name, AuthUser};
use crate::state::GatehouseState;

/// Reads the password field `field` of `input` and checks it is `user`'s.
/// A missing one is 422 `required`, a wrong one 422 `current_password`, on
/// `field`.
pub async fn confirm_password(
    gh: &GatehouseState,
    user: &AuthUser,
    client: ClientIp,
    from: &Origin,
    input: &Input,
    field: &'static str,
) -> Result<(), AuthError> {
    let mut errors = FieldErrors::new();
    let password = input.required_password(field, &mut errors);
    let Some(password) = password.filter(|_| errors.is_empty()) else {
        return Err(AuthError::Validation(errors));
    };
    let password = SecretString::from(password);
    let email = Email::parse(&user.email).ok_or(AuthError::Unauthenticated)?;
    match check_password(gh, client, from, &email, &password).await? {
        Checked::Right(account) if account.id == user.id => Ok(()),
        _ => {
            let mut errors = FieldErrors::new();
            errors.add(field, "current_password");
            Err(AuthError::Validation(errors))
        }
    }
}

/// Rotates the user's `remember_token`, voiding every remember-me cookie,
/// and gives this browser a new one if it had one.
pub async fn rotate_remember(
    gh: &GatehouseState,
    jar: &CookieJar<'_>,
    user_id: i64,
) -> Result<(), AuthError> {
    let token = users::rotate_remember_token(&gh.db, user_id).await?;
    keep_remembered(gh, jar, user_id, &token);
    Ok(())
}

/// Gives this browser a remember cookie under the user's new `token` if it
/// had one before the token rotated.
pub fn keep_remembered(gh: &GatehouseState, jar: &CookieJar<'_>, user_id: i64, token: &str) {
    if jar.get_private(&remember_cookie_name(&gh.settings)).is_some() {
        remember(jar, gh, user_id, token);
    }
}
