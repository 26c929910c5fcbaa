//! The sign-in that waits for its second factor, kept in the session for
//! five minutes: not signed in, no intent yet. It belongs to the credential
//! epoch it began in ([`epoch`]): a password change or reset, the user's
//! sessions ended or a two-factor change void it, on every instance.

use serde_json::json;

use crate::auth::epoch::{self, Epoch};
use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::session::Session;

const KEY: &str = "two_factor.pending";

/// How long a pending sign-in waits for its code.
pub const LIFETIME_SECONDS: i64 = 5 * 60;

/// A password (or a provider) was right; the user's second factor is
/// still to come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// `users.id`.
    pub user_id: i64,
    /// Whether the sign-in asked to be remembered.
    pub remember: bool,
    /// The user's credential epoch when the password was checked.
    pub epoch: Epoch,
    /// The OpenID provider that proved the first factor, when not the
    /// password.
    pub provider: Option<String>,
    /// The password that proved the first factor is in the
    /// breached-password file: the user is marked once the second step
    /// passes, not before.
    pub breached: bool,
}

/// Keeps `pending` in `session` for five minutes.
pub fn begin(session: &Session, pending: &Pending) {
    let until = unix_now() + LIFETIME_SECONDS;
    session.insert(
        KEY,
        json!({"user_id": pending.user_id, "remember": pending.remember, "until": until,
               "epoch": pending.epoch.0, "provider": pending.provider,
               "breached": pending.breached}),
    );
}

/// The pending sign-in of `session`, if one is there and not expired
/// (an expired one is dropped). Its epoch is not checked: see [`current`].
pub fn of(session: &Session) -> Option<Pending> {
    let value = session.get(KEY)?;
    let until = value["until"].as_i64().unwrap_or_default();
    let found = value["user_id"].as_i64().map(|user_id| Pending {
        user_id,
        remember: value["remember"].as_bool().unwrap_or_default(),
        epoch: Epoch(value["epoch"].as_i64().unwrap_or(-1)),
        provider: value["provider"].as_str().map(str::to_owned),
        breached: value["breached"].as_bool().unwrap_or_default(),
    });
    if until <= unix_now() || found.is_none() {
        session.remove(KEY);
        return None;
    }
    found
}

/// The pending sign-in of `session` if it is there, not expired, and its
/// user's credentials have not changed since it began; else it is dropped.
pub async fn current(db: &Db, session: &Session) -> Result<Option<Pending>, DbError> {
    let Some(pending) = of(session) else {
        return Ok(None);
    };
    if epoch::current(db, pending.user_id).await? != pending.epoch {
        end(session);
        return Ok(None);
    }
    Ok(Some(pending))
}

/// Drops the pending sign-in.
pub fn end(session: &Session) {
    session.remove(KEY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_sign_in_lasts_five_minutes_and_then_is_dropped() {
        let session = Session::default();
        let pending = Pending {
            user_id: 7,
            remember: true,
            epoch: Epoch(3),
            provider: Some("acme".to_owned()),
            breached: true,
        };
        begin(&session, &pending);
        assert_eq!(of(&session), Some(pending.clone()));
        let expired = unix_now() - 1;
        session.insert(KEY, json!({"user_id": 7, "remember": false, "until": expired}));
        assert_eq!(of(&session), None);
        assert!(session.get(KEY).is_none(), "an expired one is removed");
        begin(&session, &Pending { user_id: 8, provider: None, ..pending });
        end(&session);
        assert_eq!(of(&session), None);
    }
}
