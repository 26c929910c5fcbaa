//! The screens' script and style sheet, embedded in the binary, as the
//! responses their routes (`routes/assets.rs`) answer.

use rocket::http::{ContentType, Header};

/// The screens' script: upgrades the forms to JSON calls.
pub const SCRIPT: &str = include_str!("../../static/app.js");

/// The screens' style sheet.
pub const STYLESHEET: &str = include_str!("../../static/app.css");

/// A static asset with a one-hour cache lifetime.
#[derive(rocket::Responder)]
pub struct Asset {
    body: &'static str,
    content_type: ContentType,
    cache: Header<'static>,
}

/// `body` served as `content_type`, cacheable for an hour.
pub fn asset(body: &'static str, content_type: ContentType) -> Asset {
    Asset {
        body,
        content_type,
        cache: Header::new("Cache-Control", "public, max-age=3600"),
    }
}
