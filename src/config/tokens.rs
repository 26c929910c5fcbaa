//! `[tokens]` keys: the personal access tokens a person makes from the
//! account screen.

use serde::Deserialize;

/// `[tokens]` keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct TokensSettings {
    /// Whether a person may make a token that never expires
    /// (`"expires_days": null`); otherwise 7, 30 or 90 days.
    pub allow_no_expiry: bool,
    /// Whether a reset password ends every token of its account.
    pub revoke_on_password_reset: bool,
}

impl Default for TokensSettings {
    fn default() -> Self {
        Self {
            allow_no_expiry: false,
            revoke_on_password_reset: true,
        }
    }
}
