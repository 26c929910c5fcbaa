//! The second step of a sign-in, and the code that turns two-factor
//! sign-in on: how many answers (TOTP codes, recovery codes, passkeys) a
//! user may have checked, and the only way to check one.
//!
//! An answer is checked only after it has reserved a slot of the user's window
//! counter ([`Throttle::try_begin`]: one statement that takes a slot only
//! while failures and checks in progress are below the limit), so however
//! many requests arrive at once, through however many pending sign-ins and
//! instances, at most `auth.throttle_attempts` codes are checked per window.
//! A code that finds no free slot is refused at once, unchecked, rather
//! than waiting for the checks in progress.
//! Failures also count for a day: the one that makes
//! [`DAY_LIMIT`] within 24 hours locks the second step for
//! [`LOCK_SECONDS`], and is reported once ([`Failure::LockedOut`]).
//! [`IN_ROW_LIMIT`] failures with no success between close the second step
//! until the password is reset by mail (NIST SP 800-63B 5.2.2), reported
//! once ([`Failure::Closed`]).
//!
//! [`SecondFactorCheck::answer`] and [`SecondFactorCheck::enrolment_code`]
//! are the only callers of what verifies an answer
//! (`TwoFactor::verify_sign_in`, `use_recovery_code`, `check_enrolment`,
//! `Passkeys::finish_second_step`, all visible in `auth/` alone), and a
//! check is had only from [`SecondFactorLimit::reserve`]: no answer is
//! looked at without its reservation, and each is reported as it went.
//! A pending sign-in's second step goes through [`SecondStep::answer`]
//! (`sign_in.rs`), which keeps that order and answers a [`Step`].
//!
//! ```ignore
//! let Reserved::Check(check) = limit.reserve(user_id).await? else { return too_many() };
//! match check.answer(&two_factor, &passkeys, epoch, Answer::Code("123456")).await? {
//!     Verdict::Passed { .. } => sign_in(),
//!     Verdict::Refused { failure, .. } => tell(failure),
//! }
//! ```

use serde_json::Value;

use super::epoch::Epoch;
use super::passkeys::{Assertion, PasskeyError, Passkeys};
use super::throttle::{Attempt, Begun, Check, Throttle};
use super::two_factor::{
    clear_failures_in_row, count_failure_in_row, failures_in_row, EnrolmentCode, TwoFactor,
    TwoFactorError,
};
use crate::metrics::Metrics;
use crate::db::{Db, DbError};

mod sign_in;

pub use sign_in::{Given, Passed, Refused, SecondStep, Step};

/// Failed codes within [`DAY_SECONDS`] that lock the second step.
pub const DAY_LIMIT: u32 = 20;
/// How long failures count toward [`DAY_LIMIT`].
pub const DAY_SECONDS: u32 = 24 * 3600;
/// How long a locked second step checks no code.
pub const LOCK_SECONDS: u32 = 3600;
/// Failed codes in a row (no success between) that close the second step
/// until a reset by mail.
pub const IN_ROW_LIMIT: u32 = 100;
/// What a closed second step answers in `Retry-After`: no code is checked
/// until a reset, so a client waits at least a day.
pub const CLOSED_RETRY_SECONDS: u64 = 24 * 3600;

/// The second-factor counters of every user.
#[derive(Clone, Debug)]
pub struct SecondFactorLimit {
    /// Codes per throttle window, reserved before they are checked.
    window: Throttle,
    /// Failures per day; refuses the one past [`DAY_LIMIT`] − 1.
    day: Throttle,
    /// One hit while the second step is locked.
    lock: Throttle,
    /// Where the failures in a row are counted.
    db: Db,
}

/// The answer of [`SecondFactorLimit::reserve`].
pub enum Reserved {
    /// The code may be checked; report how it went.
    Check(Box<SecondFactorCheck>),
    /// No code of this user is checked now.
    Refused {
        /// Seconds until codes are checked again.
        retry_after: u64,
    },
}

/// A reserved check of one code. Dropped unreported, it counts as a failure
/// of the window (as [`Check`] does).
pub struct SecondFactorCheck {
    check: Check,
    limit: SecondFactorLimit,
    user_id: i64,
}

/// What a counted failure did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Counted; `spent` is the seconds until the window ends when no further
    /// code will be checked in it.
    Counted {
        /// Seconds until the window ends, when it is spent.
        spent: Option<u64>,
    },
    /// This failure was the [`DAY_LIMIT`]th of the day: the second step is
    /// locked now. Reported to exactly one failure.
    LockedOut {
        /// Seconds until codes are checked again.
        retry_after: u64,
    },
    /// This failure was the [`IN_ROW_LIMIT`]th in a row: the second step
    /// is closed until the password is reset by mail. Reported to exactly
    /// one failure.
    Closed,
}

impl SecondFactorLimit {
    /// `attempts` codes per `window_seconds` for each user, on `db`, each
    /// refusal counted in `metrics`.
    pub fn new(db: &Db, attempts: u32, window_seconds: u32, metrics: &Metrics) -> Self {
        let counter = |scope, limit, window| Throttle::new(db.clone(), scope, limit, window);
        Self {
            window: counter("two-factor", attempts.max(1), window_seconds).counted_in(metrics),
            day: counter("two-factor-day", DAY_LIMIT - 1, DAY_SECONDS).counted_in(metrics),
            lock: counter("two-factor-lock", 1, LOCK_SECONDS).counted_in(metrics),
            db: db.clone(),
        }
    }

    /// Reserves the check of one code of `user_id`, before the code is
    /// looked at.
    pub async fn reserve(&self, user_id: i64) -> Result<Reserved, DbError> {
        if failures_in_row(&self.db, user_id).await? >= i64::from(IN_ROW_LIMIT) {
            self.window.count_refusal();
            return Ok(Reserved::Refused {
                retry_after: CLOSED_RETRY_SECONDS,
            });
        }
        if let Some(retry_after) = self.lock.refuses(&self.lock.user_key(user_id)).await? {
            return Ok(Reserved::Refused { retry_after });
        }
        Ok(match self.window.try_begin(&self.window.user_key(user_id)).await? {
            Begun::Check(check) => Reserved::Check(Box::new(SecondFactorCheck {
                check,
                limit: self.clone(),
                user_id,
            })),
            Begun::Refused { retry_after, .. } => Reserved::Refused { retry_after },
        })
    }

    /// Seconds until the second step of `user_id` opens again, while it is
    /// locked.
    async fn locked(&self, user_id: i64) -> Result<Option<u64>, DbError> {
        self.lock.exhausted(&self.lock.user_key(user_id)).await
    }
}

impl SecondFactorCheck {
    /// The code was wrong: counted in the window and in the day.
    pub async fn failed(self: Box<Self>) -> Result<Failure, DbError> {
        let Self {
            check,
            limit,
            user_id,
        } = *self;
        check.failed().await?;
        let in_row = count_failure_in_row(&limit.db, user_id).await?;
        match in_row.cmp(&i64::from(IN_ROW_LIMIT)) {
            std::cmp::Ordering::Equal => return Ok(Failure::Closed),
            std::cmp::Ordering::Greater => {
                return Ok(Failure::Counted {
                    spent: Some(CLOSED_RETRY_SECONDS),
                })
            }
            _ => {}
        }
        let day_key = limit.day.user_key(user_id);
        if let Attempt::Refused { first: true, .. } = limit.day.hit(&day_key).await? {
            limit.lock.record(&limit.lock.user_key(user_id)).await?;
            limit.day.clear(&day_key).await?;
            let retry_after = limit.locked(user_id).await?.unwrap_or(u64::from(LOCK_SECONDS));
            return Ok(Failure::LockedOut { retry_after });
        }
        let spent = match limit.locked(user_id).await? {
            Some(retry_after) => Some(retry_after),
            None => limit.window.exhausted(&limit.window.user_key(user_id)).await?,
        };
        Ok(Failure::Counted { spent })
    }

    /// The code was right: the window's counter and the row of failures
    /// are cleared (the day's is not: a right code now and then does not buy
    /// more guesses).
    async fn succeeded(self: Box<Self>) -> Result<(), DbError> {
        clear_failures_in_row(&self.limit.db, self.user_id).await?;
        self.check.succeeded().await
    }
}

/// One answer to a pending sign-in's second step.
pub enum Answer<'a> {
    /// A TOTP code from the authenticator app.
    Code(&'a str),
    /// One of the user's recovery codes.
    RecoveryCode(&'a str),
    /// A passkey's answer to the challenge kept for this second step.
    Passkey {
        /// The authenticator's `PublicKeyCredential`, as the browser sent it.
        credential: &'a Value,
        /// The challenge it answers, taken from the session.
        assertion: Assertion,
    },
    /// An answer with nothing to check it against (a passkey's, with no
    /// challenge kept for this second step): wrong.
    Unchallenged,
}

/// What a reserved check of one answer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Right: the window's counter and the row of failures are cleared.
    Passed {
        /// A recovery code of an earlier, weaker set was spent: the user is
        /// to be asked to renew the set.
        renew_recovery_codes: bool,
    },
    /// Wrong, and counted.
    Refused {
        /// What counting it did.
        failure: Failure,
        /// The passkey (`gatehouse_passkeys.id`) whose signature counter
        /// went backwards, when that was why: worth recording.
        counter_went_back: Option<i64>,
    },
}

/// Why an answer could not be checked at all (the reservation then counts
/// as a failure).
#[derive(Debug, thiserror::Error)]
pub enum SecondStepError {
    /// Two-factor sign-in could not check it.
    #[error(transparent)]
    TwoFactor(#[from] TwoFactorError),
    /// Passkeys could not check it (off, or a record that does not read).
    #[error(transparent)]
    Passkey(#[from] PasskeyError),
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DbError),
}

impl SecondFactorCheck {
    /// Checks `answer` to the second step of this check's user, begun under
    /// credential epoch `epoch`, and reports how it went.
    pub async fn answer(
        self: Box<Self>,
        two_factor: &TwoFactor,
        passkeys: &Passkeys,
        epoch: Epoch,
        answer: Answer<'_>,
    ) -> Result<Verdict, SecondStepError> {
        let user_id = self.user_id;
        let checked = match answer {
            Answer::Code(code) => two_factor
                .verify_sign_in(user_id, epoch, code)
                .await
                .map(|()| false),
            Answer::RecoveryCode(code) => two_factor
                .use_recovery_code(user_id, epoch, code)
                .await
                .map(|spent| spent.renew),
            Answer::Unchallenged => return self.refused(None).await,
            Answer::Passkey {
                credential,
                assertion,
            } => {
                if !assertion.is_second_step_of(user_id) {
                    return self.refused(None).await;
                }
                match passkeys.finish_second_step(credential, assertion).await {
                    Ok(_) => Ok(false),
                    Err(PasskeyError::Refused) => return self.refused(None).await,
                    Err(PasskeyError::CounterWentBack { passkey_id, .. }) => {
                        return self.refused(Some(passkey_id)).await
                    }
                    Err(other) => return Err(other.into()),
                }
            }
        };
        match checked {
            Ok(renew_recovery_codes) => {
                self.succeeded().await?;
                Ok(Verdict::Passed {
                    renew_recovery_codes,
                })
            }
            Err(TwoFactorError::WrongCode) => self.refused(None).await,
            Err(other) => Err(other.into()),
        }
    }

    /// Checks the first code of the user's pending enrolment: the code to
    /// turn two-factor sign-in on with, or what counting a wrong one did.
    pub async fn enrolment_code(
        self: Box<Self>,
        two_factor: &TwoFactor,
        code: &str,
    ) -> Result<Result<EnrolmentCode, Failure>, SecondStepError> {
        match two_factor.check_enrolment(self.user_id, code).await {
            Ok(code) => {
                self.succeeded().await?;
                Ok(Ok(code))
            }
            Err(TwoFactorError::WrongCode) => Ok(Err(self.failed().await?)),
            Err(other) => Err(other.into()),
        }
    }

    /// A wrong answer, counted.
    async fn refused(self: Box<Self>, counter_went_back: Option<i64>) -> Result<Verdict, SecondStepError> {
        Ok(Verdict::Refused {
            failure: self.failed().await?,
            counter_went_back,
        })
    }
}
