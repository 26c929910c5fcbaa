//! Two-factor sign-in with TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second
//! steps, one step of drift either way) and ten single-use recovery codes.
//!
//! [`TwoFactor`] is what the routes call: enrol, confirm with a first code,
//! check a code at sign-in, spend a recovery code, renew the codes, turn it
//! off. The secret is stored sealed with a key derived from the application's
//! `secret_key` ([`sealing`]); a time step is accepted at most once per user,
//! by the database ([`store::accept_step`]), so a code cannot be replayed,
//! not even on another instance.

pub mod key;
pub mod recovery;
pub mod sealing;
pub mod secret;
mod store;
pub mod verification;

#[cfg(test)]
pub(crate) mod test_db;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::auth::epoch::Epoch;
use crate::clock::unix_now;
use crate::db::{Db, DbError, Tx};

pub use recovery::RecoveryCodes;
pub use sealing::{SealingError, SealingKey};
pub use secret::TotpSecret;
pub use store::{
    clear_failures_in_row, count_failure_in_row, failures_in_row, reopen_second_step_in, State,
};

/// The issuer authenticator apps show beside the account.
pub const ISSUER: &str = "Gatehouse";

/// Why a two-factor operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum TwoFactorError {
    /// The code (or recovery code) is wrong, was used before, or is older
    /// than one already accepted.
    #[error("the code does not match")]
    WrongCode,
    /// No enrolment to confirm, or two-factor sign-in is not on.
    #[error("two-factor sign-in is not enabled")]
    NotEnrolled,
    /// Two-factor sign-in is on already; turn it off first.
    #[error("two-factor sign-in is already enabled")]
    AlreadyEnabled,
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] DbError),
    /// The stored secret does not open (another `secret_key`, or altered),
    /// or a new one could not be sealed.
    #[error("two-factor secret: {0}")]
    Sealing(#[from] SealingError),
    /// The `otpauth://` URL does not fit a QR code (an account name of
    /// hundreds of characters; an e-mail address always fits).
    #[error("the enrolment does not fit a QR code: {0}")]
    QrCode(#[from] qrcode::types::QrError),
}

/// What a user sees once, to set up an authenticator app: the secret to
/// type, the `otpauth://` URL and its QR code (an inline SVG element).
/// No `Debug` output.
pub struct Enrolment {
    secret: String,
    otpauth_url: String,
    qr_svg: String,
}

impl std::fmt::Debug for Enrolment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Enrolment(…)")
    }
}

impl Enrolment {
    /// What an app needs to know of `secret`, for the account `email`.
    fn of(secret: &TotpSecret, email: &str) -> Result<Self, TwoFactorError> {
        let otpauth_url = secret.otpauth_url(ISSUER, email);
        let qr_svg = secret::qr_svg(&otpauth_url)?;
        Ok(Self {
            secret: secret.base32(),
            otpauth_url,
            qr_svg,
        })
    }

    /// The secret in base32, for typing into an app.
    pub fn secret_base32(&self) -> &str {
        &self.secret
    }

    /// `otpauth://totp/<issuer>:<email>?secret=…`.
    pub fn otpauth_url(&self) -> &str {
        &self.otpauth_url
    }

    /// The QR code of the URL: an `<svg>` element, safe to embed as it is.
    pub fn qr_svg(&self) -> &str {
        &self.qr_svg
    }
}

/// A user's two-factor sign-in as the account screen shows it.
#[derive(Debug)]
pub enum Status {
    /// Off: nothing stored.
    Off,
    /// Enrolment begun, waiting for the first code from the app. Its key
    /// is not read back: it was shown once, when the enrolment began.
    Pending,
    /// On.
    On {
        /// Recovery codes not used yet.
        recovery_codes_left: u64,
        /// The codes are of an 80-bit set issued before: the user is asked
        /// to renew them.
        renew_recovery_codes: bool,
    },
}

/// A recovery code spent at sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    /// It was of an 80-bit set issued before: the user is asked to renew
    /// the set.
    pub renew: bool,
}

/// Two-factor sign-in over the database, with the key that seals secrets.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct TwoFactor {
    db: Db,
    key: Arc<SealingKey>,
}

impl TwoFactor {
    /// Two-factor sign-in on `db`, sealing with a key derived from
    /// `secret_key` (the application's key material, see
    /// [`key::application_key`]).
    pub fn new(db: Db, secret_key: &[u8]) -> Self {
        Self {
            db,
            key: Arc::new(SealingKey::derive(secret_key)),
        }
    }

    /// Begins (or begins again) an enrolment for the user with address
    /// `email`: a new secret, stored sealed and pending until
    /// [`TwoFactor::confirm`]. `AlreadyEnabled` while two-factor sign-in is on.
    pub async fn enrol(&self, user_id: i64, email: &str) -> Result<Enrolment, TwoFactorError> {
        if let State::Active { .. } = store::state(&self.db, user_id).await? {
            return Err(TwoFactorError::AlreadyEnabled);
        }
        let secret = TotpSecret::generate();
        let enrolment = Enrolment::of(&secret, email)?;
        let sealed = self.key.seal(user_id, &secret)?;
        if !store::begin(&self.db, user_id, &sealed).await? {
            return Err(TwoFactorError::AlreadyEnabled);
        }
        Ok(enrolment)
    }

    /// Where the user stands, for the account screen: off, an enrolment
    /// waiting for its first code (not its key), or on with how many
    /// recovery codes are left. One read of the user's row.
    pub async fn status(&self, user_id: i64) -> Result<Status, TwoFactorError> {
        Ok(match store::state(&self.db, user_id).await? {
            State::None => Status::Off,
            State::Pending { .. } => Status::Pending,
            State::Active { .. } => Status::On {
                recovery_codes_left: self.remaining_recovery_codes(user_id).await?,
                renew_recovery_codes: store::recovery_codes_are_earlier(&self.db, user_id).await?,
            },
        })
    }

    /// Checks the first code from the app of a pending enrolment (the
    /// caller reserved the check on the user's second-factor count). The
    /// answer turns it on with [`TwoFactor::activate`].
    pub(in crate::auth) async fn check_enrolment(
        &self,
        user_id: i64,
        code: &str,
    ) -> Result<EnrolmentCode, TwoFactorError> {
        self.check_enrolment_at(user_id, code, now()).await
    }

    async fn check_enrolment_at(
        &self,
        user_id: i64,
        code: &str,
        now: u64,
    ) -> Result<EnrolmentCode, TwoFactorError> {
        let sealed = match store::state(&self.db, user_id).await? {
            State::None => return Err(TwoFactorError::NotEnrolled),
            State::Active { .. } => return Err(TwoFactorError::AlreadyEnabled),
            State::Pending { sealed } => sealed,
        };
        let secret = self.key.open(user_id, &sealed)?;
        let step = verification::verify(&secret, code, now).ok_or(TwoFactorError::WrongCode)?;
        Ok(EnrolmentCode {
            user_id,
            step: step_value(step),
        })
    }

    /// Turns two-factor sign-in on, in `tx`, with the code
    /// [`TwoFactor::check_enrolment`] accepted, and answers the recovery
    /// codes (shown once, stored hashed). The code's time step counts as
    /// used.
    pub async fn activate(
        &self,
        tx: &mut Tx,
        code: EnrolmentCode,
    ) -> Result<RecoveryCodes, TwoFactorError> {
        let codes = RecoveryCodes::generate();
        if store::confirm_in(tx, code.user_id, code.step, &codes.hashes()).await? {
            return Ok(codes);
        }
        // Confirmed or turned off meanwhile.
        Err(match store::state(&self.db, code.user_id).await? {
            State::Active { .. } => TwoFactorError::AlreadyEnabled,
            State::None | State::Pending { .. } => TwoFactorError::NotEnrolled,
        })
    }

    /// Checks the enrolment code and turns two-factor sign-in on, in a
    /// transaction of its own.
    #[cfg(test)]
    async fn confirm_at(
        &self,
        user_id: i64,
        code: &str,
        now: u64,
    ) -> Result<RecoveryCodes, TwoFactorError> {
        let code = self.check_enrolment_at(user_id, code, now).await?;
        let mut tx = Tx::begin(&self.db).await?;
        let codes = self.activate(&mut tx, code).await?;
        tx.commit().await?;
        Ok(codes)
    }

    /// Checks a code at sign-in: right for now (± one step) and of a later
    /// step than any accepted before for this user.
    pub(in crate::auth) async fn verify_sign_in(
        &self,
        user_id: i64,
        epoch: Epoch,
        code: &str,
    ) -> Result<(), TwoFactorError> {
        self.verify_sign_in_at(user_id, epoch, code, now()).await
    }

    async fn verify_sign_in_at(
        &self,
        user_id: i64,
        epoch: Epoch,
        code: &str,
        now: u64,
    ) -> Result<(), TwoFactorError> {
        let State::Active { sealed, last_step } = store::state(&self.db, user_id).await? else {
            return Err(TwoFactorError::NotEnrolled);
        };
        let secret = self.key.open(user_id, &sealed)?;
        let step = verification::verify(&secret, code, now).ok_or(TwoFactorError::WrongCode)?;
        let step = step_value(step);
        if last_step.is_some_and(|last| last >= step) {
            return Err(TwoFactorError::WrongCode);
        }
        if !store::accept_step(&self.db, user_id, epoch, step).await? {
            return Err(TwoFactorError::WrongCode);
        }
        Ok(())
    }

    /// Spends one of the user's recovery codes in place of a TOTP code; the
    /// answer says whether the set is to be renewed.
    pub(in crate::auth) async fn use_recovery_code(
        &self,
        user_id: i64,
        epoch: Epoch,
        code: &str,
    ) -> Result<Spent, TwoFactorError> {
        let hash = recovery::hash(code).ok_or(TwoFactorError::WrongCode)?;
        if !store::use_recovery_code(&self.db, user_id, epoch, &hash).await? {
            return Err(TwoFactorError::WrongCode);
        }
        Ok(Spent {
            renew: store::recovery_codes_are_earlier(&self.db, user_id).await?,
        })
    }

    /// A new set of recovery codes for an active user, in `tx`; the old set
    /// stops working once it commits.
    pub async fn new_recovery_codes_in(
        &self,
        tx: &mut Tx,
        user_id: i64,
    ) -> Result<RecoveryCodes, TwoFactorError> {
        let codes = RecoveryCodes::generate();
        if store::replace_recovery_codes_in(tx, user_id, &codes.hashes()).await? {
            Ok(codes)
        } else {
            Err(TwoFactorError::NotEnrolled)
        }
    }

    /// [`TwoFactor::new_recovery_codes_in`] in a transaction of its own.
    #[cfg(test)]
    async fn new_recovery_codes(&self, user_id: i64) -> Result<RecoveryCodes, TwoFactorError> {
        let mut tx = Tx::begin(&self.db).await?;
        let codes = self.new_recovery_codes_in(&mut tx, user_id).await?;
        tx.commit().await?;
        Ok(codes)
    }

    /// How many of the user's recovery codes are left.
    pub async fn remaining_recovery_codes(&self, user_id: i64) -> Result<u64, TwoFactorError> {
        Ok(store::remaining_recovery_codes(&self.db, user_id).await?)
    }

    /// Turns two-factor sign-in off (or drops a pending enrolment), in
    /// `tx`: the secret and the recovery codes are deleted. `NotEnrolled` if
    /// there was nothing to turn off.
    pub async fn disable_in(&self, tx: &mut Tx, user_id: i64) -> Result<(), TwoFactorError> {
        if store::disable_in(tx, user_id).await? {
            Ok(())
        } else {
            Err(TwoFactorError::NotEnrolled)
        }
    }

    /// [`TwoFactor::disable_in`] in a transaction of its own.
    #[cfg(test)]
    async fn disable(&self, user_id: i64) -> Result<(), TwoFactorError> {
        let mut tx = Tx::begin(&self.db).await?;
        self.disable_in(&mut tx, user_id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Whether sign-in needs a second factor: only a confirmed enrolment
    /// counts.
    pub async fn is_enabled(&self, user_id: i64) -> Result<bool, TwoFactorError> {
        Ok(matches!(
            store::state(&self.db, user_id).await?,
            State::Active { .. }
        ))
    }
}

/// An enrolment's first code, checked: [`TwoFactor::activate`] turns
/// two-factor sign-in on with it.
#[derive(Debug)]
pub struct EnrolmentCode {
    user_id: i64,
    step: i64,
}

/// The current time in Unix seconds.
fn now() -> u64 {
    u64::try_from(unix_now()).unwrap_or_default()
}

/// A time step as stored (`BIGINT`): steps of any real clock fit.
fn step_value(step: u64) -> i64 {
    i64::try_from(step).unwrap_or(i64::MAX)
}
