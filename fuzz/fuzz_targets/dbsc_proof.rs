//! A device-bound session's proof as a browser or a forger sends it: the
//! structured-field header around it (`Secure-Session-Response`,
//! `Sec-Secure-Session-Id`), the JWT, and the JSON Web Key in its header or
//! stored at registration. Any text must be refused or accepted without
//! panicking; an accepted registration names a key the refresh can read.
#![no_main]

use gatehouse::session::bound::{headers, proof};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let token = headers::string_item(text).unwrap_or_else(|| text.to_owned());
    if let Ok(registered) = proof::registration(&token) {
        let _ = proof::refresh(&token, &registered.key.jwk);
    }
    // The same text as a stored key (what a refresh reads back).
    let _ = proof::refresh(&token, text);
});
