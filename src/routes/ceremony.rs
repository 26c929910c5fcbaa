//! A passkey ceremony's server half (its challenge), kept in the session
//! for five minutes and used once: taking it removes it, whatever the
//! answer turns out to be, so a challenge never verifies twice.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;

use crate::clock::unix_now;
use crate::error::AuthError;
use crate::session::Session;

/// How long a challenge waits for the authenticator.
pub const LIFETIME_SECONDS: i64 = 5 * 60;

/// The ceremonies a session may have under way, one of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ceremony {
    /// Adding a passkey on the account screen.
    Registration,
    /// Signing in with a passkey alone.
    SignIn,
    /// Answering the second step with a passkey.
    SecondStep,
}

impl Ceremony {
    fn key(self) -> &'static str {
        match self {
            Self::Registration => "passkey.registration",
            Self::SignIn => "passkey.sign_in",
            Self::SecondStep => "passkey.second_step",
        }
    }

    /// Keeps `state` in `session`, replacing an earlier one of this kind.
    pub fn keep(self, session: &Session, state: &impl Serialize) -> Result<(), AuthError> {
        let state = serde_json::to_value(state).map_err(|e| AuthError::Internal(e.to_string()))?;
        session.insert(
            self.key(),
            json!({"until": unix_now() + LIFETIME_SECONDS, "state": state}),
        );
        Ok(())
    }

    /// Removes this kind's state from `session` and answers it if it was
    /// there and not expired.
    pub fn take<T: DeserializeOwned>(self, session: &Session) -> Option<T> {
        let kept = session.remove(self.key())?;
        if kept["until"].as_i64().unwrap_or_default() <= unix_now() {
            return None;
        }
        serde_json::from_value(kept["state"].clone()).ok()
    }
}
