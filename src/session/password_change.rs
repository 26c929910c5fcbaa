//! A session whose user must choose a new password before anything else:
//! their password was found in the breached-password file
//! (`users.password_breached_at`). Such a session may open only the change
//! screen, post its answer and sign out; it has ten minutes to do so, from
//! the first request that saw the mark, and then it ends.

use serde_json::json;

use super::Session;
use crate::clock::unix_now;

const KEY: &str = "password_change.until";

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

/// Starts the ten minutes again (a sign-in of a marked user).
pub(crate) fn require(session: &Session) {
    session.insert(KEY, json!(unix_now() + LIFETIME_SECONDS));
}

/// Where `session`, whose user is marked, stands; the first request that
/// sees the mark starts the ten minutes (a session recalled by a remember-me
/// cookie, or one that was open when the mark was set).
pub(crate) fn due(session: &Session) -> Due {
    match session.get(KEY).and_then(|until| until.as_i64()) {
        Some(until) if until <= unix_now() => Due::Lapsed,
        Some(_) => Due::Pending,
        None => {
            require(session);
            Due::Pending
        }
    }
}

/// The new password is set: the session goes on as any other.
pub(crate) fn lift(session: &Session) {
    session.remove(KEY);
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
    fn only_the_change_and_the_sign_out_stay_open() {
        assert!(open_to("/login/change-password"));
        assert!(open_to("/auth/intents/password-change"));
        assert!(open_to("/logout"));
        for closed in ["/account", "/auth/password", "/auth/intents/org-setup", "/odata/Items"] {
            assert!(!open_to(closed), "{closed}");
        }
    }
}
