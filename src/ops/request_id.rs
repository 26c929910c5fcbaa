//! `X-Request-Id`: the id a request is known by in the logs and to its
//! caller. A proxy's id is kept when it is 1–64 characters of
//! `[A-Za-z0-9._-]`; anything else (spaces, control characters, longer) is
//! replaced by a new one, never echoed. Every response carries it back.

use rocket::Request;

/// The header's name.
pub const HEADER: &str = "X-Request-Id";

/// The longest id kept from a request.
pub const MAX_CHARS: usize = 64;

/// A request's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    /// The id of `req`: its own header's when that is a fit id, else one
    /// made now (the same for the whole request).
    pub fn of<'r>(req: &'r Request<'_>) -> &'r RequestId {
        req.local_cache(|| RequestId::kept_or_new(req.headers().get_one(HEADER)))
    }

    /// `sent` when it is a fit id, else a new one.
    pub fn kept_or_new(sent: Option<&str>) -> RequestId {
        match sent.filter(|id| fits(id)) {
            Some(id) => RequestId(id.to_owned()),
            None => RequestId(uuid::Uuid::new_v4().to_string()),
        }
    }

    /// The id as sent and logged.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `id` may be kept: 1–64 characters of `[A-Za-z0-9._-]`.
fn fits(id: &str) -> bool {
    (1..=MAX_CHARS).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fit_id_is_kept_and_any_other_replaced() {
        let kept = "req-42.a_B";
        assert_eq!(RequestId::kept_or_new(Some(kept)).as_str(), kept);
        let longest = "a".repeat(MAX_CHARS);
        assert_eq!(RequestId::kept_or_new(Some(&longest)).as_str(), longest);
        for unfit in ["", "with space", "tab\there", "nul\0", "é", &"a".repeat(MAX_CHARS + 1)] {
            let made = RequestId::kept_or_new(Some(unfit));
            assert_ne!(made.as_str(), unfit);
            assert!(fits(made.as_str()), "{made:?}");
        }
        assert!(fits(RequestId::kept_or_new(None).as_str()));
    }
}
