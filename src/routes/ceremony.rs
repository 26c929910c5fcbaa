//! A passkey ceremony's server half (its challenge), kept in the session
//! for five minutes and used once: taking it removes it from the session and
//! claims its challenge in the database, so that an answer verifies at most
//! once even when several arrive at once, on any instance. Its browser half
//! is [`public_key`], the options every ceremony's route answers.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::auth::{Begun, CHALLENGE_SECONDS};
use crate::clock::unix_now;
use crate::domain::sha256_hex;
use crate::error::AuthError;
use crate::session::Session;
use crate::state::GatehouseState;

/// The ceremonies a session may have under way, one of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ceremony {
    /// Adding a passkey on the account screen.
    Registration,
    /// Signing in with a passkey alone.
    SignIn,
    /// Answering the second step with a passkey.
    SecondStep,
    /// Confirming who the signed-in user is (sudo mode).
    Confirm,
}

impl Ceremony {
    fn key(self) -> &'static str {
        match self {
            Self::Registration => "passkey.registration",
            Self::SignIn => "passkey.sign_in",
            Self::SecondStep => "passkey.second_step",
            Self::Confirm => "passkey.confirm",
        }
    }

    /// Keeps `state`, whose challenge `options` carry, in `session`,
    /// replacing an earlier one of this kind.
    pub fn keep(
        self,
        session: &Session,
        options: &Value,
        state: &impl Serialize,
    ) -> Result<(), AuthError> {
        let state = serde_json::to_value(state).map_err(|e| AuthError::Internal(e.to_string()))?;
        let challenge = options["publicKey"]["challenge"].as_str().unwrap_or_default();
        let until = unix_now() + i64::from(CHALLENGE_SECONDS);
        session.insert(
            self.key(),
            json!({"until": until, "challenge": sha256_hex(challenge), "state": state}),
        );
        Ok(())
    }

    /// Removes this kind's state from `session` and answers it if it was
    /// there, not expired, and its challenge not claimed before (by a
    /// request that read the same session at the same time).
    pub async fn take<T: DeserializeOwned>(
        self,
        gh: &GatehouseState,
        session: &Session,
    ) -> Result<Option<T>, AuthError> {
        let Some(kept) = session.remove(self.key()) else {
            return Ok(None);
        };
        if kept["until"].as_i64().unwrap_or_default() <= unix_now() {
            return Ok(None);
        }
        // One conditional statement takes the challenge's only slot; the
        // slot is then spent for the challenge's lifetime.
        let claims = &gh.throttles.passkey_challenges;
        let key = claims.subject_key(kept["challenge"].as_str().unwrap_or_default());
        let Begun::Check(claim) = claims.try_begin(&key).await? else {
            return Ok(None);
        };
        claim.failed().await?;
        Ok(serde_json::from_value(kept["state"].clone()).ok())
    }
}

/// `{"publicKey": …}` of webauthn-rs' options: the mediation is the
/// script's choice (a button, or the address field's autofill).
pub fn public_key(mut options: Value) -> Value {
    json!({ "publicKey": options["publicKey"].take() })
}
