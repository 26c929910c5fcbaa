//! The user code of the device authorization grant (RFC 8628 §6.1): eight
//! characters a person types on another device, from an alphabet without
//! look-alikes (no vowels, so no words; no digits, so no `0`/`O` or
//! `1`/`I`), shown as `XXXX-XXXX`.

use std::fmt;

use rand::Rng;

use super::sha256_hex;

/// The characters a user code is made of: twenty consonants, 20⁸ ≈ 2.6·10¹⁰
/// codes (34.5 bits), as RFC 8628 §6.1 suggests.
const ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Characters in a user code.
const LENGTH: usize = 8;

/// A user code, read as typed: case, dashes and spaces do not matter.
#[derive(Clone, PartialEq, Eq)]
pub struct UserCode(String);

impl UserCode {
    /// A fresh code from the operating system's generator.
    pub fn generate() -> Self {
        let mut rng = rand::rngs::OsRng;
        let code = (0..LENGTH)
            .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
            .collect();
        Self(code)
    }

    /// The code `typed` names, if it is one: eight characters of the
    /// alphabet in any case, with dashes and white space anywhere.
    pub fn parse(typed: &str) -> Option<Self> {
        if typed.len() > 4 * LENGTH {
            return None;
        }
        let code: String = typed
            .chars()
            .filter(|c| *c != '-' && !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let valid = code.len() == LENGTH && code.bytes().all(|b| ALPHABET.contains(&b));
        valid.then_some(Self(code))
    }

    /// SHA-256 of the code without its dash, hex: what the database keeps.
    pub fn digest(&self) -> String {
        sha256_hex(&self.0)
    }
}

/// `XXXX-XXXX`, as a person reads it.
impl fmt::Display for UserCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (left, right) = self.0.split_at(LENGTH / 2);
        write!(f, "{left}-{right}")
    }
}

/// Never the code itself in a log.
impl fmt::Debug for UserCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UserCode(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::UserCode;

    #[test]
    fn a_code_is_read_whatever_its_case_and_dashes() {
        let code = UserCode::generate();
        let shown = code.to_string();
        assert_eq!(shown.len(), 9);
        assert_eq!(&shown[4..5], "-");
        assert_eq!(UserCode::parse(&shown), Some(code.clone()));
        assert_eq!(UserCode::parse(&shown.to_lowercase()), Some(code.clone()));
        assert_eq!(UserCode::parse(&format!(" {} ", shown.replace('-', " "))), Some(code));
    }

    #[test]
    fn look_alikes_and_wrong_lengths_are_no_code() {
        for typed in ["BCDF-GHJ", "BCDF-GHJKL", "BCDF-GHJ0", "BCDF-GHJO", "BCDF-GHJ1", "BCDF-GHJA", "", "ÄBCD-FGHJ"] {
            assert_eq!(UserCode::parse(typed), None, "{typed}");
        }
        assert!(UserCode::parse("bcdf ghjk").is_some());
    }
}
