//! `$apply` checked against the set it reads, once: every refusal a
//! `$apply` can meet is made here, and what passes comes out as a
//! [`CheckedApply`], from which the SQL step writes the rows it makes
//! (`sql/aggregation`, `sql/hierarchy`) without refusing anything.
//!
//! Served are one sequence (`filter` and `search`, then `groupby` or
//! `aggregate`, then `filter`, `orderby`, `skip`, `top`, `groupby` and
//! `aggregate`), a `concat` of such sequences (`concat`), or a hierarchy's
//! functions (`hierarchy`). A grouping (`grouping`) resolves its paths,
//! validates its aggregates (`measure`) and makes rows of a shape known
//! before any SQL: the grouping properties and the aliases. What follows a
//! grouping is checked against that shape, kept in [`Shapes`] for as long
//! as the checked form refers to it.

mod concat;
mod grouping;
mod hierarchy;
mod measure;

use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::{check_condition, Typed};
use crate::odata::model::sets::{EntitySet, Model, Property};
use crate::odata::query::syntax::{
    Aggregate, Apply, Expr, OrderItem, Path, SearchExpr, Transformation,
};

pub(crate) use concat::{BRANCH, ROW};
pub(crate) use grouping::{Group, Grouping};
pub(crate) use hierarchy::{CheckedHierarchy, TreeShape};
pub(crate) use measure::Measure;

/// The option every error of `$apply` names.
const TARGET: &str = "$apply";

/// A `$apply`, checked against the set it reads.
pub(crate) enum CheckedApply<'a> {
    /// One sequence (a `concat` of one branch too).
    Sequence(Sequence<'a>),
    /// A `concat` of two branches or more.
    Concat(Concat<'a>),
    /// A hierarchy's functions.
    Hierarchy(CheckedHierarchy<'a>),
}

/// One sequence without `concat`: the set's rows restricted, grouped, and
/// then read by each further step in turn.
pub(crate) struct Sequence<'a> {
    /// The set whose rows are grouped.
    pub(crate) set: &'a EntitySet,
    /// What restricts them before they are grouped, besides the caller's
    /// scope.
    pub(crate) restriction: Restriction<'a>,
    /// The first grouping, of the set's rows.
    pub(crate) grouping: Grouping<'a>,
    /// What reads the grouped rows, in turn.
    pub(crate) steps: Vec<Step<'a>>,
    /// The order the rows come in when `$orderby` names none: the last
    /// grouping's properties, ascending, after the `orderby`s since.
    pub(crate) order: Vec<OrderItem>,
}

/// The `filter`s and `search`es that pick a set's rows.
pub(crate) struct Restriction<'a> {
    /// Each `filter`, typed against the set.
    pub(crate) filters: Vec<Typed<'a>>,
    /// Each `search`.
    pub(crate) searches: Vec<&'a SearchExpr>,
    /// The properties a search looks in: at least one when there are
    /// searches.
    pub(crate) searched: Vec<&'a Property>,
}

/// One step over grouped rows.
pub(crate) enum Step<'a> {
    /// `groupby` or `aggregate` of the rows so far.
    Group(Grouping<'a>),
    /// `filter`, typed against the rows so far.
    Filter(Typed<'a>),
    /// `top` or `skip`: the rows in `order`, `skip` of them left out, at
    /// most `top` kept.
    Slice {
        /// The most rows kept.
        top: u64,
        /// The rows left out first.
        skip: u64,
        /// Their order at that step.
        order: Vec<OrderItem>,
    },
}

/// A `concat` of two sequences or more, over one set.
pub(crate) struct Concat<'a> {
    /// The set the branches read.
    pub(crate) set: &'a EntitySet,
    /// The branches, in order.
    pub(crate) branches: Vec<Sequence<'a>>,
    /// The properties of every branch's rows, each once, nullable (another
    /// branch lacks it), those across one navigation together.
    pub(crate) properties: Vec<Property>,
}

/// The shapes of the rows a checked `$apply`'s groupings make: kept apart
/// from it, since its typed conditions and groups refer to them.
#[derive(Default)]
pub(crate) struct Shapes(typed_arena::Arena<EntitySet>);

impl Shapes {
    /// Keeps `rows` for as long as `self` lives.
    fn keep(&self, rows: EntitySet) -> &EntitySet {
        self.0.alloc(rows)
    }
}

/// Checks `apply` against `set` of `model`: the shape of its sequences,
/// every path, type, alias and order; the rows its groupings make kept in
/// `shapes`.
pub(crate) fn check_apply<'a>(
    model: &'a Model,
    set: &'a EntitySet,
    apply: &'a Apply,
    shapes: &'a Shapes,
) -> Result<CheckedApply<'a>, QueryError> {
    if hierarchy::is_hierarchy(&apply.0) {
        return hierarchy::check(model, set, &apply.0).map(CheckedApply::Hierarchy);
    }
    let branches = concat::branches(&apply.0)?;
    let mut sequences = Vec::with_capacity(branches.len());
    for steps in &branches {
        sequences.push(sequence(model, set, steps, shapes)?);
    }
    let last = sequences.pop();
    match (last, sequences.is_empty()) {
        (Some(one), true) => Ok(CheckedApply::Sequence(one)),
        (last, _) => {
            sequences.extend(last);
            let properties = concat::all_properties(sequences.iter().map(Sequence::rows))?;
            Ok(CheckedApply::Concat(Concat {
                set,
                branches: sequences,
                properties,
            }))
        }
    }
}

impl<'a> Sequence<'a> {
    /// The shape of the rows the sequence ends with: its last grouping's.
    pub(crate) fn rows(&self) -> &'a EntitySet {
        let last = self.steps.iter().rev().find_map(|step| match step {
            Step::Group(grouping) => Some(grouping.rows),
            _ => None,
        });
        last.unwrap_or(self.grouping.rows)
    }
}

/// One sequence without `concat` over `set`, checked step by step.
fn sequence<'a>(
    model: &'a Model,
    set: &'a EntitySet,
    steps: &[&'a Transformation],
    shapes: &'a Shapes,
) -> Result<Sequence<'a>, QueryError> {
    let mut filters: Vec<&'a Expr> = Vec::new();
    let mut searches: Vec<&'a SearchExpr> = Vec::new();
    let mut first: Option<(Restriction<'a>, Grouping<'a>)> = None;
    let mut then = Vec::new();
    let mut rows: Option<&'a EntitySet> = None;
    let mut order = Vec::new();
    for step in steps {
        match (rows, grouping_in(step)?) {
            (_, None) if matches!(step, Transformation::Identity) => {}
            (None, Some((paths, aggregates))) => {
                let groups = grouping::groups(model, set, paths)?;
                let searches = std::mem::take(&mut searches);
                let restriction = restriction(model, set, &filters, searches)?;
                let grouping = grouping::grouping(set, groups, aggregates, shapes)?;
                (rows, order) = (Some(grouping.rows), grouping.order());
                first = Some((restriction, grouping));
            }
            (Some(read), Some((paths, aggregates))) => {
                let groups = grouping::groups(model, read, paths)?;
                let grouping = grouping::grouping(read, groups, aggregates, shapes)?;
                (rows, order) = (Some(grouping.rows), grouping.order());
                then.push(Step::Group(grouping));
            }
            (None, None) => match step {
                Transformation::Filter(expr) => filters.push(expr),
                Transformation::Search(expr) => searches.push(expr),
                other => return refuse(&format!("{} before groupby or aggregate", name(other))),
            },
            (Some(read), None) => match step {
                // The grouped rows have no navigations: a path names one of
                // their properties, whole (`category/name`) for a group
                // across one.
                Transformation::Filter(expr) => {
                    then.push(Step::Filter(check_condition(model, read, expr, TARGET)?));
                }
                Transformation::OrderBy(items) => reorder(read, items, &mut order)?,
                Transformation::Top(n) => then.push(Step::Slice {
                    top: *n,
                    skip: 0,
                    order: order.clone(),
                }),
                Transformation::Skip(n) => then.push(Step::Slice {
                    top: u64::MAX,
                    skip: *n,
                    order: order.clone(),
                }),
                other => return refuse(&format!("{} after groupby or aggregate", name(other))),
            },
        }
    }
    let Some((restriction, grouping)) = first else {
        return Err(QueryError::new(
            "apply_unsupported",
            TARGET,
            "a $apply without groupby or aggregate is not supported: use $filter and $search",
        ));
    };
    Ok(Sequence {
        set,
        restriction,
        grouping,
        steps: then,
        order,
    })
}

/// A `groupby`'s or `aggregate`'s paths and aggregates, as asked.
type GroupingAsked<'s> = (&'s [Path], &'s [Aggregate]);

/// The paths and aggregates of a `groupby` or `aggregate`; `None` for any
/// other step.
fn grouping_in(step: &Transformation) -> Result<Option<GroupingAsked<'_>>, QueryError> {
    Ok(match step {
        Transformation::GroupBy { paths, then } => match then.as_ref().map(|a| a.0.as_slice()) {
            None => Some((paths, &[])),
            Some([Transformation::Aggregate(items)]) => Some((paths, items)),
            Some(_) => return refuse("a groupby sequence other than one aggregate"),
        },
        Transformation::Aggregate(items) => Some((&[], items)),
        _ => None,
    })
}

/// `filters` typed against `set`, and `searches` if `set` can be searched.
fn restriction<'a>(
    model: &'a Model,
    set: &'a EntitySet,
    filters: &[&Expr],
    searches: Vec<&'a SearchExpr>,
) -> Result<Restriction<'a>, QueryError> {
    let filters = filters
        .iter()
        .map(|filter| check_condition(model, set, filter, TARGET))
        .collect::<Result<Vec<_>, _>>()?;
    let searched: Vec<&Property> = set.searchable_properties().collect();
    if !searches.is_empty() && searched.is_empty() {
        let msg = format!("{} cannot be searched", set.name);
        return Err(QueryError::new("search_unsupported", TARGET, msg));
    }
    Ok(Restriction {
        filters,
        searches,
        searched,
    })
}

/// `order` after an `orderby` of `items` over `rows`: the items first, then
/// the rest of the order so far.
fn reorder(
    rows: &EntitySet,
    items: &[OrderItem],
    order: &mut Vec<OrderItem>,
) -> Result<(), QueryError> {
    for item in items {
        if rows.find_property(&item.path.to_string()).is_none() {
            let msg = format!("the aggregated rows have no property '{}'", item.path);
            return Err(QueryError::new("unknown_property", TARGET, msg));
        }
    }
    let rest: Vec<OrderItem> = order
        .drain(..)
        .filter(|o| !items.iter().any(|i| i.path == o.path))
        .collect();
    *order = items.iter().cloned().chain(rest).collect();
    Ok(())
}

/// The refusal of a sequence of a shape that is not served.
fn refuse<T>(what: &str) -> Result<T, QueryError> {
    let msg = format!("{what} is not supported: filter and search first, then groupby or aggregate, then filter, orderby, skip, top, groupby and aggregate; concat of such sequences");
    Err(QueryError::new("apply_unsupported", TARGET, msg))
}

/// A transformation's name, as `$apply` spells it.
fn name(step: &Transformation) -> String {
    let text = step.to_string();
    text.split('(').next().unwrap_or_default().to_owned()
}

/// A property of the set's own rows named by a path: one segment, or on a
/// derived set the whole path of a group across navigations.
fn own_property<'m>(
    set: &'m EntitySet,
    path: &Path,
    what: &str,
) -> Result<&'m Property, QueryError> {
    let name = path.to_string();
    if let Some(found) = set.find_property(&name) {
        return Ok(found);
    }
    match path.segments() {
        [_] => {
            let msg = format!("{} has no property '{name}' to {what}", set.name);
            Err(QueryError::new("unknown_property", TARGET, msg))
        }
        _ => {
            let msg = format!(
                "cannot {what} the path '{name}': name a property of {}",
                set.name
            );
            Err(QueryError::new("apply_unsupported", TARGET, msg))
        }
    }
}

#[cfg(test)]
mod tests;
