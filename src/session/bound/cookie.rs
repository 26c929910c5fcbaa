//! The bound cookie: what a browser holds while its device-bound session is
//! proven, `session.bound_cookie_minutes` at most. A private (encrypted,
//! authenticated) cookie naming the DBSC session and the second it was
//! minted; the server judges its age from that second, not from the
//! browser's `Max-Age`, so a copy is good for the same minutes at most.

use rocket::http::{Cookie, CookieJar, SameSite};
use rocket::time::Duration;

use crate::config::Settings;

/// The bound cookie's name without the `__Host-` prefix.
pub const BOUND_COOKIE: &str = "gatehouse_bound";

/// The bound cookie's name: `__Host-` prefixed when `base_url` is https.
pub fn name(settings: &Settings) -> String {
    if settings.is_https() {
        format!("__Host-{BOUND_COOKIE}")
    } else {
        BOUND_COOKIE.to_owned()
    }
}

/// The attributes the cookie is set with, as the session instructions
/// name them for the browser to compare.
pub fn attributes(settings: &Settings) -> String {
    let secure = if settings.is_https() { "; Secure" } else { "" };
    format!("Path=/{secure}; HttpOnly; SameSite=Lax")
}

/// Mints the bound cookie of the DBSC session `id` at `now` into `jar`.
pub fn mint(jar: &CookieJar<'_>, settings: &Settings, id: &str, now: i64) {
    let minutes = i64::from(settings.session.bound_cookie_minutes);
    let cookie = Cookie::build((name(settings), format!("{id}.{now}")))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(settings.is_https())
        .max_age(Duration::seconds(minutes * 60));
    jar.add_private(cookie);
}

/// When the bound cookie this browser sent for the DBSC session `id` was
/// minted, if it sent one for it.
pub fn minted(jar: &CookieJar<'_>, settings: &Settings, id: &str) -> Option<i64> {
    let cookie = jar.get_private(&name(settings))?;
    let (named, at) = cookie.value().rsplit_once('.')?;
    (named == id).then(|| at.parse().ok()).flatten()
}

/// The header that removes the bound cookie from the browser.
pub fn removal(settings: &Settings) -> Cookie<'static> {
    let mut cookie = Cookie::build((name(settings), ""))
        .path("/")
        .secure(settings.is_https())
        .http_only(true)
        .same_site(SameSite::Lax)
        .build();
    cookie.make_removal();
    cookie
}
