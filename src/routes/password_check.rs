//! A password checked as a sign-in checks it, for `POST /auth/login` and for
//! the password a signed-in user is asked again: the client's place in the
//! hash queue before any write, the per-IP and per-address budgets, the hash
//! (a dummy one for an unknown address), a wrong password counted and
//! recorded, a lockout recorded once per window, an old hash replaced.

use secrecy::SecretString;

use crate::auth::users::{self, UserRecord};
use crate::auth::Begun;
use crate::domain::Email;
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::security::ClientIp;
use crate::state::GatehouseState;

/// What the check found, when no budget refused it.
pub enum Checked {
    /// The password is the account's.
    Right(UserRecord),
    /// No account has this address, or the password is not its.
    Wrong,
}

/// Checks `password` for the account of `email`, from `client`. Refusals
/// (a spent budget, a full hash queue) are errors; a wrong password is
/// [`Checked::Wrong`], already counted and recorded.
pub async fn check_password(
    gh: &GatehouseState,
    client: ClientIp,
    from: &Origin,
    email: &Email,
    password: &SecretString,
) -> Result<Checked, AuthError> {
    let throttles = &gh.throttles;
    let ip = client.to_string();
    let ip_key = throttles.login_ip.ip_key(&ip);
    // An address this instance already refused is answered from memory.
    if let Some(retry_after) = throttles.login_ip.refuses_from_memory(&ip_key) {
        return Err(AuthError::Throttled { retry_after });
    }
    // Capacity next, before any write or hash: a full queue, or a client
    // holding its share of it, is refused.
    let place = gh.hasher.reserve(client.0).ok_or(AuthError::Busy)?;
    if let Some(retry_after) = throttles.login_ip.refuses(&ip_key).await? {
        return Err(AuthError::Throttled { retry_after });
    }
    let key = throttles.login.key(email, &ip);
    let check = match throttles.login.begin(&key).await? {
        Begun::Check(check) => check,
        Begun::Refused { retry_after, first } => {
            if first {
                // Once per window: the lookup costs no more than a sign-in's.
                let user_id = users::find_by_email(&gh.db, email).await?.map(|u| u.id);
                let lockout = AuthEvent::Lockout {
                    email: email.to_string(),
                    ip,
                    user_id,
                };
                gh.events.emit(lockout, from).await;
            }
            return Err(AuthError::Throttled { retry_after });
        }
    };
    let user = users::find_by_email(&gh.db, email).await?;
    let verification = gh
        .hasher
        .verify(&place, password, user.as_ref().map(|u| u.password_hash.as_str()))
        .await;
    let user_id = user.as_ref().map(|u| u.id);
    let Some(user) = user.filter(|_| verification.matches) else {
        check.failed().await?;
        throttles.login_ip.record(&ip_key).await?;
        let failed = AuthEvent::Failed {
            email: email.to_string(),
            user_id,
        };
        gh.events.emit(failed, from).await;
        return Ok(Checked::Wrong);
    };
    check.succeeded().await?;
    if verification.needs_rehash {
        let rehashed = gh
            .hasher
            .hash(password)
            .await
            .map_err(AuthError::Internal)?;
        users::rehash_password(&gh.db, user.id, &rehashed).await?;
    }
    drop(place);
    Ok(Checked::Right(user))
}
