//! Signing in and out: credentials, password hashes, throttling, accounts.

mod password;
pub mod reset;
mod throttle;
pub mod tokens;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub mod two_factor;
pub mod users;

pub use password::PasswordHasher;
pub use throttle::{Attempt, Begun, Throttle, Throttles};
