//! Password reset by mail: the token broker and the stored forgot-password
//! requests with their worker (the routes are in `routes/`).

pub mod broker;
pub mod requests;
