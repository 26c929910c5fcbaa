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

/// Notes that `user_id` proved who they are now, on `session`.
pub fn proven(session: &Session, user_id: i64) {
    session.insert(KEY, json!({"user": user_id, "at": unix_now()}));
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
}
