//! Checking a parsed [`Query`] against the model: the second pure step of the
//! `/odata` pipeline. Every name must exist on the entity set (or on the sets
//! its navigations lead to), every operator and function must receive values
//! of fitting types, and options the set cannot honour are refused, each with
//! a [`QueryError`] naming the option at fault.
//!
//! What passes comes out as a [`Checked`] query: the properties it selects,
//! its filter as a typed tree with every path resolved, its search with the
//! properties searched, its sort keys, and its expansions, each checked in
//! turn. The SQL step takes a `Checked`, never a raw `Query`, so a request is
//! checked once however many statements answer it.

use crate::odata::check::resolve::{target_set, QueryError};
use crate::odata::check::typed::{check_condition, property_path, PropertyPath, Typed};
use crate::odata::model::sets::{EntitySet, Model, Navigation, Property};
use crate::odata::query::syntax::{Query, SearchExpr, Select};

/// A query that fits the model, resolved against it.
///
/// Built by [`check_query`] only. Paging (`$top`, `$skip`) and `$count` are
/// not part of it: they are read from the query by [`Page`](crate::odata::Page) and
/// the service.
#[derive(Debug, Clone)]
pub struct Checked<'m, 'q> {
    set: &'m EntitySet,
    selected: Vec<&'m Property>,
    filter: Option<Typed<'m>>,
    search: Option<Search<'m, 'q>>,
    orderby: Vec<Order<'m>>,
    expand: Vec<Expansion<'m, 'q>>,
}

/// One `$orderby` key, resolved to a property.
#[derive(Debug, Clone)]
pub(crate) struct Order<'m> {
    /// The property sorted on.
    pub path: PropertyPath<'m>,
    /// `desc` was given.
    pub descending: bool,
}

/// A `$search` over a set that has searchable properties.
#[derive(Debug, Clone)]
pub(crate) struct Search<'m, 'q> {
    /// The search expression.
    pub expr: &'q SearchExpr,
    /// The properties every term is looked for in (at least one).
    pub properties: Vec<&'m Property>,
}

/// One `$expand` item: the navigation, the set it leads to, and its nested
/// options, checked against that set.
#[derive(Debug, Clone)]
pub struct Expansion<'m, 'q> {
    nav: &'m Navigation,
    target: &'m EntitySet,
    options: &'q Query,
    checked: Checked<'m, 'q>,
}

impl<'m, 'q> Checked<'m, 'q> {
    /// The set the query reads.
    pub fn set(&self) -> &'m EntitySet {
        self.set
    }

    /// The properties a response carries: those `$select` names (in
    /// declaration order) plus the key, or all of them.
    pub fn selected(&self) -> &[&'m Property] {
        &self.selected
    }

    /// The navigations to expand, in the order given.
    pub fn expand(&self) -> &[Expansion<'m, 'q>] {
        &self.expand
    }

    /// `$filter` as a typed condition.
    pub(crate) fn filter(&self) -> Option<&Typed<'m>> {
        self.filter.as_ref()
    }

    /// `$search`, with the properties it looks in.
    pub(crate) fn search(&self) -> Option<&Search<'m, 'q>> {
        self.search.as_ref()
    }

    /// The `$orderby` keys, most significant first.
    pub(crate) fn orderby(&self) -> &[Order<'m>] {
        &self.orderby
    }
}

impl<'m, 'q> Expansion<'m, 'q> {
    /// The navigation expanded.
    pub fn nav(&self) -> &'m Navigation {
        self.nav
    }

    /// The set it leads to.
    pub fn target(&self) -> &'m EntitySet {
        self.target
    }

    /// The nested options as sent (their `$top`, `$skip` and `$count`
    /// page each parent's collection).
    pub fn options(&self) -> &'q Query {
        self.options
    }

    /// The nested options, checked against [`target`](Self::target).
    pub fn checked(&self) -> &Checked<'m, 'q> {
        &self.checked
    }
}

/// Checks every option of `query` against `set` of `model`, and its
/// expansions against the sets they lead to.
///
/// ```
/// use gatehouse::odata::{check_query, parse_query, EdmType, EntitySet, Model, Property};
/// let model = Model::new().set(
///     EntitySet::new("Pets", "pets", "id")
///         .property(Property::new("id", EdmType::Int32).not_null())
///         .property(Property::new("name", EdmType::String)),
/// );
/// let pets = model.find("Pets").unwrap();
/// let query = parse_query("$filter=name eq 'Rex'&$select=name").unwrap();
/// let checked = check_query(&model, pets, &query).unwrap();
/// let selected: Vec<_> = checked.selected().iter().map(|p| p.name.as_str()).collect();
/// assert_eq!(selected, ["id", "name"]);
/// let err = check_query(&model, pets, &parse_query("$filter=name eq 5").unwrap()).unwrap_err();
/// assert_eq!(err.code, "type_mismatch");
/// ```
pub fn check_query<'m, 'q>(
    model: &'m Model,
    set: &'m EntitySet,
    query: &'q Query,
) -> Result<Checked<'m, 'q>, QueryError> {
    check_options(model, set, query, None)
}

/// Checks `query`; inside an expansion every error names `nested`.
fn check_options<'m, 'q>(
    model: &'m Model,
    set: &'m EntitySet,
    query: &'q Query,
    nested: Option<&str>,
) -> Result<Checked<'m, 'q>, QueryError> {
    let target = |option: &'static str| nested.unwrap_or(option);
    if query.apply.is_some() && set.derived.is_none() {
        let msg = format!("{} cannot be grouped or aggregated", set.name);
        return Err(QueryError::new("apply_unsupported", "$apply", msg));
    }
    let filter = match &query.filter {
        Some(filter) => Some(check_condition(model, set, filter, target("$filter"))?),
        None => None,
    };
    let search = match &query.search {
        Some(expr) => {
            let properties: Vec<&Property> = set.searchable_properties().collect();
            if properties.is_empty() {
                let msg = format!("{} cannot be searched", set.name);
                return Err(QueryError::new(
                    "search_unsupported",
                    target("$search"),
                    msg,
                ));
            }
            Some(Search { expr, properties })
        }
        None => None,
    };
    let mut orderby = Vec::with_capacity(query.orderby.len());
    for item in &query.orderby {
        let target = target("$orderby");
        match property_path(model, set, &item.path, target)? {
            Ok(path) => orderby.push(Order {
                path,
                descending: item.descending,
            }),
            Err(name) => {
                let msg = format!("cannot order by the collection '{name}'");
                return Err(QueryError::new("not_sortable", target, msg));
            }
        }
    }
    if let Some(Select::Paths(paths)) = &query.select {
        for path in paths {
            let name = path.to_string();
            if path.segments().len() != 1 || set.find_property(&name).is_none() {
                let msg = format!("{} has no property '{name}' to select", set.name);
                return Err(QueryError::new("unknown_property", target("$select"), msg));
            }
        }
    }
    let mut expand = Vec::with_capacity(query.expand.len());
    for item in &query.expand {
        let name = item.path.to_string();
        let nav = (item.path.segments().len() == 1)
            .then(|| set.find_navigation(&name))
            .flatten()
            .ok_or_else(|| {
                let msg = format!("{} has no navigation '{name}' to expand", set.name);
                QueryError::new("unknown_property", "$expand", msg)
            })?;
        let to = target_set(model, nav, "$expand")?;
        expand.push(Expansion {
            nav,
            target: to,
            options: &item.options,
            checked: check_options(model, to, &item.options, Some("$expand"))?,
        });
    }
    Ok(Checked {
        set,
        selected: selected_properties(set, query.select.as_ref()),
        filter,
        search,
        orderby,
        expand,
    })
}

/// The properties a response carries: those `$select` names (in declaration
/// order) plus the key, or all of them.
fn selected_properties<'s>(set: &'s EntitySet, select: Option<&Select>) -> Vec<&'s Property> {
    let chosen = |p: &Property| match select {
        Some(Select::Paths(paths)) => {
            p.name == set.key
                || paths
                    .iter()
                    .any(|path| path.segments() == [p.name.as_str()])
        }
        _ => true,
    };
    set.properties.iter().filter(|p| chosen(p)).collect()
}

#[cfg(test)]
#[path = "checked_tests.rs"]
mod tests;
