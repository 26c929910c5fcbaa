//! Security headers: a few on every response, more on screens and auth
//! endpoints. A screen carries its headers by what it is (`screens::Page`
//! adds them, under whatever path it answers); the answers of the sign-in
//! endpoints (JSON that may hold a new key or recovery codes, redirects)
//! get them by path.

use rocket::http::Header;
use rocket::Response;

/// The content security policy of the screens: only our own scripts, styles
/// and images; no framing; forms post only to us.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Whether `path` belongs to Gatehouse's sign-in endpoints, whose every
/// answer (not only pages) is kept out of caches.
pub fn is_auth_path(path: &str) -> bool {
    ["/login", "/logout", "/auth/", "/password/"]
        .iter()
        .any(|prefix| path == prefix.trim_end_matches('/') || path.starts_with(prefix))
}

/// Adds the headers every response carries (screens, JSON, OData,
/// redirects, errors, assets); under https also HSTS.
pub fn common_headers(response: &mut Response<'_>, https: bool) {
    response.set_header(Header::new("X-Content-Type-Options", "nosniff"));
    response.set_header(Header::new("Referrer-Policy", "no-referrer"));
    response.set_header(Header::new("X-Frame-Options", "DENY"));
    if https {
        response.set_header(Header::new("Strict-Transport-Security", "max-age=31536000"));
    }
}

/// Adds the screen headers to `response`: the policy and no caching.
pub fn screen_headers(response: &mut Response<'_>) {
    response.set_header(Header::new(
        "Content-Security-Policy",
        CONTENT_SECURITY_POLICY,
    ));
    response.set_header(Header::new("Cache-Control", "no-store"));
}
