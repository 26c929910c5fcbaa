//! What a request's path names, looked up in the model: the entity's key
//! and the navigation followed from it.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::odata::model::sets::{EntitySet, Navigation};
use crate::odata::plan::error::ODataError;
use crate::odata::query::path::KeySegment;
use crate::odata::query::syntax::Literal;
use crate::odata::sql::fetch::Restriction;

/// Navigation `name` of `set`, or 404.
pub(super) fn navigation<'m>(set: &'m EntitySet, name: &str) -> Result<&'m Navigation, ODataError> {
    set.find_navigation(name)
        .ok_or_else(|| ODataError::not_found(format!("{} has no navigation '{name}'", set.name)))
}

/// Characters escaped in a key written into a URL path.
const KEY_IN_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// A key as written in a resource path, URL-safe.
pub(crate) fn key_in_path(key: &Literal) -> String {
    utf8_percent_encode(&key.to_string(), KEY_IN_PATH).to_string()
}

/// The row of `set` with `key`, as a restriction on its key column; 400
/// for a key of another type or name.
pub(super) fn key_restriction(
    set: &EntitySet,
    key: &KeySegment,
) -> Result<Restriction, ODataError> {
    let property = set
        .key_property()
        .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))?;
    if key.name.as_ref().is_some_and(|n| *n != property.name) {
        return Err(ODataError::invalid_key(format!(
            "{} is keyed by '{}'",
            set.name, property.name
        )));
    }
    let fits = match (
        property.edm_type,
        crate::odata::check::typing::literal_type(&key.value),
    ) {
        (expected, Some(given)) if expected == given => true,
        (expected, Some(given)) => expected.is_integer() && given.is_integer(),
        _ => false,
    };
    if !fits {
        return Err(ODataError::invalid_key(format!(
            "the key of {} is an {}; '{}' is not",
            set.name,
            property.edm_type.name(),
            key.value
        )));
    }
    Ok(Restriction::of(
        property.column.clone(),
        vec![key.value.clone()],
    ))
}
