//! The DBSC headers, as structured field values (RFC 9651) read and written
//! by the maintained `sfv` crate.
//!
//! - `Secure-Session-Registration` (and the older `Sec-Session-Registration`):
//!   a list whose member is the inner list of accepted algorithms with the
//!   registration `path` and its `challenge` as parameters:
//!   `(ES256 RS256);path="/auth/dbsc/register";challenge="…"`.
//! - `Secure-Session-Challenge`: a string item with the DBSC session it is
//!   for as parameter `id`: `"…";id="…"`.
//! - `Secure-Session-Response` (and `Sec-Session-Response`): the proof, a
//!   string item.
//! - `Sec-Secure-Session-Id`: the DBSC session a refresh is for, a string
//!   item.

use sfv::{Item, KeyRef, ListSerializer, Parser, StringRef, TokenRef};

/// The registration header's name.
pub const REGISTRATION: &str = "Secure-Session-Registration";
/// The name Chrome's origin trials used for it.
pub const REGISTRATION_OLD: &str = "Sec-Session-Registration";
/// The proof's header.
pub const RESPONSE: &str = "Secure-Session-Response";
/// The name Chrome's origin trials used for it.
pub const RESPONSE_OLD: &str = "Sec-Session-Response";
/// The challenge header.
pub const CHALLENGE: &str = "Secure-Session-Challenge";
/// The header naming the DBSC session of a refresh.
pub const SESSION_ID: &str = "Sec-Secure-Session-Id";

/// The registration header's value: ES256 and RS256 accepted, the
/// registration at `path`, answering `challenge`.
pub fn registration(path: &str, challenge: &str) -> Option<String> {
    let mut list = ListSerializer::new();
    {
        let mut algorithms = list.inner_list();
        for alg in ["ES256", "RS256"] {
            algorithms.bare_item(TokenRef::from_str(alg).ok()?);
        }
        let _ = algorithms
            .finish()
            .parameter(KeyRef::constant("path"), StringRef::from_str(path).ok()?)
            .parameter(
                KeyRef::constant("challenge"),
                StringRef::from_str(challenge).ok()?,
            );
    }
    list.finish()
}

/// The challenge header's value: `challenge` for the DBSC session `id`.
pub fn challenge(challenge: &str, id: &str) -> Option<String> {
    let mut list = ListSerializer::new();
    let _ = list
        .bare_item(StringRef::from_str(challenge).ok()?)
        .parameter(KeyRef::constant("id"), StringRef::from_str(id).ok()?);
    list.finish()
}

/// The string a header of one string item carries (a proof, a DBSC session
/// id); `None` when it is anything else. A bare token is taken too, as
/// early implementations sent the id unquoted.
pub fn string_item(value: &str) -> Option<String> {
    let item: Item = Parser::new(value).parse().ok()?;
    if let Some(s) = item.bare_item.as_string() {
        return Some(s.as_str().to_owned());
    }
    item.bare_item.as_token().map(|t| t.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_header_is_the_drafts_list() {
        assert_eq!(
            registration("/auth/dbsc/register", "abc_1-2").as_deref(),
            Some(r#"(ES256 RS256);path="/auth/dbsc/register";challenge="abc_1-2""#)
        );
    }

    #[test]
    fn a_challenge_names_its_session() {
        let value = challenge("c-1", "s_2").unwrap();
        assert_eq!(value, r#""c-1";id="s_2""#);
        let list: sfv::List = Parser::new(&value).parse().unwrap();
        let Some(sfv::ListEntry::Item(item)) = list.first() else {
            panic!("one item");
        };
        assert_eq!(item.bare_item.as_string().unwrap().as_str(), "c-1");
    }

    #[test]
    fn a_string_item_is_read_and_anything_else_is_not() {
        assert_eq!(string_item(r#""a.b.c""#).as_deref(), Some("a.b.c"));
        assert_eq!(string_item("abc").as_deref(), Some("abc"));
        assert_eq!(string_item(r#""a", "b""#), None);
        assert_eq!(string_item("(a b)"), None);
        assert_eq!(string_item("\"unterminated"), None);
        assert_eq!(string_item(""), None);
    }
}
