//! Signing in and out: credentials, password hashes, throttling, accounts.

mod password;
pub mod reset;
mod throttle;
pub mod tokens;
pub mod two_factor;
pub mod users;

pub use password::PasswordHasher;
pub use throttle::{Attempt, Begun, Throttle, Throttles};
