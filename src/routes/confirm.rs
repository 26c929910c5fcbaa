//! The signed-in user's own password, asked again before a change to the
//! account: checked as a sign-in checks it ([`check_password`]), so a wrong
//! one counts as a failed sign-in. An account an OpenID provider made has
//! no password: it gives a fresh proof instead — a sign-in at a linked
//! provider made now (`prompt=login`), kept in the session for five
//! minutes ([`proven_now`]).

use secrecy::SecretString;
use serde_json::json;

use super::password_check::{check_password, Checked};
use crate::auth::oidc::Links;
use crate::auth::users;
use crate::body::Input;
use crate::clock::unix_now;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::Origin;
use crate::security::ClientIp;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// Where the session keeps when its user last proved who they are without
/// a password.
const PROVEN_KEY: &str = "reauth.proven_at";

/// How long such a proof stands in for the password.
pub const PROOF_SECONDS: i64 = 5 * 60;

/// Notes in `session` that its user proved who they are at `at` (Unix
/// seconds: a provider's `auth_time`).
pub fn proven_at(session: &Session, at: i64) {
    session.insert(PROVEN_KEY, json!(at));
}

/// Whether `session`'s user proved who they are without a password in the
/// last five minutes.
fn proven_now(session: &Session) -> bool {
    session
        .get(PROVEN_KEY)
        .and_then(|at| at.as_i64())
        .is_some_and(|at| unix_now() - at < PROOF_SECONDS)
}

/// Reads the password field `field` of `input` and checks it is `user`'s.
/// A missing one is 422 `required`, a wrong one 422 `current_password`, on
/// `field`. For an account without a password and without the field, a
/// fresh proof in `session` stands in; without one, 422 `reauth_required`
/// names the ways to give it.
pub async fn confirm_password(
    gh: &GatehouseState,
    user: &AuthUser,
    session: &Session,
    client: ClientIp,
    from: &Origin,
    input: &Input,
    field: &'static str,
) -> Result<(), AuthError> {
    if !input.has(field) && !has_password(gh, user).await? {
        if proven_now(session) {
            return Ok(());
        }
        let methods = Links(&gh.db)
            .of_user(user.id)
            .await?
            .into_iter()
            .map(|link| format!("oidc:{}", link.provider))
            .collect();
        return Err(AuthError::ReauthRequired { methods });
    }
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

/// Whether `user`'s account has a password (an account a provider made
/// has none until a reset by mail sets one).
async fn has_password(gh: &GatehouseState, user: &AuthUser) -> Result<bool, AuthError> {
    let record = users::find_by_id(&gh.db, user.id).await?;
    Ok(record.is_some_and(|r| users::has_password(&r.password_hash)))
}
