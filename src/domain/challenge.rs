//! DBSC challenges: single-use, under five minutes old, issued to one
//! session for one purpose.
//!
//! A challenge is `<nonce>.<issued>.<tag>` in base64url: 16 random bytes,
//! the Unix second it was issued, and the first 16 bytes of an HMAC-SHA256
//! over the purpose, the session it was issued to and both, under a key
//! derived from the application's `secret_key`. Issuing one writes nothing
//! (the answers that pre-load one cost a hash); a challenge never issued,
//! issued to another session or for the other purpose fails the tag. Using
//! one claims it in `gatehouse_used_once` ([`crate::auth::once`]), one
//! `INSERT` the primary key lets succeed once, so two proofs answering the
//! same challenge at the same moment cannot both pass, on any engine.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// How long a challenge may be answered.
pub const CHALLENGE_SECONDS: i64 = 5 * 60;

/// What the key is derived for.
const PURPOSE: &[u8] = b"gatehouse dbsc challenge v1";
const NONCE_BYTES: usize = 16;
const TAG_BYTES: usize = 16;

/// What a challenge is for: registering a signed-in session, or refreshing
/// a bound one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `POST /auth/dbsc/register`, issued to the session (by its stored key).
    Register,
    /// `POST /auth/dbsc/refresh`, issued to the DBSC session (by its id).
    Refresh,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Self::Register => b"register",
            Self::Refresh => b"refresh",
        }
    }
}

/// Issues and opens challenges. No `Debug` output of the key.
#[derive(Clone)]
pub struct Challenges {
    key: [u8; 32],
}

impl std::fmt::Debug for Challenges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Challenges(…)")
    }
}

impl Challenges {
    /// The challenge key of `secret_key` (the application's key material).
    pub fn derive(secret_key: &[u8]) -> Self {
        let mut key = [0u8; 32];
        // 32 bytes is far below HKDF-SHA256's limit of 8,160.
        let _ = Hkdf::<Sha256>::new(None, secret_key).expand(PURPOSE, &mut key);
        Self { key }
    }

    /// A new challenge for `purpose`, issued to `owner` at `now`.
    pub fn issue(&self, purpose: Purpose, owner: &str, now: i64) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let nonce = URL_SAFE_NO_PAD.encode(nonce);
        let tag = self.tag(purpose, owner, &nonce, now);
        format!("{nonce}.{now}.{tag}")
    }

    /// When `challenge` was issued, if this key issued it for `purpose` to
    /// `owner` under [`CHALLENGE_SECONDS`] before `now`.
    pub fn open(&self, purpose: Purpose, owner: &str, challenge: &str, now: i64) -> Option<i64> {
        let mut parts = challenge.splitn(3, '.');
        let (nonce, issued, tag) = (parts.next()?, parts.next()?, parts.next()?);
        if nonce.len() > 32 || issued.len() > 20 {
            return None;
        }
        let issued: i64 = issued.parse().ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != TAG_BYTES {
            return None;
        }
        self.mac(purpose, owner, nonce, issued)
            .verify_truncated_left(&tag)
            .ok()?;
        (issued <= now && now - issued < CHALLENGE_SECONDS).then_some(issued)
    }

    fn mac(&self, purpose: Purpose, owner: &str, nonce: &str, issued: i64) -> Hmac<Sha256> {
        // Keys are any length for HMAC.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        for part in [purpose.label(), owner.as_bytes(), nonce.as_bytes()] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.update(&issued.to_be_bytes());
        mac
    }

    fn tag(&self, purpose: Purpose, owner: &str, nonce: &str, issued: i64) -> String {
        let tag = self.mac(purpose, owner, nonce, issued).finalize().into_bytes();
        URL_SAFE_NO_PAD.encode(&tag[..TAG_BYTES])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_opens_for_its_owner_and_purpose_only() {
        let challenges = Challenges::derive(b"an application key of enough bytes");
        let c = challenges.issue(Purpose::Refresh, "s1", 1_000);
        assert_eq!(challenges.open(Purpose::Refresh, "s1", &c, 1_010), Some(1_000));
        assert_eq!(challenges.open(Purpose::Refresh, "s2", &c, 1_010), None, "another session's");
        assert_eq!(challenges.open(Purpose::Register, "s1", &c, 1_010), None, "another purpose");
        assert_eq!(challenges.open(Purpose::Refresh, "s1", &c, 1_300), None, "five minutes old");
        assert_eq!(challenges.open(Purpose::Refresh, "s1", &c, 999), None, "from the future");
        let other = Challenges::derive(b"another application key, as long");
        assert_eq!(other.open(Purpose::Refresh, "s1", &c, 1_010), None, "another key's");
    }

    #[test]
    fn an_altered_or_made_up_challenge_does_not_open() {
        let challenges = Challenges::derive(b"an application key of enough bytes");
        let c = challenges.issue(Purpose::Register, "s1", 1_000);
        let later = c.replacen(".1000.", ".1100.", 1);
        assert_eq!(challenges.open(Purpose::Register, "s1", &later, 1_150), None);
        for made_up in ["", "a.b.c", "x.1000.", "..", "a.1000.AAAAAAAAAAAAAAAAAAAAAA"] {
            assert_eq!(challenges.open(Purpose::Register, "s1", made_up, 1_010), None);
        }
    }
}
