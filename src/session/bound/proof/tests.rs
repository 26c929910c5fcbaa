use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey;
use serde_json::{json, Value};

use super::*;

/// A new P-256 key and its public JWK.
fn key() -> (EncodingKey, Jwk) {
    let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let der = secret.to_pkcs8_der().unwrap();
    let signing = EncodingKey::from_ec_der(der.as_bytes());
    let mut jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256).unwrap();
    jwk.common = Default::default();
    (signing, jwk)
}

fn signed(signing: &EncodingKey, jwk: Option<&Jwk>, typ: &str, claims: Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some(typ.to_owned());
    header.jwk = jwk.cloned();
    jsonwebtoken::encode(&header, &claims, signing).unwrap()
}

fn unsigned(header: Value, claims: Value) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.{}", part(&header), part(&claims), URL_SAFE_NO_PAD.encode([1u8; 64]))
}

#[test]
fn a_registration_is_signed_by_the_key_it_carries() {
    let (signing, jwk) = key();
    let token = signed(&signing, Some(&jwk), PROOF_TYPE, json!({"jti": "c1"}));
    let proven = registration(&token).unwrap();
    assert_eq!(proven.challenge, "c1");
    let stored = proven.key;
    assert_eq!(stored.thumbprint, jwk.thumbprint(ThumbprintHash::SHA256));
    assert!(!stored.jwk.contains("\"d\""), "no private member is kept");
    // The refresh checks the stored key.
    let refreshed = signed(&signing, None, PROOF_TYPE, json!({"jti": "c2"}));
    assert_eq!(refresh(&refreshed, &stored.jwk).unwrap(), "c2");
    let (other, _) = key();
    let forged = signed(&other, None, PROOF_TYPE, json!({"jti": "c2"}));
    assert_eq!(refresh(&forged, &stored.jwk), Err(ProofError::Signature));
    assert_eq!(refresh(&token, &stored.jwk), Err(ProofError::KeyInRefresh));
}


#[test]
fn another_type_algorithm_or_no_challenge_is_refused() {
    let (signing, jwk) = key();
    let jwt = signed(&signing, Some(&jwk), "JWT", json!({"jti": "c1"}));
    assert_eq!(registration(&jwt), Err(ProofError::WrongType));
    let no_jti = signed(&signing, Some(&jwk), PROOF_TYPE, json!({"sub": "x"}));
    assert_eq!(registration(&no_jti), Err(ProofError::NoChallenge));
    let none = unsigned(json!({"alg": "none", "typ": PROOF_TYPE}), json!({"jti": "c"}));
    assert!(registration(&none).is_err());
    let hmac = unsigned(json!({"alg": "HS256", "typ": PROOF_TYPE, "jwk": {"kty": "oct", "k": "AAAA"}}), json!({"jti": "c"}));
    assert_eq!(registration(&hmac), Err(ProofError::Algorithm));
    let ps = unsigned(json!({"alg": "PS256", "typ": PROOF_TYPE}), json!({"jti": "c"}));
    assert_eq!(registration(&ps), Err(ProofError::Algorithm));
    let ed = unsigned(
        json!({"alg": "ES256", "typ": PROOF_TYPE, "jwk": {"kty": "EC", "crv": "Ed25519", "x": "AAAA", "y": "AAAA"}}),
        json!({"jti": "c"}),
    );
    assert!(registration(&ed).is_err(), "a curve other than P-256");
    let small_rsa = unsigned(
        json!({"alg": "RS256", "typ": PROOF_TYPE, "jwk": {"kty": "RSA", "n": URL_SAFE_NO_PAD.encode([0xC1u8; 128]), "e": "AQAB"}}),
        json!({"jti": "c"}),
    );
    assert_eq!(registration(&small_rsa), Err(ProofError::Key), "RSA under 2048 bits");
    let es_with_rsa_key = unsigned(
        json!({"alg": "ES256", "typ": PROOF_TYPE, "jwk": {"kty": "RSA", "n": URL_SAFE_NO_PAD.encode([0xC1u8; 256]), "e": "AQAB"}}),
        json!({"jti": "c"}),
    );
    assert_eq!(registration(&es_with_rsa_key), Err(ProofError::Algorithm));
}

#[test]
fn anything_else_is_malformed_and_never_panics() {
    for junk in ["", ".", "..", "a.b.c", "a.b", "a.b.c.d", "\u{0}.\u{0}.\u{0}"] {
        assert!(registration(junk).is_err(), "{junk:?}");
        assert!(refresh(junk, "{}").is_err(), "{junk:?}");
    }
    let long = "a".repeat(MAX_PROOF_BYTES + 1);
    assert_eq!(registration(&long), Err(ProofError::Malformed));
    let (signing, _) = key();
    let token = signed(&signing, None, PROOF_TYPE, json!({"jti": "c"}));
    assert_eq!(refresh(&token, "not a key"), Err(ProofError::Key));
}
