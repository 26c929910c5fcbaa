//! Password reset by mail: the token broker, `POST /auth/forgot-password`,
//! the link's courtesy pre-check and `POST /auth/reset-password`.

pub mod broker;
pub mod forgot;
pub mod requests;
pub mod set;
