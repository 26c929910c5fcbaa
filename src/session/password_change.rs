//! A session whose user must choose a new password before anything else:
//! their password was found in the breached-password file
//! (`users.password_breached_at`). Such a session may open only the change
//! screen, post its answer and sign out; it has ten minutes to do so, from
//! the first request that saw the mark, and then it ends.
//!
//! Only the session whose own sign-in dispensed the change (by password,
//! passkey or provider; never a remember-me recall), within those ten
//! minutes, may set the new password without the current one
//! ([`without_current_password`]): any other session of a marked user — a
//! recall, one that was open when the mark was set, a copy of a cookie —
//! must prove it knows the current password too.

use serde_json::json;

use super::Session;
use crate::clock::unix_now;

const KEY: &str = "password_change.until";
/// Until when (Unix seconds) this session's own sign-in lets it change the
/// password without the current one.
const SIGNED_IN_KEY: &str = "password_change.signed_in_until";

/// How long a session may wait before it chooses a new password.
pub const LIFETIME_SECONDS: i64 = 10 * 60;

/// The paths a session that must change its password may still use: the
/// change screen, the answer's `POST` and the sign-out (its confirm screen
/// and its `POST`). The screens' table holds the same paths (a test in
/// `routes/` checks they agree).
pub(crate) const OPEN_PATHS: [&str; 3] = [
    "/login/change-password",
    "/auth/intents/password-change",
    "/logout",
];

/// Where a session of a marked user stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// The new password is still to come, in time.
    Pending,
    /// The ten minutes passed: the session ends.
    Lapsed,
}

/// A sign-in of a marked user dispensed the change on `session`: its ten
/// minutes start again, and within them this session may set the new
/// password without the current one.
pub(crate) fn require(session: &Session) {
    let until = unix_now() + LIFETIME_SECONDS;
    session.insert(KEY, json!(until));
    session.insert(SIGNED_IN_KEY, json!(until));
}

/// Where `session`, whose user is marked, stands; the first request that
/// sees the mark starts the ten minutes (a session recalled by a remember-me
/// cookie, or one that was open when the mark was set). Such a session did
/// not sign in to the change itself.
pub(crate) fn due(session: &Session) -> Due {
    match session.get(KEY).and_then(|until| until.as_i64()) {
        Some(until) if until <= unix_now() => Due::Lapsed,
        Some(_) => Due::Pending,
        None => {
            session.insert(KEY, json!(unix_now() + LIFETIME_SECONDS));
            Due::Pending
        }
    }
}

/// Whether `session` may set the new password without the current one:
/// its own sign-in dispensed the change, under ten minutes ago.
pub(crate) fn without_current_password(session: &Session) -> bool {
    session
        .get(SIGNED_IN_KEY)
        .and_then(|until| until.as_i64())
        .is_some_and(|until| unix_now() < until)
}

/// The new password is set: the session goes on as any other.
pub(crate) fn lift(session: &Session) {
    session.remove(KEY);
    session.remove(SIGNED_IN_KEY);
}

/// Whether a session that must change its password may use `path`.
pub(crate) fn open_to(path: &str) -> bool {
    OPEN_PATHS.contains(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_minutes_from_the_first_sight_then_the_session_lapses() {
        let session = Session::default();
        assert_eq!(due(&session), Due::Pending, "the first sight starts the clock");
        let until = session.get(KEY).and_then(|v| v.as_i64()).expect("started");
        assert!((until - unix_now() - LIFETIME_SECONDS).abs() <= 1);
        session.insert(KEY, json!(unix_now() - 1));
        assert_eq!(due(&session), Due::Lapsed);
        require(&session);
        assert_eq!(due(&session), Due::Pending);
        lift(&session);
        assert!(session.get(KEY).is_none());
    }

    #[test]
    fn only_the_session_that_signed_in_to_the_change_skips_the_current_password() {
        let seen = Session::default();
        assert_eq!(due(&seen), Due::Pending);
        assert!(!without_current_password(&seen), "a recall or an open session");
        let signed_in = Session::default();
        require(&signed_in);
        assert!(without_current_password(&signed_in));
        signed_in.insert(SIGNED_IN_KEY, json!(unix_now() - 1));
        assert!(!without_current_password(&signed_in), "after ten minutes");
        require(&signed_in);
        lift(&signed_in);
        assert!(!without_current_password(&signed_in), "nothing is due");
    }

    #[test]
    fn only_the_change_and_the_sign_out_stay_open() {
        assert!(open_to("/login/change-password"));
        assert!(open_to("/auth/intents/password-change"));
        assert!(open_to("/logout"));
        for closed in ["/account", "/auth/password", "/auth/intents/org-setup", "/odata/Items"] {
            assert!(!open_to(closed), "{closed}");
        }
    }
}
