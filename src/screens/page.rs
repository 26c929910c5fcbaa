//! A rendered screen as a response: the HTML and, whatever path it answers,
//! the screen headers (the content security policy and no caching, beside
//! the headers every response carries).

use rocket::request::Request;
use rocket::response::content::RawHtml;
use rocket::response::{self, Responder};

use crate::security::screen_headers;

/// A screen Gatehouse rendered. Its headers come with it, so a page served
/// under any path (`/account`, a host's prefix) carries them.
#[derive(Debug, Clone)]
pub struct Page(String);

impl Page {
    /// The rendered `html`.
    pub(super) fn new(html: String) -> Self {
        Self(html)
    }
}

impl<'r> Responder<'r, 'static> for Page {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let mut response = RawHtml(self.0).respond_to(req)?;
        // The fairing adds the OpenID providers' origins to `form-action`.
        screen_headers(&mut response, &[]);
        Ok(response)
    }
}
