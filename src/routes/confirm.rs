//! The signed-in user's own password, asked again before a change to the
//! account: checked as a sign-in checks it ([`check_password`]), so a wrong
//! one counts as a failed sign-in.

use secrecy::SecretString;

use super::password_check::{check_password, Checked};
use crate::body::Input;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::Origin;
use crate::security::ClientIp;
use crate::session::AuthUser;
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
