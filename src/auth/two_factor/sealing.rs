//! TOTP secrets at rest: sealed with AES-256-GCM under a key derived from the
//! application's `secret_key` by HKDF-SHA256, bound to the user they belong to.
//!
//! A sealed secret is text: `v1:` and the base64 of a fresh random 96-bit
//! nonce followed by the ciphertext and its tag. The user's id is authenticated
//! with it, so a sealed secret copied to another user's row does not open.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hkdf::Hkdf;
use secrecy::zeroize::Zeroizing;
use sha2::Sha256;

use super::secret::TotpSecret;

/// What the key is derived for; another purpose derives another key from
/// the same `secret_key`.
const PURPOSE: &[u8] = b"gatehouse two-factor secret sealing v1";

/// The prefix of the current format.
const VERSION: &str = "v1:";

/// Bytes of the nonce at the start of a sealed secret.
const NONCE_BYTES: usize = 12;

/// Bytes of the authentication tag after the ciphertext.
const TAG_BYTES: usize = 16;

/// Why a sealed secret did not open.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SealingError {
    /// Not a sealed secret of a known format.
    #[error("not a sealed secret")]
    Malformed,
    /// Sealed with another key, for another user, or altered since.
    #[error("the sealed secret does not open with this key for this user")]
    WrongKey,
    /// Opened, but too short to be a secret.
    #[error("the sealed value is not a TOTP secret")]
    NotASecret,
    /// The cipher refused to seal (it takes inputs of up to 64 GiB).
    #[error("the secret cannot be sealed")]
    Seal,
}

/// The key that seals and opens TOTP secrets. No `Debug` output of the key.
#[derive(Clone)]
pub struct SealingKey(Aes256Gcm);

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey(…)")
    }
}

impl SealingKey {
    /// The sealing key of `secret_key` (the application's key material, as
    /// configured).
    pub fn derive(secret_key: &[u8]) -> Self {
        let mut key = Zeroizing::new([0u8; 32]);
        Hkdf::<Sha256>::new(None, secret_key)
            .expand(PURPOSE, &mut *key)
            .expect("32 bytes are a valid HKDF-SHA256 output length");
        Self(Aes256Gcm::new(&(*key).into()))
    }

    /// `secret` sealed for `user_id`, under a fresh nonce.
    pub fn seal(&self, user_id: i64, secret: &TotpSecret) -> Result<String, SealingError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = associated_data(user_id);
        let payload = Payload {
            msg: secret.bytes(),
            aad: aad.as_bytes(),
        };
        let sealed = self
            .0
            .encrypt(&nonce, payload)
            .map_err(|_| SealingError::Seal)?;
        let mut bytes = Vec::with_capacity(NONCE_BYTES + sealed.len());
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        Ok(format!("{VERSION}{}", STANDARD.encode(bytes)))
    }

    /// The secret `sealed` holds for `user_id`: an error, never a panic, for
    /// text that is not a sealed secret, was sealed under another key or for
    /// another user, or was altered.
    pub fn open(&self, user_id: i64, sealed: &str) -> Result<TotpSecret, SealingError> {
        let encoded = sealed
            .strip_prefix(VERSION)
            .ok_or(SealingError::Malformed)?;
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| SealingError::Malformed)?;
        if bytes.len() < NONCE_BYTES + TAG_BYTES {
            return Err(SealingError::Malformed);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let aad = associated_data(user_id);
        let payload = Payload {
            msg: ciphertext,
            aad: aad.as_bytes(),
        };
        let opened = self
            .0
            .decrypt(Nonce::from_slice(nonce), payload)
            .map_err(|_| SealingError::WrongKey)?;
        TotpSecret::from_bytes(opened).ok_or(SealingError::NotASecret)
    }
}

/// What a sealing is bound to besides the key: the table and the user.
fn associated_data(user_id: i64) -> String {
    format!("gatehouse_two_factor:{user_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SealingKey {
        SealingKey::derive(&[byte; 32])
    }

    fn secret() -> TotpSecret {
        TotpSecret::from_bytes(b"12345678901234567890".to_vec()).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_with_the_same_key_for_the_same_user() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        assert!(sealed.starts_with("v1:"), "{sealed}");
        let opened = key(1).open(7, &sealed).unwrap();
        assert_eq!(opened.bytes(), b"12345678901234567890");
    }

    #[test]
    fn the_sealed_text_does_not_show_the_secret() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        let encoded = sealed.strip_prefix("v1:").unwrap();
        let bytes = STANDARD.decode(encoded).unwrap();
        assert_eq!(bytes.len(), 12 + 20 + 16, "nonce, ciphertext, tag");
        assert!(!bytes.windows(20).any(|w| w == b"12345678901234567890"));
        assert!(!sealed.contains(&secret().base32()));
    }

    #[test]
    fn each_sealing_uses_a_new_nonce() {
        let one = key(1).seal(7, &secret()).unwrap();
        let two = key(1).seal(7, &secret()).unwrap();
        assert_ne!(one, two);
        assert_eq!(&STANDARD.decode(&one[3..]).unwrap()[..12].len(), &12);
        assert_ne!(
            STANDARD.decode(&one[3..]).unwrap()[..12],
            STANDARD.decode(&two[3..]).unwrap()[..12]
        );
    }

    #[test]
    fn another_key_does_not_open_it() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        assert_eq!(key(2).open(7, &sealed).err(), Some(SealingError::WrongKey));
    }

    #[test]
    fn keys_derived_from_different_material_differ_even_in_one_byte() {
        let mut material = [9u8; 64];
        let sealed = SealingKey::derive(&material).seal(7, &secret()).unwrap();
        material[63] = 8;
        assert_eq!(
            SealingKey::derive(&material).open(7, &sealed).err(),
            Some(SealingError::WrongKey)
        );
    }

    #[test]
    fn it_does_not_open_for_another_user() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        assert_eq!(key(1).open(8, &sealed).err(), Some(SealingError::WrongKey));
    }

    #[test]
    fn any_altered_byte_is_refused() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        let bytes = STANDARD.decode(&sealed[3..]).unwrap();
        for at in 0..bytes.len() {
            let mut altered = bytes.clone();
            altered[at] ^= 0x01;
            let text = format!("v1:{}", STANDARD.encode(&altered));
            assert_eq!(key(1).open(7, &text).err(), Some(SealingError::WrongKey), "byte {at}");
        }
    }

    #[test]
    fn text_that_is_not_a_sealed_secret_is_malformed() {
        let sealed = key(1).seal(7, &secret()).unwrap();
        let short = format!("v1:{}", STANDARD.encode([0u8; 27]));
        for text in [
            "",
            "v1:",
            "v2:AAAA",
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",
            "v1:not base64!",
            &sealed[3..],
            &sealed[..sealed.len() - 1],
            &short,
        ] {
            assert_eq!(key(1).open(7, text).err(), Some(SealingError::Malformed), "{text:?}");
        }
    }

    #[test]
    fn a_sealed_value_too_short_for_a_secret_is_refused() {
        let sealing = key(1);
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = associated_data(7);
        let sealed = sealing
            .0
            .encrypt(&nonce, Payload { msg: &[1u8; 10], aad: aad.as_bytes() })
            .unwrap();
        let text = format!("v1:{}", STANDARD.encode([nonce.as_slice(), &sealed].concat()));
        assert_eq!(sealing.open(7, &text).err(), Some(SealingError::NotASecret));
    }

    #[test]
    fn the_key_has_no_debug_output() {
        assert_eq!(format!("{:?}", key(1)), "SealingKey(…)");
    }
}
