//! A new password that satisfies the policy.

use secrecy::{ExposeSecret, SecretString};

use crate::config::HashAlgorithm;

/// The longest password accepted, in characters.
pub const MAX_PASSWORD_CHARS: usize = 128;
/// The most bytes of a password bcrypt reads.
pub const BCRYPT_MAX_BYTES: usize = 72;

/// Why a proposed password was refused; each is its own validation code.
// The names read as the rules they stand for (too short, too long, too common).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordRejection {
    /// Shorter than `auth.password_min_length`.
    TooShort,
    /// Longer than 128 characters.
    TooLong,
    /// Among the most common passwords, or easily guessed.
    TooCommon,
    /// In the breached-password file (`auth.breached_passwords`).
    Breached,
}

impl PasswordRejection {
    /// The wire code (`min_length`, `max_length`, `too_common`,
    /// `breached`).
    pub fn code(self) -> &'static str {
        match self {
            Self::TooShort => "min_length",
            Self::TooLong => "max_length",
            Self::TooCommon => "too_common",
            Self::Breached => "breached",
        }
    }
}

/// A password that passed the policy, exactly as typed. It has no `Debug` or
/// `Display`, so it cannot reach a log line.
pub struct Password(SecretString);

impl Password {
    /// Checks a new password against the policy: `min_chars..=128` characters
    /// (counted as typed, nothing trimmed) and a zxcvbn score of at least 3,
    /// which also refuses every entry of zxcvbn's common-password lists.
    /// `hints` (the e-mail, the name) count against the password.
    ///
    /// ```
    /// use gatehouse::domain::{Password, PasswordRejection};
    /// assert!(Password::parse("correct horse battery staple".into(), 12, &[]).is_ok());
    /// assert_eq!(Password::parse("password1234".into(), 12, &[]).err(), Some(PasswordRejection::TooCommon));
    /// ```
    pub fn parse(raw: String, min_chars: usize, hints: &[&str]) -> Result<Self, PasswordRejection> {
        let chars = raw.chars().count();
        if chars < min_chars {
            return Err(PasswordRejection::TooShort);
        }
        if chars > MAX_PASSWORD_CHARS {
            return Err(PasswordRejection::TooLong);
        }
        let score = zxcvbn::zxcvbn(&raw, hints).score();
        if (score as u8) < 3 {
            return Err(PasswordRejection::TooCommon);
        }
        Ok(Self(SecretString::from(raw)))
    }

    /// Checks that `algorithm` can hash the password whole: bcrypt reads
    /// only the first 72 bytes, so a longer password is refused
    /// ([`PasswordRejection::TooLong`]) instead of being cut.
    ///
    /// ```
    /// use gatehouse::config::HashAlgorithm;
    /// use gatehouse::domain::{Password, PasswordRejection};
    /// let long = "correct horse battery staple ".repeat(3);
    /// let password = Password::parse(long, 12, &[]).unwrap();
    /// assert_eq!(password.hashable_by(HashAlgorithm::Bcrypt).err(), Some(PasswordRejection::TooLong));
    /// ```
    pub fn hashable_by(self, algorithm: HashAlgorithm) -> Result<Self, PasswordRejection> {
        match algorithm {
            HashAlgorithm::Bcrypt if self.expose().len() > BCRYPT_MAX_BYTES => {
                Err(PasswordRejection::TooLong)
            }
            HashAlgorithm::Bcrypt | HashAlgorithm::Argon2id => Ok(self),
        }
    }

    /// The password, for hashing only.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}
