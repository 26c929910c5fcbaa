//! The resource path of an OData request (what follows `/odata/`): a set, an
//! entity by key, a navigation of an entity, and an optional `/$count`.
//!
//! Keys are written bare (`Pets(3)`, `Pets('a')`) or named (`Pets(id=3)`);
//! the key value is a literal of the `$filter` grammar, checked against the
//! key property's type when the request is answered.

use crate::odata::filter::parse_filter;
use crate::odata::query::{Expr, Literal};

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

/// Why a path cannot be served: answered 404 (`unknown_resource`) or, for a
/// malformed key, 400 (`invalid_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Nothing lives at this path.
    NotFound,
    /// The key segment is not a single literal.
    InvalidKey(String),
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
    if !is_identifier(set) {
        return Err(PathError::NotFound);
    }
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

fn split_key(segment: &str) -> Result<(&str, Option<KeySegment>), PathError> {
    let Some(open) = segment.find('(') else {
        return Ok((segment, None));
    };
    let Some(inner) = segment[open + 1..].strip_suffix(')') else {
        return Err(PathError::NotFound);
    };
    Ok((&segment[..open], Some(parse_key(inner)?)))
}

fn parse_key(inner: &str) -> Result<KeySegment, PathError> {
    let invalid = || PathError::InvalidKey(format!("'{inner}' is not a key value"));
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
        Ok(Expr::Unary { .. }) | Ok(_) | Err(_) => Err(invalid()),
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
            &["Users(3"],
            &["Us-ers"],
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
                matches!(parse_resource(&[bad]), Err(PathError::InvalidKey(_))),
                "{bad}"
            );
        }
    }
}
