//! What a wrong second-factor answer tells, wherever it was given (the
//! second step of a sign-in, two-factor's first code, a passkey confirming
//! sudo mode): the `two_factor_failed` event, and when the failure locked or
//! closed the second step, the lockout's event and the mail that tells the
//! owner their password is known. `auth::second_step` counts the failure;
//! the events and the mail need the state only the routes read, so they are
//! told here, once for every route that checks an answer. It declares no
//! route.

use crate::auth::second_step::{Failure, Refused, CLOSED_RETRY_SECONDS, DAY_LIMIT, IN_ROW_LIMIT};
use crate::auth::users;
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::i18n::Language;
use crate::mail::mailbox;
use crate::screens::Screen;
use crate::state::GatehouseState;

/// A wrong second-factor answer, counted: the `two_factor_failed` event,
/// and the lockout's event and mail when it locked or closed the second
/// step. Answers the error to give, 429 once no further answer is checked.
pub async fn told(
    gh: &GatehouseState,
    failure: Failure,
    user_id: i64,
    from: &Origin,
    language: Language,
) -> Result<AuthError, AuthError> {
    gh.events
        .emit(AuthEvent::TwoFactorFailed { user_id }, from)
        .await;
    let spent = match failure {
        Failure::Counted { spent } => spent,
        Failure::LockedOut { retry_after } => {
            locked_out(gh, user_id, from, language, Lockout::Hour).await?;
            Some(retry_after)
        }
        Failure::Closed => {
            locked_out(gh, user_id, from, language, Lockout::UntilReset).await?;
            Some(CLOSED_RETRY_SECONDS)
        }
    };
    Ok(match spent {
        Some(retry_after) => AuthError::Throttled { retry_after },
        None => AuthError::TwoFactorFailed,
    })
}

/// A wrong answer to `user_id`'s pending sign-in, told: the
/// `passkey_refused` event when a passkey's signature counter went back (the
/// authenticator may have been cloned), then as [`told`]. Answers the error
/// to give: 429 once no further answer is checked (the pending sign-in is
/// over then), else `passkey_failed` for a passkey's answer.
pub async fn refused_sign_in(
    gh: &GatehouseState,
    refused: Refused,
    user_id: i64,
    from: &Origin,
    language: Language,
) -> Result<AuthError, AuthError> {
    if let Some(passkey_id) = refused.counter_went_back {
        let event = AuthEvent::PasskeyRefused {
            user_id,
            passkey_id,
        };
        gh.events.emit(event, from).await;
    }
    Ok(
        match told(gh, refused.failure, user_id, from, language).await? {
            throttled @ AuthError::Throttled { .. } => throttled,
            _ if refused.passkey => AuthError::PasskeyFailed,
            error => error,
        },
    )
}

/// How long a lockout keeps the second step closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lockout {
    /// The day's limit: an hour.
    Hour,
    /// Failures in a row: until the password is reset by mail.
    UntilReset,
}

/// The day's limit of wrong codes was reached, or the limit in a row: the
/// `lockout` event and the mail to the user, who learns that their
/// password is known (and, closed until a reset, how to open it again).
async fn locked_out(
    gh: &GatehouseState,
    user_id: i64,
    from: &Origin,
    language: Language,
    lockout: Lockout,
) -> Result<(), AuthError> {
    gh.events
        .emit(AuthEvent::SecondFactorLockout { user_id }, from)
        .await;
    let Some(user) = users::find_by_id(&gh.db, user_id).await? else {
        return Ok(());
    };
    let forgot = gh.settings.absolute(Screen::ForgotPassword.path());
    let sent = gh
        .composer
        .second_factor_lockout(
            language,
            &user.name,
            match lockout {
                Lockout::Hour => DAY_LIMIT,
                Lockout::UntilReset => IN_ROW_LIMIT,
            },
            lockout == Lockout::UntilReset,
            &forgot,
        )
        .and_then(|mail| mailbox(&user.name, &user.email).map(|to| gh.mailer.send(to, mail)));
    if let Err(e) = sent {
        tracing::error!(error = %e, "second-factor lockout mail not sent");
    }
    Ok(())
}
