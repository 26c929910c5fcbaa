//! The screens' script and style sheet, embedded in the binary.

use rocket::get;
use rocket::http::{ContentType, Header};

/// A static asset with a one-hour cache lifetime.
#[derive(rocket::Responder)]
pub struct Asset {
    body: &'static str,
    content_type: ContentType,
    cache: Header<'static>,
}

fn asset(body: &'static str, content_type: ContentType) -> Asset {
    Asset {
        body,
        content_type,
        cache: Header::new("Cache-Control", "public, max-age=3600"),
    }
}

/// `GET /gatehouse/app.js`: upgrades the forms to JSON calls.
#[get("/gatehouse/app.js")]
pub fn script() -> Asset {
    asset(include_str!("../../static/app.js"), ContentType::JavaScript)
}

/// `GET /gatehouse/app.css`.
#[get("/gatehouse/app.css")]
pub fn stylesheet() -> Asset {
    asset(include_str!("../../static/app.css"), ContentType::CSS)
}
