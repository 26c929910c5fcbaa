//! Recovery codes: ten single-use codes shown once when two-factor sign-in is
//! turned on (or renewed), for when the authenticator is lost.
//!
//! A code is 120 random bits in Crockford's base32, lower case, in six
//! groups (`7kq2-m9xd-4hta-0wce-r3vn-8pzb`): no `i`, `l`, `o` or `u` to
//! misread. Only the SHA-256 of a code is stored, as for API tokens: at 120
//! bits (ASVS 5.0 6.5.2 asks for at least 112 where the hash is unsalted)
//! the hash is as hard to reverse as the code is to guess. A code is matched
//! ignoring case, spaces and dashes, reading `o` as `0` and `i` or `l` as
//! `1`. Codes of the 80-bit sets issued before keep working until the set
//! is renewed, so that no user loses the codes they wrote down.

use rand::Rng;
use secrecy::{ExposeSecret, SecretString};

use crate::domain::sha256_hex;

/// Codes in a set.
pub const CODES: usize = 10;

/// Crockford's base32 alphabet, lower case.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Characters in a code, without its dashes: 24 × 5 bits.
const LENGTH: usize = 24;

/// Characters in a code of the 80-bit sets issued before: 16 × 5 bits.
const EARLIER_LENGTH: usize = 16;

/// Characters between two dashes.
const GROUP: usize = 4;

/// A new set of recovery codes, to be shown once. No `Debug` output of the
/// codes.
pub struct RecoveryCodes(Vec<SecretString>);

impl std::fmt::Debug for RecoveryCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecoveryCodes({} codes)", self.0.len())
    }
}

impl RecoveryCodes {
    /// Ten fresh codes from the operating system's generator.
    pub fn generate() -> Self {
        let mut rng = rand::rngs::OsRng;
        let codes = (0..CODES)
            .map(|_| {
                let mut code = String::with_capacity(LENGTH + LENGTH / GROUP);
                for at in 0..LENGTH {
                    if at > 0 && at % GROUP == 0 {
                        code.push('-');
                    }
                    code.push(char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]));
                }
                SecretString::from(code)
            })
            .collect();
        Self(codes)
    }

    /// The codes as the user is to see them.
    pub fn expose(&self) -> Vec<&str> {
        self.0.iter().map(|code| code.expose_secret()).collect()
    }

    /// What the database keeps of each code.
    pub fn hashes(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|code| hash(code.expose_secret()))
            .collect()
    }
}

/// The stored form of a code as typed: the SHA-256 (hex) of its normalised
/// form, or `None` if it cannot be a recovery code at all.
pub fn hash(typed: &str) -> Option<String> {
    normalise(typed).map(|code| sha256_hex(&code))
}

/// `typed` without spaces and dashes, in lower case, with Crockford's
/// look-alikes read as digits, if that is 24 characters of the alphabet
/// (or 16, a code of an earlier set).
fn normalise(typed: &str) -> Option<String> {
    let mut code = String::with_capacity(LENGTH);
    for c in typed.chars().filter(|c| !c.is_whitespace() && *c != '-') {
        let c = match c.to_ascii_lowercase() {
            'o' => '0',
            'i' | 'l' => '1',
            c => c,
        };
        if !c.is_ascii() || !ALPHABET.contains(&(c as u8)) || code.len() == LENGTH {
            return None;
        }
        code.push(c);
    }
    (code.len() == LENGTH || code.len() == EARLIER_LENGTH).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_ten_distinct_codes_in_six_groups_of_crockford_base32() {
        let set = RecoveryCodes::generate();
        let codes = set.expose();
        assert_eq!(codes.len(), 10);
        for code in &codes {
            let groups: Vec<&str> = code.split('-').collect();
            assert_eq!(groups.len(), 6, "{code}: 6 × 4 × 5 = 120 bits");
            for group in groups {
                assert_eq!(group.len(), 4, "{code}");
                assert!(group.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
            }
            for confusing in ['i', 'l', 'o', 'u'] {
                assert!(!code.contains(confusing), "{code}");
            }
        }
        let mut distinct = codes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 10);
        assert_ne!(codes, RecoveryCodes::generate().expose());
    }

    #[test]
    fn every_character_of_the_alphabet_turns_up() {
        let mut seen = [false; 32];
        for _ in 0..20 {
            for code in RecoveryCodes::generate().expose() {
                for b in code.bytes().filter(|b| *b != b'-') {
                    let at = ALPHABET.iter().position(|a| *a == b).unwrap();
                    seen[at] = true;
                }
            }
        }
        assert!(seen.iter().all(|s| *s), "3200 draws cover 32 characters");
    }

    #[test]
    fn the_stored_form_is_the_sha256_of_the_code_without_dashes() {
        let set = RecoveryCodes::generate();
        let hashes = set.hashes();
        assert_eq!(hashes.len(), 10);
        for (code, hash) in set.expose().iter().zip(&hashes) {
            assert_eq!(hash.len(), 64);
            assert!(hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert_eq!(*hash, sha256_hex(&code.replace('-', "")));
        }
    }

    #[test]
    fn typed_codes_match_ignoring_case_spaces_dashes_and_look_alikes() {
        let stored = hash("7kq2-m9xd-4hta-01ce").unwrap();
        for typed in [
            "7kq2-m9xd-4hta-01ce",
            "7KQ2-M9XD-4HTA-01CE",
            "7kq2m9xd4hta01ce",
            " 7kq2 m9xd 4hta 01ce ",
            "7kq2--m9xd-4hta-01ce",
            "7kq2-m9xd-4hta-OIce",
            "7kq2-m9xd-4hta-oLce",
        ] {
            assert_eq!(hash(typed).as_deref(), Some(stored.as_str()), "{typed:?}");
        }
        assert_ne!(hash("7kq2-m9xd-4hta-01cf").unwrap(), stored);
    }

    #[test]
    fn codes_of_the_earlier_80_bit_sets_still_match() {
        let stored = sha256_hex("7kq2m9xd4hta01ce");
        assert_eq!(hash("7kq2-m9xd-4hta-01ce").as_deref(), Some(stored.as_str()));
        let new = hash("7kq2-m9xd-4hta-01ce-r3vn-8pzb").unwrap();
        assert_eq!(new, sha256_hex("7kq2m9xd4hta01cer3vn8pzb"));
    }

    #[test]
    fn text_that_cannot_be_a_code_has_no_stored_form() {
        for typed in [
            "",
            "7kq2-m9xd-4hta-01ce-r3vn-8pz",
            "7kq2-m9xd-4hta-01ce-r3vn-8pzbb",
            "7kq2-m9xd-4hta-01ce-r3",
            "7kq2-m9xd-4hta-01c",
            "7kq2-m9xd-4hta-01cee",
            "7kq2-m9xd-4hta-01cu",
            "7kq2-m9xd-4hta-01c!",
            "7kq2-m9xd-4hta-01cé",
            "7kq2_m9xd_4hta_01ce",
        ] {
            assert_eq!(hash(typed), None, "{typed:?}");
        }
    }

    #[test]
    fn the_codes_have_no_debug_output() {
        let set = RecoveryCodes::generate();
        let printed = format!("{set:?}");
        assert_eq!(printed, "RecoveryCodes(10 codes)");
    }
}
