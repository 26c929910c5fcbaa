//! What the planner looks up in the model: keys, navigations, and the
//! expansions a caller may read.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::odata::check::Expansion;
use crate::odata::fetch::Restriction;
use crate::odata::model::{EdmType, EntitySet, Navigation, NavigationKind};
use crate::odata::query::Literal;
use crate::odata::service::ctx::Ctx;
use crate::odata::service::path::KeySegment;
use crate::odata::service::reply::ODataError;

/// Refuses `expansions` into a set the caller may not read; answers the
/// internal columns the parents' fetch must read for them (the to-one
/// foreign keys, in order).
pub(super) fn admit(
    ctx: &Ctx<'_>,
    expansions: &[Expansion<'_, '_>],
) -> Result<Vec<String>, ODataError> {
    let mut internal = Vec::new();
    for e in expansions {
        if !e.target().readable_by(&ctx.caller) {
            return Err(ODataError::unauthorized());
        }
        if let NavigationKind::ToOne { column } = &e.nav().kind {
            internal.push(column.clone());
        }
    }
    Ok(internal)
}

/// The types of the internal columns of `expansions`' parents: each to-one
/// foreign key has its target's key type.
pub(super) fn internal_types(expansions: &[Expansion<'_, '_>]) -> Vec<EdmType> {
    expansions
        .iter()
        .filter(|e| !e.nav().is_collection())
        .map(|e| key_type(e.target()))
        .collect()
}

/// The type of `set`'s key.
pub(super) fn key_type(set: &EntitySet) -> EdmType {
    set.key_property().map_or(EdmType::Int64, |k| k.edm_type)
}

/// The table column of `set`'s key.
pub(super) fn key_column(set: &EntitySet) -> Result<String, ODataError> {
    set.key_property()
        .map(|k| k.column.clone())
        .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))
}

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
        crate::odata::typing::literal_type(&key.value),
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
    Ok(Restriction {
        column: property.column.clone(),
        values: vec![key.value.clone()],
    })
}
