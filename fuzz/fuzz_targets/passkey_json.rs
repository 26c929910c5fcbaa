//! Feeds arbitrary JSON bodies to what a passkey route does with one before
//! webauthn-rs verifies it: the body's `credential` object, read as an
//! assertion (`PublicKeyCredential`) and as a registration answer
//! (`RegisterPublicKeyCredential`), the SHA-256 its id is found by and the
//! user its `userHandle` names. It must never panic; whatever reads must
//! write to JSON that reads back to the same; the id's hash is 64 hex
//! digits; a `userHandle` names a user exactly when it is 16 bytes, as the
//! UUID of those bytes.
#![no_main]

use gatehouse::auth::passkeys::{credential_hash, user_handle_of};
use gatehouse::body::Input;
use gatehouse::FieldErrors;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;
use webauthn_rs_proto::{PublicKeyCredential, RegisterPublicKeyCredential};

fuzz_target!(|data: &[u8]| {
    // As `Input` reads a JSON body: an object of fields.
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let input = Input::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.clone())), false);
    let mut errors = FieldErrors::new();
    let Some(credential) = input.object("credential", &mut errors) else {
        return;
    };
    assert!(credential.is_object());

    if let Some(assertion) = read_back::<PublicKeyCredential>(&credential) {
        let (first, again) = &assertion;
        assert_eq!(first.get_credential_id(), again.get_credential_id());
        check_hash(first.get_credential_id());
        let handle = user_handle_of(first);
        assert_eq!(handle, user_handle_of(again));
        match (first.get_user_unique_id(), &handle) {
            (Some(bytes), Some(handle)) => {
                assert_eq!(bytes.len(), 16);
                let uuid = Uuid::parse_str(handle).expect("a UUID");
                assert_eq!(uuid.as_bytes(), bytes);
                assert_eq!(&uuid.hyphenated().to_string(), handle);
            }
            (Some(bytes), None) => assert_ne!(bytes.len(), 16),
            (None, handle) => assert_eq!(handle, &None),
        }
    }
    if let Some((first, again)) = read_back::<RegisterPublicKeyCredential>(&credential) {
        assert_eq!(first.raw_id, again.raw_id);
        check_hash(&first.raw_id);
    }
});

/// Reads `credential` as `T` as the passkey module does; when it reads,
/// writes it to JSON and reads that back, which must write the same JSON.
fn read_back<T: DeserializeOwned + Serialize>(credential: &Value) -> Option<(T, T)> {
    let first: T = serde_json::from_value(credential.clone()).ok()?;
    let written = serde_json::to_value(&first).expect("writes");
    let again: T = serde_json::from_value(written.clone())
        .unwrap_or_else(|e| panic!("{written} does not read back: {e}"));
    assert_eq!(serde_json::to_value(&again).expect("writes"), written);
    Some((first, again))
}

fn check_hash(credential_id: &[u8]) {
    let hash = credential_hash(credential_id);
    assert_eq!(hash.len(), 64);
    assert!(hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
}
