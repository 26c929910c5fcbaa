//! Random secrets (session ids, API tokens, reset tokens) and their digests.

use rand::RngCore;
use sha2::{Digest, Sha256};

/// A fresh 256-bit random secret, rendered URL-safe. Only its
/// [`digest`](SecretToken::digest) is ever stored.
pub struct SecretToken(String);

impl SecretToken {
    /// Draws 32 bytes from the operating system's generator.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(hex::encode(bytes))
    }

    /// The secret as given to the client.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// SHA-256 of the secret, hex: what the database keeps.
    pub fn digest(&self) -> String {
        sha256_hex(&self.0)
    }
}

/// SHA-256 of `value`, lower-case hex.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}
