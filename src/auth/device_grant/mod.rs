//! The device authorization grant (RFC 8628): a script asks for codes, a
//! signed-in person allows or denies the user code on the `/device`
//! screen, and the script, polling with the device code, receives a
//! personal access token once. [`request`] reads what scripts send and
//! names the errors they get; [`store`] keeps the codes.

mod request;
mod store;

pub use request::{scope_of, CodeRequest, OAuthError, Params, TokenRequest};
pub use store::{
    decide, issue, pending, poll, sweep, Decision, Pending, Poll, INTERVAL_SECONDS,
    LIFETIME_SECONDS,
};
