//! Sudo mode: when the signed-in user last proved who they are — a sign-in
//! by password, passkey or provider (a remember-me recall is none), or
//! `POST /auth/confirm` — kept in the server-side session, and the window
//! after it (`session.reauth_minutes`) in which the account's sensitive
//! changes go without the password.

use serde_json::json;

use super::Session;
use crate::clock::unix_now;

/// Where the session keeps the last proof: `{"user": id, "at": seconds}`.
const KEY: &str = "reauth";
/// Where it keeps the last fresh proof asked for on purpose (a passkey
/// assertion, a provider's sign-in with `prompt=login`), in the same shape.
const FRESH_KEY: &str = "reauth.fresh";

/// Notes that `user_id` proved who they are now, on `session`.
pub fn proven(session: &Session, user_id: i64) {
    session.insert(KEY, json!({"user": user_id, "at": unix_now()}));
}

/// Notes that `user_id` made a fresh proof now, on `session`, asked for
/// on purpose: a passkey assertion or a provider's sign-in with
/// `prompt=login` whose `auth_time` is recent. A plain sign-in is none.
pub fn proven_afresh(session: &Session, user_id: i64) {
    session.insert(FRESH_KEY, json!({"user": user_id, "at": unix_now()}));
}

/// Whether `user_id` made a fresh proof on `session` under `seconds` ago.
pub fn fresh(session: &Session, user_id: i64, seconds: i64) -> bool {
    let Some(proof) = session.get(FRESH_KEY) else {
        return false;
    };
    let at = proof["at"].as_i64().unwrap_or(i64::MIN);
    proof["user"].as_i64() == Some(user_id) && unix_now() < at.saturating_add(seconds)
}

/// When the window of `user_id`'s last proof on `session` closes (Unix
/// seconds), while it is open; `minutes` long.
pub fn open_until(session: &Session, user_id: i64, minutes: u32) -> Option<i64> {
    let proof = session.get(KEY)?;
    if proof["user"].as_i64() != Some(user_id) {
        return None;
    }
    let until = proof["at"].as_i64()? + i64::from(minutes) * 60;
    (unix_now() < until).then_some(until)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_provers_and_closes() {
        let session = Session::default();
        assert_eq!(open_until(&session, 7, 10), None);
        proven(&session, 7);
        let until = open_until(&session, 7, 10).expect("open");
        assert!((until - unix_now() - 600).abs() <= 1);
        assert_eq!(open_until(&session, 8, 10), None, "another user's proof");
        session.insert(KEY, json!({"user": 7, "at": unix_now() - 601}));
        assert_eq!(open_until(&session, 7, 10), None, "closed");
    }

    #[test]
    fn a_fresh_proof_is_its_own_and_not_a_sign_in() {
        let session = Session::default();
        proven(&session, 7);
        assert!(!fresh(&session, 7, 300), "a sign-in's window is no fresh proof");
        proven_afresh(&session, 7);
        assert!(fresh(&session, 7, 300));
        assert!(!fresh(&session, 8, 300), "another user's proof");
        session.insert(FRESH_KEY, json!({"user": 7, "at": unix_now() - 301}));
        assert!(!fresh(&session, 7, 300), "too old");
    }
}
