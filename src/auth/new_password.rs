//! What a new password must pass wherever one is set (a reset, a change,
//! the command line): the policy of `auth` and, when
//! `auth.breached_passwords` names a file, the breached-password check.

use std::sync::Arc;

use crate::auth::breached::{BreachedError, BreachedPasswords};
use crate::config::{AuthSettings, HashAlgorithm};
use crate::domain::{Password, PasswordRejection};

/// The rules a new password is held to, made once from the settings.
#[derive(Clone)]
pub struct NewPasswords {
    min_chars: usize,
    hash: HashAlgorithm,
    /// The mapped breached-password file, when one is configured.
    breached: Option<Arc<BreachedPasswords>>,
}

impl NewPasswords {
    /// The rules of `auth`, opening the file `auth.breached_passwords`
    /// names; an error names the key.
    pub fn new(auth: &AuthSettings) -> Result<Self, String> {
        let breached = match &auth.breached_passwords {
            Some(path) => Some(Arc::new(BreachedPasswords::open(path).map_err(
                |e: BreachedError| format!("`auth.breached_passwords` ({}): {e}", path.display()),
            )?)),
            None => None,
        };
        Ok(Self {
            min_chars: auth.password_min_length,
            hash: auth.hash,
            breached,
        })
    }

    /// `raw` as a new password: the policy first (length, `too_common`),
    /// then whether its algorithm hashes it whole, then the breached list.
    /// `hints` (the address, the name) count against it.
    pub fn check(&self, raw: String, hints: &[&str]) -> Result<Password, PasswordRejection> {
        let password = Password::parse(raw, self.min_chars, hints)?.hashable_by(self.hash)?;
        if self.is_listed(password.expose()) {
            return Err(PasswordRejection::Breached);
        }
        Ok(password)
    }
}

impl NewPasswords {
    /// Whether `raw` is in the breached-password file (never, without one):
    /// a sign-in with such a password must choose a new one.
    pub fn is_listed(&self, raw: &str) -> bool {
        self.breached.as_ref().is_some_and(|b| b.contains(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_cannot_be_opened_is_named_with_its_key() {
        let auth = AuthSettings {
            breached_passwords: Some("/nonexistent/breached.bin".into()),
            ..AuthSettings::default()
        };
        let error = NewPasswords::new(&auth).err().expect("refused");
        assert!(error.starts_with("`auth.breached_passwords`"), "{error}");
        assert!(error.contains("/nonexistent/breached.bin"), "{error}");
    }

    #[test]
    fn without_a_file_the_policy_alone_applies() {
        let rules = NewPasswords::new(&AuthSettings::default()).expect("no file");
        assert!(rules.check("Quixotic-Lantern-Harbour-91".into(), &[]).is_ok());
        assert_eq!(
            rules.check("password1234".into(), &[]).err(),
            Some(PasswordRejection::TooCommon)
        );
    }
}
