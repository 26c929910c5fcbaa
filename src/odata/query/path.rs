//! The resource path of an OData request (what follows `/odata/`): a set, an
//! entity by key, a navigation of an entity, and an optional `/$count`.
//!
//! Keys are written bare (`Pets(3)`, `Pets('a')`) or named (`Pets(id=3)`);
//! the key value is a literal of the `$filter` grammar, checked against the
//! key property's type when the request is answered.

use crate::odata::query::filter::parse_filter;
use crate::odata::query::syntax::{Expr, Literal};

/// What a request addresses.
#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    /// `/odata/` (the service document).
    ServiceDocument,
    /// `/odata/$metadata`.
    Metadata,
    /// `/odata/<Set>…`.
    Set(SetPath),
}

/// A path into an entity set.
#[derive(Debug, Clone, PartialEq)]
pub struct SetPath {
    /// The entity set's name.
    pub set: String,
    /// The entity addressed by key, if any.
    pub key: Option<KeySegment>,
    /// The navigation followed from that entity, if any.
    pub navigation: Option<String>,
    /// `/$count` ends the path.
    pub count: bool,
}

/// `(<key>)` or `(<name>=<key>)` after a set name.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySegment {
    /// The key property named in the segment, if it was named.
    pub name: Option<String>,
    /// The key value.
    pub value: Literal,
}

/// Why a path cannot be served: answered 404 (`not_found`) or, for a
/// malformed key, 400 (`invalid_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Nothing lives at this path.
    NotFound,
    /// The key segment after the set name is malformed: not closed, followed
    /// by more text, or not a single literal. `set` is kept so that the
    /// service can answer for an unknown set (404) before the key (400).
    InvalidKey {
        /// The entity set named before the key.
        set: String,
        /// What is wrong with the key, for a human.
        message: String,
    },
}

/// Parses the decoded segments after `/odata/`.
///
/// ```ignore
/// let r = parse_resource(&["Users(3)", "posts", "$count"]).unwrap();
/// ```
pub fn parse_resource(segments: &[&str]) -> Result<Resource, PathError> {
    let segments: Vec<&str> = segments.iter().copied().filter(|s| !s.is_empty()).collect();
    let Some((first, rest)) = segments.split_first() else {
        return Ok(Resource::ServiceDocument);
    };
    if *first == "$metadata" {
        return if rest.is_empty() {
            Ok(Resource::Metadata)
        } else {
            Err(PathError::NotFound)
        };
    }
    let (set, key) = split_key(first)?;
    let mut path = SetPath {
        set: set.to_owned(),
        key,
        navigation: None,
        count: false,
    };
    let mut rest = rest;
    if path.key.is_some() {
        if let Some((nav, tail)) = rest.split_first() {
            if *nav != "$count" {
                if !is_identifier(nav) {
                    return Err(PathError::NotFound);
                }
                path.navigation = Some((*nav).to_owned());
                rest = tail;
            }
        }
    }
    match rest {
        [] => Ok(Resource::Set(path)),
        ["$count"] if path.key.is_none() || path.navigation.is_some() => {
            path.count = true;
            Ok(Resource::Set(path))
        }
        _ => Err(PathError::NotFound),
    }
}

/// Splits `Set(<key>)` into the set name and its key. A name that is not an
/// identifier is no set (404); once the name is one, anything wrong from the
/// `(` on is a malformed key (400), so `Pets(3` is not mistaken for a set
/// called `Pets(3`.
fn split_key(segment: &str) -> Result<(&str, Option<KeySegment>), PathError> {
    let (set, key) = match segment.find('(') {
        Some(open) => (&segment[..open], Some(&segment[open..])),
        None => (segment, None),
    };
    if !is_identifier(set) {
        return Err(PathError::NotFound);
    }
    let Some(key) = key else {
        return Ok((set, None));
    };
    let invalid = |message: String| PathError::InvalidKey {
        set: set.to_owned(),
        message,
    };
    let Some(inner) = key[1..].strip_suffix(')') else {
        return Err(invalid(format!("the key '{key}' does not end with ')'")));
    };
    let key = parse_key(inner).map_err(invalid)?;
    Ok((set, Some(key)))
}

/// The key inside the parentheses: one literal, bare or named.
fn parse_key(inner: &str) -> Result<KeySegment, String> {
    let (name, value) = match inner.split_once('=') {
        Some((name, value)) if is_identifier(name.trim()) && !name.contains('\'') => {
            (Some(name.trim().to_owned()), value)
        }
        _ => (None, inner),
    };
    match parse_filter(value.trim()) {
        Ok(Expr::Literal(literal)) if literal != Literal::Null => Ok(KeySegment {
            name,
            value: literal,
        }),
        Ok(_) | Err(_) => Err(format!("'{inner}' is not a key value")),
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(path: &[&str]) -> SetPath {
        match parse_resource(path) {
            Ok(Resource::Set(p)) => p,
            other => panic!("{path:?} gave {other:?}"),
        }
    }

    #[test]
    fn documents_and_collections() {
        assert_eq!(parse_resource(&[]), Ok(Resource::ServiceDocument));
        assert_eq!(parse_resource(&[""]), Ok(Resource::ServiceDocument));
        assert_eq!(parse_resource(&["$metadata"]), Ok(Resource::Metadata));
        let p = set(&["Users"]);
        assert_eq!((p.set.as_str(), p.key, p.count), ("Users", None, false));
        assert!(set(&["Users", "$count"]).count);
    }

    #[test]
    fn keys_bare_named_and_quoted() {
        let k = set(&["Users(3)"]).key.unwrap();
        assert_eq!((k.name, k.value), (None, Literal::Int(3)));
        let k = set(&["Users(id=3)"]).key.unwrap();
        assert_eq!((k.name.as_deref(), k.value), (Some("id"), Literal::Int(3)));
        let k = set(&["Pets('it''s = ok')"]).key.unwrap();
        assert_eq!(
            (k.name, k.value),
            (None, Literal::String("it's = ok".into()))
        );
        let p = set(&["Users(3)", "posts", "$count"]);
        assert_eq!((p.navigation.as_deref(), p.count), (Some("posts"), true));
    }

    #[test]
    fn bad_paths_are_not_found_and_bad_keys_invalid() {
        for bad in [
            &["$metadata", "x"][..],
            &["Users", "posts"],
            &["Users(3)", "$count"],
            &["Users(3)", "a", "b"],
            &["Us-ers"],
            &["Us-ers(3)"],
            &["(3)"],
            &["Users)"],
            &["Users", "$count", "x"],
        ] {
            assert_eq!(parse_resource(bad), Err(PathError::NotFound), "{bad:?}");
        }
        for bad in [
            "Users()",
            "Users(null)",
            "Users(1,2)",
            "Users(id eq 1)",
            "Users(x')",
        ] {
            assert!(
                matches!(parse_resource(&[bad]), Err(PathError::InvalidKey { .. })),
                "{bad}"
            );
        }
    }

    fn key_error(segment: &str) -> (String, String) {
        match parse_resource(&[segment]) {
            Err(PathError::InvalidKey { set, message }) => (set, message),
            other => panic!("{segment} gave {other:?}"),
        }
    }

    #[test]
    fn an_unclosed_key_is_a_malformed_key_of_its_set() {
        assert_eq!(
            key_error("Pets(3"),
            ("Pets".into(), "the key '(3' does not end with ')'".into())
        );
        assert_eq!(key_error("Pets(").0, "Pets");
        assert_eq!(key_error("Pets('a)'").0, "Pets");
        assert_eq!(
            key_error("Pets(3)x").1,
            "the key '(3)x' does not end with ')'"
        );
    }

    #[test]
    fn every_malformed_key_form_is_invalid_not_missing() {
        for bad in [
            "Pets(",
            "Pets()",
            "Pets(3",
            "Pets(3))",
            "Pets((3)",
            "Pets(id=)",
            "Pets(=3)",
            "Pets(id=3",
            "Pets(3)(4)",
            "Pets(')",
        ] {
            let (set, _) = key_error(bad);
            assert_eq!(set, "Pets", "{bad}");
        }
        let k = set(&["Pets(')')"]).key.unwrap();
        assert_eq!(
            k.value,
            Literal::String(")".into()),
            "a ')' inside a string"
        );
    }
}
