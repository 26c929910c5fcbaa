//! Signing in and out: credentials, password hashes, throttling, accounts.

pub mod breached;
pub mod device_grant;
pub mod epoch;
pub mod new_password;
pub mod oidc;
pub mod once;
pub mod passkeys;
mod password;
pub mod reset;
pub mod second_step;
mod throttle;
mod throttles;
pub mod tokens;
pub mod two_factor;
pub mod users;

pub use password::PasswordHasher;
pub use throttle::{Attempt, Begun, Throttle};
pub use throttles::{Throttles, CHALLENGE_SECONDS};
