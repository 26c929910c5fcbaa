//! The application's `secret_key`, read from Rocket's configuration in every
//! form Rocket accepts: base64 (44 or 88 characters), hex (64 characters) or
//! bytes (at least 32). Rocket keeps its own copy to itself, so Gatehouse
//! reads the same value where Rocket reads it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use rand::RngCore;
use rocket::figment::Figment;
use secrecy::SecretSlice;

/// `secret_key` as configured.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Configured {
    Text(String),
    Bytes(Vec<u8>),
}

/// The key material of `secret_key` in `figment`.
///
/// Without a key (or with Rocket's all-zero placeholder), the debug profile
/// gets a random key for this process, as Rocket does for its own cookies:
/// secrets sealed under it do not open after a restart. Any other profile
/// needs a configured key.
pub fn application_key(figment: &Figment) -> Result<SecretSlice<u8>, String> {
    let configured = match figment.find_value(rocket::Config::SECRET_KEY) {
        Err(_) => None,
        Ok(value) => {
            let configured: Configured = value
                .deserialize()
                .map_err(|e| format!("invalid configuration `secret_key`: {e}"))?;
            let bytes = decode(configured)?;
            (!bytes.iter().all(|b| *b == 0)).then_some(bytes)
        }
    };
    match configured {
        Some(bytes) => Ok(SecretSlice::from(bytes)),
        None if figment.profile() == rocket::Config::DEBUG_PROFILE => {
            tracing::warn!(
                "no `secret_key` configured: two-factor secrets enrolled now \
                 cannot be opened after a restart"
            );
            let mut bytes = vec![0u8; 64];
            rand::rngs::OsRng.fill_bytes(&mut bytes);
            Ok(SecretSlice::from(bytes))
        }
        None => Err(
            "invalid configuration `secret_key`: required to seal two-factor secrets".to_owned(),
        ),
    }
}

/// The bytes of a configured key, held to Rocket's rules.
fn decode(configured: Configured) -> Result<Vec<u8>, String> {
    let invalid = |reason: &str| format!("invalid configuration `secret_key`: {reason}");
    let bytes = match configured {
        Configured::Text(text) => match text.len() {
            44 | 88 => STANDARD
                .decode(text.as_bytes())
                .map_err(|_| invalid("not valid base64"))?,
            64 => hex::decode(text.as_bytes()).map_err(|_| invalid("not valid hex"))?,
            _ => return Err(invalid("256-bit base64 or hex string expected")),
        },
        Configured::Bytes(bytes) => bytes,
    };
    if bytes.len() < 32 {
        return Err(invalid("at least 32 bytes expected"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocket::figment::Profile;
    use secrecy::ExposeSecret;

    /// The key the integration tests configure.
    const BASE64: &str = "hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk=";

    /// Rocket's defaults (with its all-zero key placeholder), without the
    /// environment or a Rocket.toml.
    fn figment(profile: &str) -> Figment {
        Figment::from(rocket::Config::default()).select(Profile::new(profile))
    }

    fn key_of(figment: &Figment) -> Result<Vec<u8>, String> {
        application_key(figment).map(|key| key.expose_secret().to_vec())
    }

    #[test]
    fn base64_hex_and_bytes_give_the_same_key() {
        let bytes = STANDARD.decode(BASE64).unwrap();
        assert_eq!(bytes.len(), 32);
        let from_base64 = key_of(&figment("release").merge(("secret_key", BASE64))).unwrap();
        let from_hex = key_of(&figment("release").merge(("secret_key", hex::encode(&bytes)))).unwrap();
        let from_bytes = key_of(&figment("release").merge(("secret_key", bytes.clone()))).unwrap();
        assert_eq!(from_base64, bytes);
        assert_eq!(from_hex, bytes);
        assert_eq!(from_bytes, bytes);
    }

    #[test]
    fn a_512_bit_key_is_read_whole() {
        let key = key_of(&figment("release").merge(("secret_key", [7u8; 64].to_vec()))).unwrap();
        assert_eq!(key, vec![7u8; 64]);
        let text = STANDARD.encode([5u8; 64]);
        assert_eq!(text.len(), 88);
        let key = key_of(&figment("release").merge(("secret_key", text))).unwrap();
        assert_eq!(key, vec![5u8; 64]);
    }

    #[test]
    fn a_key_rocket_would_refuse_is_an_error_naming_the_key() {
        for bad in ["short", "not base64 at all, but forty-four characters", &"zz".repeat(32)] {
            let err = key_of(&figment("release").merge(("secret_key", bad))).unwrap_err();
            assert!(err.contains("`secret_key`"), "{err}");
        }
        let err = key_of(&figment("release").merge(("secret_key", vec![1u8; 31]))).unwrap_err();
        assert!(err.contains("at least 32 bytes"), "{err}");
    }

    #[test]
    fn without_a_key_release_refuses_and_debug_gets_a_random_one() {
        let err = key_of(&figment("release")).unwrap_err();
        assert!(err.contains("`secret_key`"), "{err}");
        let zero = figment("release").merge(("secret_key", vec![0u8; 32]));
        assert!(key_of(&zero).is_err(), "the all-zero placeholder is no key");

        let one = key_of(&figment("debug")).unwrap();
        let two = key_of(&figment("debug")).unwrap();
        assert_eq!(one.len(), 64);
        assert_ne!(one, two);
    }
}
