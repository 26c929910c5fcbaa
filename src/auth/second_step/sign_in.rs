//! The second step of a pending sign-in, in its one order: a slot of the
//! user's limit is reserved before anything of the answer is looked at;
//! only then is a passkey's challenge taken (so a refused reservation
//! leaves it unclaimed), and the answer is checked under the credential
//! epoch the sign-in began in. The outcome is a [`Step`], which the route
//! turns into its reply. What needs the session or the routes' state (the
//! pending sign-in itself, the kept challenge, the events, the lockout's
//! mail) stays with the route: `auth` reads neither.

use serde_json::Value;

use super::{Answer, Failure, Reserved, SecondFactorLimit, SecondStepError, Verdict};
use crate::auth::epoch::Epoch;
use crate::auth::passkeys::{Assertion, Passkeys};
use crate::auth::two_factor::TwoFactor;
use crate::db::DbError;

/// What a browser answered a pending sign-in's second step with.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// A TOTP code from the authenticator app.
    Code(String),
    /// One of the user's recovery codes.
    RecoveryCode(String),
    /// A passkey's `PublicKeyCredential`, as the browser sent it.
    Passkey(Value),
}

/// How an answer to a pending sign-in's second step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing was checked: the user's window is spent, or the second step
    /// is locked or closed. The pending sign-in goes no further.
    Closed {
        /// Seconds until answers are checked again.
        retry_after: u64,
    },
    /// Right: the sign-in is complete.
    Passed(Passed),
    /// Wrong, and counted.
    Refused(Refused),
}

/// A right answer to a pending sign-in's second step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passed {
    /// A recovery code of an earlier, weaker set was spent: the user is to
    /// be asked to renew the set.
    pub renew_recovery_codes: bool,
    /// The answer was a recovery code (one fewer is left: worth recording).
    pub recovery_code: bool,
}

/// A wrong answer to a pending sign-in's second step, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// What counting it did.
    pub failure: Failure,
    /// The passkey (`gatehouse_passkeys.id`) whose signature counter went
    /// backwards, when that was why: worth recording.
    pub counter_went_back: Option<i64>,
    /// The answer was a passkey's: refused as one, unless no further answer
    /// is checked.
    pub passkey: bool,
}

/// What checks a pending sign-in's second step: the user's limit, and the
/// two ways to answer it.
pub struct SecondStep<'a> {
    /// The second-factor counters, where each answer reserves its slot.
    pub limit: &'a SecondFactorLimit,
    /// Checks a code or a recovery code.
    pub two_factor: &'a TwoFactor,
    /// Checks a passkey's answer.
    pub passkeys: &'a Passkeys,
}

impl SecondStep<'_> {
    /// Checks `given`, the answer to the second step of `user_id`'s pending
    /// sign-in begun under `epoch`. `challenge` takes the passkey challenge
    /// kept for this second step, and is called only for a passkey's answer
    /// that reserved its slot; without one the answer is wrong.
    pub async fn answer<E>(
        &self,
        user_id: i64,
        epoch: Epoch,
        given: &Given,
        challenge: impl AsyncFnOnce() -> Result<Option<Assertion>, E>,
    ) -> Result<Step, E>
    where
        E: From<SecondStepError> + From<DbError>,
    {
        let check = match self.limit.reserve(user_id).await? {
            Reserved::Check(check) => check,
            Reserved::Refused { retry_after } => return Ok(Step::Closed { retry_after }),
        };
        let answer = match given {
            Given::Passkey(credential) => match challenge().await? {
                Some(assertion) => Answer::Passkey {
                    credential,
                    assertion,
                },
                None => Answer::Unchallenged,
            },
            Given::RecoveryCode(code) => Answer::RecoveryCode(code),
            Given::Code(code) => Answer::Code(code),
        };
        let verdict = check
            .answer(self.two_factor, self.passkeys, epoch, answer)
            .await?;
        Ok(match verdict {
            Verdict::Passed {
                renew_recovery_codes,
            } => Step::Passed(Passed {
                renew_recovery_codes,
                recovery_code: matches!(given, Given::RecoveryCode(_)),
            }),
            Verdict::Refused {
                failure,
                counter_went_back,
            } => Step::Refused(Refused {
                failure,
                counter_went_back,
                passkey: matches!(given, Given::Passkey(_)),
            }),
        })
    }
}
