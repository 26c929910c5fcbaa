//! Resolving names against the model: what a property path such as
//! `organisation/name` or `u/email` (inside a lambda) refers to, and the error
//! every later step reports for a query the model cannot answer. Shared by the
//! checker and the SQL generator so the two can never disagree on a name.

use crate::odata::model::sets::{EntitySet, Model, Navigation, NavigationKind, Property};
use crate::odata::query::syntax::Path;

/// A query that parses but does not fit the model: an unknown name, a type
/// mismatch, an option the set does not support.
///
/// It becomes the 400 body `{"error":{"code","message","target"}}`; messages
/// speak of the model, never of SQL.
///
/// ```
/// use gatehouse::odata::{check_query, parse_query, EdmType, EntitySet, Model, Property};
/// let model = Model::new().set(
///     EntitySet::new("Pets", "pets", "id").property(Property::new("id", EdmType::Int32)),
/// );
/// let q = parse_query("$filter=nmae eq 'x'").unwrap();
/// let err = check_query(&model, &model.sets[0], &q).unwrap_err();
/// assert_eq!((err.code, err.target.as_str()), ("unknown_property", "$filter"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {message}")]
pub struct QueryError {
    /// A stable machine-readable code, such as `type_mismatch`.
    pub code: &'static str,
    /// What is wrong, for a human.
    pub message: String,
    /// The query option at fault with its `$` (`$filter`); `$expand` for
    /// anything nested in an expansion.
    pub target: String,
}

impl QueryError {
    /// An error in `target` with `code` and `message`.
    pub fn new(code: &'static str, target: &str, message: impl Into<String>) -> QueryError {
        QueryError {
            code,
            message: message.into(),
            target: target.to_owned(),
        }
    }
}

/// One step across a single-valued navigation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hop<'m> {
    /// The foreign-key column on the `from` set's table.
    pub column: &'m str,
    /// The set stepped into.
    pub to: &'m EntitySet,
}

/// What a path ends in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tail<'m> {
    /// A structural property of the last set reached.
    Property(&'m Property),
    /// A collection-valued navigation of the last set reached: its target
    /// and the column there that holds the parent's key.
    Collection {
        /// The navigation's name, for messages.
        name: &'m str,
        /// The set the collection belongs to.
        to: &'m EntitySet,
        /// The foreign-key column on the target's table.
        remote_column: &'m str,
    },
}

/// A path resolved against the model.
#[derive(Debug, Clone)]
pub(crate) struct Resolved<'m> {
    /// Which lambda variable the path starts from (an index into the
    /// variables given), or `None` for the entity being filtered.
    pub scope: Option<usize>,
    /// The single-valued navigations crossed, in order.
    pub hops: Vec<Hop<'m>>,
    /// Where the path ends.
    pub tail: Tail<'m>,
}

/// Resolves `path` from `root`, or from a lambda variable in `vars` (name and
/// set, innermost last) when the first segment names one. Errors carry
/// `target`.
pub(crate) fn resolve<'m>(
    model: &'m Model,
    root: &'m EntitySet,
    vars: &[(&str, &'m EntitySet)],
    path: &Path,
    target: &str,
) -> Result<Resolved<'m>, QueryError> {
    let segments = path.segments();
    let first = segments.first().map(String::as_str).unwrap_or_default();
    let (scope, mut set, rest) = match vars.iter().rposition(|(name, _)| *name == first) {
        Some(i) => (Some(i), vars[i].1, &segments[1..]),
        None => (None, root, segments),
    };
    // An aggregated row's group across a navigation is one property of
    // its derived set, named by the whole path.
    let whole = scope.is_none() && root.derived.is_some();
    if let Some(property) = whole
        .then(|| root.find_property(&path.to_string()))
        .flatten()
    {
        return Ok(Resolved {
            scope,
            hops: Vec::new(),
            tail: Tail::Property(property),
        });
    }
    let Some((last, middle)) = rest.split_last() else {
        let msg = format!("'{first}' stands for an entity; name one of its properties");
        return Err(QueryError::new("not_a_property", target, msg));
    };
    let mut hops = Vec::new();
    for segment in middle {
        let nav = navigation(set, segment, target)?;
        let (to, kind) = (target_set(model, nav, target)?, &nav.kind);
        match kind {
            NavigationKind::ToOne { column } => hops.push(Hop { column, to }),
            NavigationKind::ToMany { .. } => {
                let msg = format!("'{segment}' is a collection; use any or all to look inside it");
                return Err(QueryError::new("not_a_property", target, msg));
            }
        }
        set = to;
    }
    if let Some(property) = set.find_property(last) {
        return Ok(Resolved {
            scope,
            hops,
            tail: Tail::Property(property),
        });
    }
    let nav = navigation(set, last, target)?;
    match &nav.kind {
        NavigationKind::ToMany { remote_column } => Ok(Resolved {
            scope,
            hops,
            tail: Tail::Collection {
                name: &nav.name,
                to: target_set(model, nav, target)?,
                remote_column,
            },
        }),
        NavigationKind::ToOne { .. } => {
            let msg = format!("'{last}' is a navigation; name one of its properties");
            Err(QueryError::new("not_a_property", target, msg))
        }
    }
}

fn navigation<'m>(
    set: &'m EntitySet,
    name: &str,
    target: &str,
) -> Result<&'m Navigation, QueryError> {
    set.find_navigation(name).ok_or_else(|| {
        let msg = format!("{} has no property '{name}'", set.name);
        QueryError::new("unknown_property", target, msg)
    })
}

/// The set `nav` leads to; a missing one is a model declaration mistake, but
/// it still answers as an error rather than a panic.
pub(crate) fn target_set<'m>(
    model: &'m Model,
    nav: &Navigation,
    target: &str,
) -> Result<&'m EntitySet, QueryError> {
    model.target_of(nav).ok_or_else(|| {
        let msg = format!("'{}' leads to an undeclared set", nav.name);
        QueryError::new("unknown_property", target, msg)
    })
}
