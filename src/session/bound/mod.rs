//! Device-bound sessions (DBSC, W3C WebAppSec draft): a browser that
//! supports them binds its session to a key that never leaves the device,
//! and proves it holds that key whenever its short-lived bound cookie runs
//! out. A copied session cookie is then a guest's on any other machine.
//!
//! - Every sign-in answer offers a binding ([`headers::registration`]),
//!   with a challenge issued to the new session (`domain::challenge`).
//! - `POST /auth/dbsc/register` checks the proof signed by the browser's
//!   key ([`proof::registration`]), stores the key with the session
//!   ([`store::bind`]) and mints the bound cookie ([`cookie`]).
//! - A bound session loaded without a live bound cookie minted for it is a
//!   guest (`Session::of`); `POST /auth/dbsc/refresh` mints a new one for a
//!   proof by the stored key over a fresh challenge ([`proof::refresh`]).
//!
//! The routes are in `routes/dbsc.rs`; this module holds what sessions need.

pub mod cookie;
pub mod headers;
pub mod proof;
pub mod store;

use proof::SessionKey;

/// The refresh route, named in the session instructions.
pub const REFRESH_PATH: &str = "/auth/dbsc/refresh";
/// The registration route, named in the registration header.
pub const REGISTER_PATH: &str = "/auth/dbsc/register";
/// How old a bound cookie may be for sudo mode and the sensitive account
/// actions of a bound session.
pub const FRESH_SECONDS: i64 = 60;

/// A session's binding: the DBSC session identifier its browser was given
/// and the key that proves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The DBSC session identifier (random; no credential).
    pub id: String,
    /// The browser's public key.
    pub key: SessionKey,
}

impl Binding {
    /// A binding to `key` under a new random identifier.
    pub fn new(key: SessionKey) -> Self {
        let id = crate::domain::SecretToken::generate().expose()[..32].to_owned();
        Self { id, key }
    }
}

/// A bound session as a request loaded it: its binding and when the live
/// bound cookie the request carried was minted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The binding.
    pub binding: Binding,
    /// Unix second the request's bound cookie was minted.
    pub minted_at: i64,
}

/// The session instructions JSON of DESIGN.md (the draft's
/// "session instructions"): the DBSC session, its refresh route, its scope
/// (the site's origin) and its credential, the bound cookie.
pub fn instructions(settings: &crate::config::Settings, id: &str) -> serde_json::Value {
    serde_json::json!({
        "session_identifier": id,
        "refresh_url": REFRESH_PATH,
        "scope": {
            "origin": settings.base_url.origin().ascii_serialization(),
            "include_site": false,
            "scope_specification": [],
        },
        "credentials": [{
            "type": "cookie",
            "name": cookie::name(settings),
            "attributes": cookie::attributes(settings),
        }],
    })
}
