//! Feeds arbitrary ID token claims and UserInfo answers (JSON, split at the
//! first 0xFF byte) to the path a provider's answer takes once its
//! signature has been checked: the claims as `openidconnect` reads them,
//! `Identity::of`, and the fill from UserInfo for the same `sub`. It must
//! never panic; a name is at most `NAME_CHARS` characters; the ID token's
//! own claims are never replaced, and its subject never changes.
#![no_main]

use gatehouse::auth::oidc::{Identity, NAME_CHARS};
use libfuzzer_sys::fuzz_target;
use openidconnect::core::{CoreIdTokenClaims, CoreUserInfoClaims};

fn name_fits(identity: &Identity) -> bool {
    identity.name().map_or(0, |n| n.chars().count()) <= NAME_CHARS
}

fuzz_target!(|data: &[u8]| {
    let (id_token, user_info) = match data.iter().position(|b| *b == 0xFF) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let Ok(claims) = serde_json::from_slice::<CoreIdTokenClaims>(id_token) else {
        return;
    };
    let mut identity = Identity::of(&claims);
    assert!(name_fits(&identity));
    let before = identity.clone();
    let Some(answer) = user_info else {
        return;
    };
    let Ok(info) = CoreUserInfoClaims::from_json::<std::io::Error>(answer, Some(claims.subject()))
    else {
        return;
    };
    identity.fill_from(&info);
    assert!(name_fits(&identity));
    assert_eq!(identity.subject(), before.subject());
    if before.email().is_some() {
        assert_eq!(identity.email(), before.email());
    }
    if before.name().is_some() {
        assert_eq!(identity.name(), before.name());
    }
    if before.email_verified() {
        assert!(identity.email_verified());
    }
});
