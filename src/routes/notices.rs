//! The notices a screen shows from its query string (`?notice=`), after a
//! step a script drove and then sent the browser on: only these codes, so
//! the query never puts words of its own on a screen. It declares no route:
//! the sign-in screen and the account screen read it alike.

/// The notice `code` names, when it is one a screen may show from its
/// query string (after a script-driven step).
pub fn shown(code: Option<&str>) -> Option<&'static str> {
    const SHOWN: [&str; 9] = [
        "reset_success",
        "reset_link_sent",
        "other_sessions_ended",
        "two_factor_pending",
        "two_factor_disabled",
        "passkey_added",
        "passkey_removed",
        "oidc_unlinked",
        "identity_confirmed",
    ];
    SHOWN.into_iter().find(|shown| code == Some(*shown))
}
