//! Cross-origin refusal for state-changing requests.

use rocket::http::Status;
use rocket::request::{FromRequest, Outcome, Request};

use crate::shared::Shared;

/// Proof that a state-changing request did not come from another site's page.
///
/// A browser that sends `Sec-Fetch-Site` must say `same-origin` or `none`;
/// one that sends only `Origin` must match `base_url`; a request with neither
/// (a script, `curl`) passes. Otherwise the request gets 403.
#[derive(Debug, Clone, Copy)]
pub struct SameOrigin;

/// Whether the request's browser headers allow a state change.
pub fn allowed(req: &Request<'_>, origin_of_site: &str) -> bool {
    if let Some(site) = req.headers().get_one("Sec-Fetch-Site") {
        return matches!(site.trim(), "same-origin" | "none");
    }
    match req.headers().get_one("Origin") {
        Some(origin) => origin
            .trim()
            .trim_end_matches('/')
            .eq_ignore_ascii_case(origin_of_site),
        None => true,
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for SameOrigin {
    type Error = &'static str;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let Some(gh) = Shared::of(req) else {
            return Outcome::Error((Status::InternalServerError, "gatehouse is not attached"));
        };
        let site = gh.settings.base_url.origin().ascii_serialization();
        if allowed(req, &site) {
            Outcome::Success(SameOrigin)
        } else {
            tracing::warn!(path = %req.uri(), "cross-origin request refused");
            Outcome::Error((Status::Forbidden, "cross_origin"))
        }
    }
}
