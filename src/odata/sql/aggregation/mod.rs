//! From a checked `$apply` over a set to the set of rows it makes: the
//! caller's scope, `filter` and `search` restrict the set's rows, `groupby`
//! and `aggregate` make one row per group in one `GROUP BY` statement, and
//! `filter`, `top`, `skip` and further `groupby` or `aggregate` after them
//! read those rows, each wrapping the statement before it. A `concat` makes
//! one such statement per branch, joined by `UNION ALL`. The result is a
//! derived [`EntitySet`] of the shape the check gave the rows (the grouping
//! properties and the aliases), read from that statement in place of a
//! table — so `$filter`, `$orderby`, `$select`, `$top`, `$skip`, `$count`
//! and server paging apply to the aggregated rows as to any set's.
//!
//! Everything here was checked ([`check_apply`](crate::odata::check::apply::check_apply));
//! only the statements are written.

mod concat;
mod measure;

use measure::measure_sql;

use crate::db::{Bind, Dialect};
use crate::odata::check::apply::{CheckedApply, Group, Grouping, Restriction, Sequence, Step};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::check::typed::Typed;
use crate::odata::model::sets::{Derived, EntitySet, Property};
use crate::odata::query::syntax::OrderItem;
use crate::odata::sql::expr::Writer;
use crate::odata::sql::hierarchy;
use crate::odata::sql::select::{clamp, search_condition};

/// The rows `apply` makes, as a derived set, and the order they come in
/// when `$orderby` names none (the grouping properties, ascending; a
/// `concat`'s branches one after the other). Fails only as every
/// statement may: a scope that does not fit its set, a path into a set the
/// caller may not read.
pub(crate) fn derive<'a>(
    apply: &CheckedApply<'a>,
    scopes: &'a Scopes<'a>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    match apply {
        CheckedApply::Hierarchy(tree) => hierarchy::derive(tree, scopes, dialect),
        CheckedApply::Sequence(one) => linear(one, scopes, dialect, Vec::new()),
        CheckedApply::Concat(branches) => concat::union(branches, scopes, dialect),
    }
}

/// The rows one sequence makes, its statement's placeholders numbered
/// after `carried`'s.
fn linear<'a>(
    sequence: &Sequence<'a>,
    scopes: &'a Scopes<'a>,
    dialect: Dialect,
    carried: Vec<Bind>,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let restricted = Some((&sequence.restriction, scopes));
    let mut rows = group(
        sequence.set,
        restricted,
        &sequence.grouping,
        dialect,
        carried,
    )?;
    for step in &sequence.steps {
        rows = match step {
            Step::Group(grouping) => group(&rows, None, grouping, dialect, Vec::new())?,
            Step::Filter(condition) => filtered(rows, condition, dialect)?,
            Step::Slice { top, skip, order } => sliced(rows, *top, *skip, order, dialect),
        };
    }
    Ok((rows, sequence.order.clone()))
}

/// The rows of `read` (restricted by the restriction and the caller's
/// scope, if given) grouped as `grouping` says.
fn group<'r>(
    read: &'r EntitySet,
    restricted: Option<(&Restriction<'r>, &'r Scopes<'r>)>,
    grouping: &Grouping<'r>,
    dialect: Dialect,
    carried: Vec<Bind>,
) -> Result<EntitySet, QueryError> {
    let mut w = Writer::new(read, dialect)
        .with_scopes(restricted.map(|(_, scopes)| scopes))
        .after_binds(carried);
    let t0 = w.root_alias();
    let wheres = match restricted {
        Some((restriction, _)) => where_clause(restriction, &mut w)?,
        None => String::new(),
    };
    let from = format!("{} AS {t0}{wheres}", read.rows_sql(dialect));
    if !grouping.reads_across() {
        return Ok(grouped(grouping, &from, w, dialect));
    }
    // Values across navigations are read per row first, then grouped.
    let mut widened = read.clone();
    let mut columns = vec![format!("{t0}.*")];
    for group in &grouping.groups {
        if let Group::Across(name, found) = group {
            let value = w.path_value(found)?;
            columns.push(format!("{} AS {}", value.sql, dialect.quote(name)));
            widened.properties.push(group.property());
        }
    }
    let text = format!("SELECT {} FROM {from}", columns.join(", "));
    widened.derived = Some(Derived::statement(text, w.binds));
    let w = Writer::new(&widened, dialect);
    let from = format!("{} AS {t0}", widened.rows_sql(dialect));
    Ok(grouped(grouping, &from, w, dialect))
}

/// ` WHERE …` for the caller's scope, the filters and the searches of
/// `restriction`, or nothing.
fn where_clause<'r>(
    restriction: &Restriction<'r>,
    w: &mut Writer<'r>,
) -> Result<String, QueryError> {
    let scope = w.root_scope()?;
    let all: Vec<&Typed<'r>> = scope.into_iter().chain(&restriction.filters).collect();
    let mut wheres: Vec<String> = w.condition(&all)?.into_iter().collect();
    for search in &restriction.searches {
        wheres.push(search_condition(w, &restriction.searched, search));
    }
    Ok(match wheres.is_empty() {
        true => String::new(),
        false => format!(" WHERE {}", wheres.join(" AND ")),
    })
}

/// The statement grouping the rows `from` names (aliased `t0`) as
/// `grouping` says, as the derived set of its rows' shape.
fn grouped(grouping: &Grouping<'_>, from: &str, w: Writer<'_>, dialect: Dialect) -> EntitySet {
    let t0 = w.root_alias();
    let groups: Vec<Property> = grouping.groups.iter().map(Group::property).collect();
    let mut columns: Vec<String> = groups
        .iter()
        .map(|g| format!("{} AS {}", w.property(&t0, g), dialect.quote(&g.name)))
        .collect();
    for measure in &grouping.measures {
        let value = measure_sql(&w, &t0, measure);
        columns.push(format!("{value} AS {}", dialect.quote(&measure.alias)));
    }
    let mut text = format!("SELECT {} FROM {from}", columns.join(", "));
    if !groups.is_empty() {
        let grouped: Vec<String> = groups.iter().map(|g| w.property(&t0, g)).collect();
        text += &format!(" GROUP BY {}", grouped.join(", "));
    }
    let mut rows = grouping.rows.clone();
    rows.derived = Some(Derived::statement(text, w.binds));
    rows
}

/// The rows of `rows` (a derived set) that `condition` admits: the same
/// set over a statement that reads `rows`' statement.
fn filtered(
    mut rows: EntitySet,
    condition: &Typed<'_>,
    dialect: Dialect,
) -> Result<EntitySet, QueryError> {
    let mut w = Writer::new(&rows, dialect);
    let t0 = w.root_alias();
    let from = format!("SELECT * FROM {} AS {t0}", rows.rows_sql(dialect));
    let text = match w.condition(&[condition])? {
        Some(condition) => format!("{from} WHERE {condition}"),
        None => from,
    };
    rows.derived = Some(Derived::statement(text, w.binds));
    Ok(rows)
}

/// The rows of `rows` (a derived set) in `order`, `skip` of them left out
/// and at most `top` kept.
fn sliced(
    mut rows: EntitySet,
    top: u64,
    skip: u64,
    order: &[OrderItem],
    dialect: Dialect,
) -> EntitySet {
    let mut w = Writer::new(&rows, dialect);
    let t0 = w.root_alias();
    let from = format!("SELECT * FROM {} AS {t0}", rows.rows_sql(dialect));
    let terms = order_terms(&w, &t0, order);
    let limit = w.bind(Bind::Int(clamp(top)));
    let offset = w.bind(Bind::Int(clamp(skip)));
    let text = format!(
        "{from} ORDER BY {terms} {}",
        dialect.limit_offset(&limit, &offset)
    );
    rows.derived = Some(Derived::statement(text, w.binds));
    rows
}

/// `order` as `ORDER BY` terms over the rows aliased `t0`, in OData's
/// order on every engine: null first ascending, last descending.
fn order_terms(w: &Writer<'_>, t0: &str, order: &[OrderItem]) -> String {
    let terms: Vec<String> = order
        .iter()
        .map(|o| {
            let column = w.column(t0, &o.path.to_string());
            match o.descending {
                false => format!("({column} IS NULL) DESC, {column} ASC"),
                true => format!("({column} IS NULL) ASC, {column} DESC"),
            }
        })
        .collect();
    match terms.is_empty() {
        true => "1".to_owned(),
        false => terms.join(", "),
    }
}
