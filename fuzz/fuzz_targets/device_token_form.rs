//! What a script sends to the device authorization endpoints
//! (`POST /auth/device/code`, `POST /auth/device/token`): any form body is
//! read into its parameters or refused with an RFC 6749 error, never a
//! panic; a body that reads names a client and, for a token, a grant.
#![no_main]

use gatehouse::auth::device_grant::{scope_of, CodeRequest, Params, TokenRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(body) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(params) = Params::parse(body) else {
        return;
    };
    if let Ok(asked) = CodeRequest::of(&params) {
        assert!(!asked.client_id.is_empty());
        let scope = scope_of(asked.sets.as_deref());
        assert!(scope.starts_with("odata:read"));
    }
    if let Ok(token) = TokenRequest::of(&params) {
        assert!(!token.client_id.is_empty() && !token.device_code.is_empty());
    }
});
