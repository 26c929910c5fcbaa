//! Browser safety: cross-origin refusal, response headers, client address,
//! the open-redirect rules and what of a request may be logged.

mod client_ip;
mod headers;
mod logging;
mod origin;
mod redirect;

pub use client_ip::{ClientBlock, ClientIp};
pub use headers::{common_headers, is_auth_path, screen_headers, CONTENT_SECURITY_POLICY};
pub use logging::loggable;
pub use origin::SameOrigin;
pub use redirect::same_site_path;
