//! A DBSC proof: the JWT a browser signs with its session key, sent in
//! `Secure-Session-Response` (or the older `Sec-Session-Response`).
//!
//! Its header is `typ` `dbsc+jwt` and `alg` ES256 or RS256 — never `none`,
//! never an HMAC, which a public key cannot check. At registration the
//! header carries the public key (`jwk`: an EC P-256 or an RSA key of
//! 2048–4096 bits); at a refresh it must not, since the key is the one
//! stored at registration. The payload's `jti` is the challenge the proof
//! answers. Signatures are checked by the maintained `jsonwebtoken` crate
//! (RustCrypto's `p256` and `rsa`); this module only decides which header
//! and which key it accepts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// The `typ` of every DBSC proof.
pub const PROOF_TYPE: &str = "dbsc+jwt";

/// The longest proof read: an RS256 proof with a 4096-bit key in its
/// header is under 2 KiB.
pub const MAX_PROOF_BYTES: usize = 8 * 1024;

/// Smallest and largest RSA modulus accepted, in bytes (2048 and 4096 bits).
const RSA_MODULUS_BYTES: std::ops::RangeInclusive<usize> = 256..=512;

/// Why a proof was refused. Never carries the proof, the key or the
/// challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// Not a compact JWS with a JSON header and payload, or too long.
    #[error("the proof is not a JWT")]
    Malformed,
    /// `typ` is not `dbsc+jwt`.
    #[error("the proof's typ is not dbsc+jwt")]
    WrongType,
    /// `alg` is neither ES256 nor RS256, or does not fit the key.
    #[error("the proof's algorithm is not ES256 or RS256 for its key")]
    Algorithm,
    /// A registration without a usable public key in its header.
    #[error("the registration carries no P-256 or RSA public key")]
    Key,
    /// A refresh that carries a key in its header.
    #[error("a refresh proof carries a key")]
    KeyInRefresh,
    /// The signature does not verify with the key.
    #[error("the signature does not verify")]
    Signature,
    /// No `jti`.
    #[error("the proof names no challenge")]
    NoChallenge,
}

/// The payload's members a proof is judged by.
#[derive(Debug, Deserialize)]
struct Claims {
    jti: Option<String>,
}

/// A session key: the public JSON Web Key a browser registered, and its
/// RFC 7638 thumbprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// The JWK as stored (`kty` and its public members only).
    pub jwk: String,
    /// Base64url SHA-256 thumbprint.
    pub thumbprint: String,
}

/// A verified registration: the challenge it answers and the key that
/// signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The payload's `jti`.
    pub challenge: String,
    /// The key to store with the session.
    pub key: SessionKey,
}

/// Checks a registration proof: signed by the key in its own header.
pub fn registration(token: &str) -> Result<Registered, ProofError> {
    let header = header(token)?;
    let jwk = header.jwk.as_ref().ok_or(ProofError::Key)?;
    let key = accepted(jwk, header.alg)?;
    let challenge = verify(token, jwk, header.alg)?;
    Ok(Registered { challenge, key })
}

/// Checks a refresh proof against the key `stored` at registration (its
/// JWK as [`SessionKey::jwk`] holds it); answers the challenge it answers.
pub fn refresh(token: &str, stored: &str) -> Result<String, ProofError> {
    let header = header(token)?;
    if header.jwk.is_some() {
        return Err(ProofError::KeyInRefresh);
    }
    let jwk: Jwk = serde_json::from_str(stored).map_err(|_| ProofError::Key)?;
    accepted(&jwk, header.alg)?;
    verify(token, &jwk, header.alg)
}

/// The header, when the proof is a DBSC JWT of an accepted algorithm.
fn header(token: &str) -> Result<jsonwebtoken::Header, ProofError> {
    if token.len() > MAX_PROOF_BYTES || token.split('.').count() != 3 {
        return Err(ProofError::Malformed);
    }
    let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
        jsonwebtoken::errors::ErrorKind::InvalidAlgorithmName => ProofError::Algorithm,
        _ => ProofError::Malformed,
    })?;
    if header.typ.as_deref() != Some(PROOF_TYPE) {
        return Err(ProofError::WrongType);
    }
    if !matches!(header.alg, Algorithm::ES256 | Algorithm::RS256) {
        return Err(ProofError::Algorithm);
    }
    Ok(header)
}

/// The key of `jwk` when it is one `alg` signs with: P-256 for ES256, an
/// RSA key of 2048 to 4096 bits for RS256; private members are dropped.
fn accepted(jwk: &Jwk, alg: Algorithm) -> Result<SessionKey, ProofError> {
    let public = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => {
            if ec.curve != EllipticCurve::P256 {
                return Err(ProofError::Algorithm);
            }
            let coordinate = |c: &str| URL_SAFE_NO_PAD.decode(c).is_ok_and(|b| b.len() == 32);
            if !coordinate(&ec.x) || !coordinate(&ec.y) {
                return Err(ProofError::Key);
            }
            serde_json::json!({"kty": "EC", "crv": "P-256", "x": ec.x, "y": ec.y})
        }
        (AlgorithmParameters::RSA(rsa), Algorithm::RS256) => {
            let modulus = URL_SAFE_NO_PAD.decode(&rsa.n).map_err(|_| ProofError::Key)?;
            let exponent = URL_SAFE_NO_PAD.decode(&rsa.e).map_err(|_| ProofError::Key)?;
            let significant = modulus.iter().skip_while(|b| **b == 0).count();
            if !RSA_MODULUS_BYTES.contains(&significant) || exponent.is_empty() || exponent.len() > 8
            {
                return Err(ProofError::Key);
            }
            serde_json::json!({"kty": "RSA", "n": rsa.n, "e": rsa.e})
        }
        (AlgorithmParameters::EllipticCurve(_) | AlgorithmParameters::RSA(_), _) => {
            return Err(ProofError::Algorithm)
        }
        _ => return Err(ProofError::Key),
    };
    let public_jwk: Jwk = serde_json::from_value(public.clone()).map_err(|_| ProofError::Key)?;
    Ok(SessionKey {
        jwk: public.to_string(),
        thumbprint: public_jwk.thumbprint(ThumbprintHash::SHA256),
    })
}

/// The challenge of a proof whose signature `jwk` verifies under `alg`.
fn verify(token: &str, jwk: &Jwk, alg: Algorithm) -> Result<String, ProofError> {
    // RustCrypto's provider, whatever other crates turn on: a second
    // install is refused and changes nothing.
    let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
    let key = DecodingKey::from_jwk(jwk).map_err(|_| ProofError::Key)?;
    let mut validation = Validation::new(alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind;
        match e.kind() {
            ErrorKind::InvalidSignature | ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidRsaKey(_) => {
                ProofError::Signature
            }
            ErrorKind::InvalidAlgorithm => ProofError::Algorithm,
            _ => ProofError::Malformed,
        }
    })?;
    match data.claims.jti {
        Some(jti) if !jti.is_empty() => Ok(jti),
        _ => Err(ProofError::NoChallenge),
    }
}

#[cfg(test)]
mod tests;
