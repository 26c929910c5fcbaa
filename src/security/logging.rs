//! What of a request may reach a log line: its URI with every secret in the
//! path replaced by `…` (the reset token of the mailed link and of the
//! set-password screen, and the address beside it).

use std::fmt;

use rocket::Request;

/// Path prefixes followed by a secret: everything after them is hidden.
const SECRET_AFTER: [&str; 2] = ["/password/reset/", "/login/set-password/"];

/// A request's method and URI as they may be logged.
pub struct Loggable<'a>(&'a str, Option<&'a str>);

/// The loggable form of `req`'s URI.
pub fn loggable<'a>(req: &'a Request<'_>) -> Loggable<'a> {
    let uri = req.uri();
    Loggable(uri.path().as_str(), uri.query().map(|q| q.as_str()))
}

impl fmt::Display for Loggable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Loggable(path, query) = *self;
        match SECRET_AFTER.iter().find(|prefix| path.starts_with(*prefix)) {
            // The mailed link's query holds the address only; it goes too.
            Some(prefix) => write!(f, "{prefix}…"),
            None => match query {
                Some(query) => write!(f, "{path}?{query}"),
                None => f.write_str(path),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(path: &str, query: Option<&str>) -> String {
        Loggable(path, query).to_string()
    }

    #[test]
    fn reset_tokens_are_hidden() {
        assert_eq!(
            shown("/password/reset/abc123", Some("email=a%40b.c")),
            "/password/reset/…"
        );
        assert_eq!(
            shown("/login/set-password/abc123/a%40b.c", None),
            "/login/set-password/…"
        );
    }

    #[test]
    fn other_paths_are_shown_whole() {
        assert_eq!(shown("/odata/Items", Some("$top=3")), "/odata/Items?$top=3");
        assert_eq!(shown("/login", None), "/login");
    }
}
