//! The signed-in user's own password, asked again before a change to the
//! account: checked as a sign-in is (in the hash queue, under the sign-in
//! throttles), and a wrong one counts as a failed sign-in.

use rocket::http::CookieJar;
use secrecy::SecretString;

use crate::auth::{users, Begun};
use crate::body::Input;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::events::{AuthEvent, Origin};
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
    let throttles = &gh.throttles;
    let ip = client.to_string();
    let ip_key = throttles.login_ip.ip_key(&ip);
    let place = gh.hasher.reserve(client.0).ok_or(AuthError::Busy)?;
    if let Some(retry_after) = throttles.login_ip.exhausted(&ip_key).await? {
        return Err(AuthError::Throttled { retry_after });
    }
    let key = throttles.login.key(&email, &ip);
    let check = match throttles.login.begin(&key).await? {
        Begun::Check(check) => check,
        Begun::Refused { retry_after, .. } => return Err(AuthError::Throttled { retry_after }),
    };
    let stored = users::find_by_id(&gh.db, user.id).await?;
    let verification = gh
        .hasher
        .verify(
            &place,
            &password,
            stored.as_ref().map(|u| u.password_hash.as_str()),
        )
        .await;
    if stored.is_none() || !verification.matches {
        check.failed().await?;
        throttles.login_ip.record(&ip_key).await?;
        let failed = AuthEvent::Failed {
            email: user.email.clone(),
            user_id: Some(user.id),
        };
        gh.events.emit(failed, from).await;
        let mut errors = FieldErrors::new();
        errors.add(field, "current_password");
        return Err(AuthError::Validation(errors));
    }
    check.succeeded().await?;
    Ok(())
}

/// Rotates the user's `remember_token`, voiding every remember-me cookie,
/// and gives this browser a new one if it had one.
pub async fn rotate_remember(
    gh: &GatehouseState,
    jar: &CookieJar<'_>,
    user_id: i64,
) -> Result<(), AuthError> {
    let token = users::rotate_remember_token(&gh.db, user_id).await?;
    if jar.get_private(&remember_cookie_name(&gh.settings)).is_some() {
        remember(jar, gh, user_id, &token);
    }
    Ok(())
}
