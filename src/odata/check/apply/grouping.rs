//! One `groupby` or `aggregate`, checked: its paths resolved (a set's own
//! properties, or across single-valued navigations; a derived set's own
//! properties only), its aggregates validated, its aliases apart from one
//! another and from the grouping properties, and the shape of the rows it
//! makes.

use super::{own_property, Measure, Shapes, TARGET};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::{property_path, PropertyPath};
use crate::odata::model::sets::{Derived, EntitySet, Model, Property};
use crate::odata::query::syntax::{Aggregate, OrderItem, Path};

/// A grouping property.
pub(crate) enum Group<'a> {
    /// One of the grouped rows' own.
    Own(&'a Property),
    /// One reached across single-valued navigations, named by its path.
    Across(String, PropertyPath<'a>),
}

impl Group<'_> {
    /// Its name among the grouped rows' properties.
    fn name(&self) -> &str {
        match self {
            Group::Own(p) => &p.name,
            Group::Across(name, _) => name,
        }
    }

    /// The property of the rows grouped that holds it: its own, or for a
    /// value across navigations, read per row first, one named (and
    /// stored) by its path.
    pub(crate) fn property(&self) -> Property {
        match self {
            Group::Own(p) => (*p).clone(),
            Group::Across(name, found) => Property {
                name: name.clone(),
                column: name.clone(),
                edm_type: found.property.edm_type,
                nullable: true,
            },
        }
    }
}

/// A `groupby` or `aggregate`, checked against the rows it groups.
pub(crate) struct Grouping<'a> {
    /// The grouping properties, in the order named (none: one row).
    pub(crate) groups: Vec<Group<'a>>,
    /// The values computed per group, in the order named.
    pub(crate) measures: Vec<Measure>,
    /// The shape of the rows it makes (a derived set whose statement the
    /// SQL step writes): the grouping properties, those across one
    /// navigation together, then the aliases.
    pub(crate) rows: &'a EntitySet,
}

impl Grouping<'_> {
    /// Whether a grouping property lies across a navigation.
    pub(crate) fn reads_across(&self) -> bool {
        self.groups.iter().any(|g| matches!(g, Group::Across(..)))
    }

    /// The order of its rows by default: the grouping properties, ascending.
    pub(super) fn order(&self) -> Vec<OrderItem> {
        self.groups
            .iter()
            .map(|g| OrderItem {
                path: Path::single(g.name()),
                descending: false,
            })
            .collect()
    }
}

/// `paths` resolved against the rows of `read`, each named once.
pub(super) fn groups<'a>(
    model: &'a Model,
    read: &'a EntitySet,
    paths: &[Path],
) -> Result<Vec<Group<'a>>, QueryError> {
    let mut groups = Vec::new();
    for path in paths {
        if paths.iter().filter(|p| *p == path).count() > 1 {
            let msg = format!("groupby names '{path}' twice");
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
        groups.push(match read.derived {
            Some(_) => Group::Own(own_property(read, path, "group by")?),
            None => match property_path(model, read, path, TARGET)? {
                Ok(found) if found.hops.is_empty() => Group::Own(found.property),
                Ok(found) => Group::Across(path.to_string(), found),
                Err(_) => {
                    let msg = format!("cannot group by '{path}': it is a collection");
                    return Err(QueryError::new("apply_unsupported", TARGET, msg));
                }
            },
        });
    }
    Ok(groups)
}

/// The rows of `read` grouped by `groups` with `aggregates` computed per
/// group: the aggregates validated against the rows grouped (the values
/// across navigations among them), the aliases apart, and the shape of
/// the rows made, kept in `shapes`.
pub(super) fn grouping<'a>(
    read: &EntitySet,
    groups: Vec<Group<'a>>,
    aggregates: &[Aggregate],
    shapes: &'a Shapes,
) -> Result<Grouping<'a>, QueryError> {
    let widened;
    let grouped = match groups.iter().any(|g| matches!(g, Group::Across(..))) {
        false => read,
        true => {
            let mut rows = read.clone();
            let across = groups.iter().filter(|g| matches!(g, Group::Across(..)));
            rows.properties.extend(across.map(Group::property));
            widened = rows;
            &widened
        }
    };
    let measures = aggregates
        .iter()
        .map(|a| Measure::of(grouped, a))
        .collect::<Result<Vec<_>, _>>()?;
    for measure in &measures {
        let alias = measure.alias.as_str();
        let clashes = groups
            .iter()
            .any(|g| g.name() == alias || g.name().split('/').next() == Some(alias));
        if clashes || measures.iter().filter(|m| m.alias == alias).count() > 1 {
            let msg = format!("the alias {alias} names another property");
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
    }
    let listed: Vec<Property> = groups
        .iter()
        .map(|g| {
            let p = g.property();
            Property {
                column: p.name.clone(),
                ..p
            }
        })
        .collect();
    let properties: Vec<Property> = navigations_together(listed)
        .into_iter()
        .chain(measures.iter().map(Measure::property))
        .collect();
    let key = properties
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let mut rows = EntitySet::new(&read.name, &read.table, &key).public(true);
    rows.properties = properties;
    // Its statement is the SQL step's to write; a derived set's paths
    // name its own properties.
    rows.derived = Some(Derived::statement(String::new(), Vec::new()));
    Ok(Grouping {
        groups,
        measures,
        rows: shapes.keep(rows),
    })
}

/// `properties` with those across one navigation (`category/name`,
/// `category/id`) moved together, where the first of them stands: an
/// answer writes them as one nested object.
pub(super) fn navigations_together(properties: Vec<Property>) -> Vec<Property> {
    let firsts: Vec<String> = properties
        .iter()
        .map(|p| p.name.split('/').next().unwrap_or_default().to_owned())
        .collect();
    let place = |i: usize| firsts.iter().position(|f| *f == firsts[i]).unwrap_or(i);
    let mut placed: Vec<(usize, Property)> = properties
        .into_iter()
        .enumerate()
        .map(|(i, p)| (place(i), p))
        .collect();
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, p)| p).collect()
}
