//! The session cookie's name and flags.

use rocket::http::{Cookie, SameSite};
use rocket::time::Duration;

use crate::config::Settings;
use crate::shared::Shared;

/// The session cookie's name: `session.cookie_name`, with the `__Host-` prefix
/// when `base_url` is https (the browser then refuses it without `Secure`,
/// `Path=/` and a `Domain`).
pub fn session_cookie_name(settings: &Settings) -> String {
    if settings.is_https() {
        format!("__Host-{}", settings.session.cookie_name)
    } else {
        settings.session.cookie_name.clone()
    }
}

fn base(gh: &Shared, value: String) -> Cookie<'static> {
    Cookie::build((session_cookie_name(&gh.settings), value))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(gh.settings.is_https())
        .build()
}

/// The cookie that hands a new session id to the browser. It has no expiry of
/// its own: the server enforces idle and absolute lifetimes.
pub(super) fn issue(gh: &Shared, id: &str) -> Cookie<'static> {
    base(gh, id.to_owned())
}

/// The cookie that tells the browser to forget the session (`Max-Age=0`).
pub(super) fn removal(gh: &Shared) -> Cookie<'static> {
    let mut cookie = base(gh, String::new());
    cookie.set_max_age(Duration::ZERO);
    cookie.set_expires(rocket::time::OffsetDateTime::UNIX_EPOCH);
    cookie
}
