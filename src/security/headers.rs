//! Security headers: a few on every response, more on screens and auth
//! endpoints. A screen carries its headers by what it is (`screens::Page`
//! adds them, under whatever path it answers); the answers of the sign-in
//! endpoints (JSON that may hold a new key or recovery codes, redirects)
//! get them by path.

use rocket::http::Header;
use rocket::Response;

/// The content security policy of the screens: only our own scripts, styles
/// and images; no framing; forms post only to us (and, where a form's
/// answer sends the browser on to an OpenID provider, to that provider).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// [`CONTENT_SECURITY_POLICY`] with `providers` (origins) added to
/// `form-action`: a browser follows a form's redirect only to a target the
/// form may post to.
pub fn content_security_policy(providers: &[String]) -> String {
    if providers.is_empty() {
        return CONTENT_SECURITY_POLICY.to_owned();
    }
    let targets = format!("form-action 'self' {}", providers.join(" "));
    CONTENT_SECURITY_POLICY.replace("form-action 'self'", &targets)
}

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

/// Adds the screen headers to `response`: the policy (forms may also lead
/// to the origins of `providers`) and no caching.
pub fn screen_headers(response: &mut Response<'_>, providers: &[String]) {
    response.set_header(Header::new(
        "Content-Security-Policy",
        content_security_policy(providers),
    ));
    response.set_header(Header::new("Cache-Control", "no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_may_lead_to_the_providers_and_nowhere_else() {
        assert_eq!(content_security_policy(&[]), CONTENT_SECURITY_POLICY);
        let policy = content_security_policy(&["https://id.acme.example".to_owned()]);
        assert!(policy.contains("form-action 'self' https://id.acme.example;"), "{policy}");
        assert!(policy.contains("default-src 'none'"));
    }
}
