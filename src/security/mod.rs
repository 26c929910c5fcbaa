//! Browser safety: cross-origin refusal, response headers, client address and
//! the open-redirect rules.

mod client_ip;
mod headers;
mod origin;
mod redirect;

pub use client_ip::ClientIp;
pub use headers::{is_screen_path, screen_headers};
pub use origin::SameOrigin;
pub use redirect::same_site_path;
