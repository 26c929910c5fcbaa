//! Values parsed once at the edge and trusted afterwards.

pub mod challenge;
mod email;
mod password;
mod token;
mod user_code;

pub use email::Email;
pub use password::{Password, PasswordRejection, BCRYPT_MAX_BYTES, MAX_PASSWORD_CHARS};
pub use token::{sha256_hex, SecretToken};
pub use user_code::UserCode;
