//! Building the SQL for a checked query: the third pure step of the `/odata`
//! pipeline. A page query selects the requested properties (plus the key) of
//! the rows `$filter` and `$search` admit, in `$orderby` order made stable by
//! the key, one row beyond the page so the caller learns whether more remain;
//! a count query counts the same rows, ignoring `$top` and `$skip`. Every
//! value is a bind parameter; every identifier comes from the model.
//!
//! ```
//! use gatehouse::db::Dialect;
//! use gatehouse::odata::{page_query, parse_query, Bind, EdmType, EntitySet, Model, Page, Property};
//! let model = Model::new().set(
//!     EntitySet::new("Pets", "pets", "id")
//!         .property(Property::new("id", EdmType::Int32).not_null())
//!         .property(Property::new("name", EdmType::String).not_null()),
//! );
//! let q = parse_query("$filter=name eq 'Rex'&$select=name").unwrap();
//! let sql = page_query(&model, &model.sets[0], &q, Page { offset: 0, size: 10 }, Dialect::Sqlite).unwrap();
//! assert_eq!(sql.text, concat!(
//!     r#"SELECT "t0"."id" AS "id", "t0"."name" AS "name" FROM "pets" AS "t0" "#,
//!     r#"WHERE ("t0"."name" = $1) ORDER BY "t0"."id" ASC LIMIT $2 OFFSET $3"#));
//! assert_eq!(sql.binds, [Bind::Text("Rex".into()), Bind::Int(11), Bind::Int(0)]);
//! ```

use super::model::{EntitySet, Property};
use super::query::{BinaryOp, Expr, Literal, Path, Query, SearchExpr, Select};
use super::resolve::{resolve, QueryError};
use super::sql_expr::{false_if_null, Writer};
pub use crate::db::Bind;
use crate::db::Dialect;

/// Generated SQL and the values to bind to it, in order.
///
/// On PostgreSQL and SQLite the text uses `$1..$n` and `binds[i]` belongs to
/// `$(i+1)`; on MySQL it uses `?` and the binds are in textual order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sql {
    /// The statement or condition text.
    pub text: String,
    /// The values to bind.
    pub binds: Vec<Bind>,
}

impl Sql {
    /// Fits numbered placeholders to the dialect (MySQL binds positionally,
    /// so a value used twice is bound twice).
    pub(crate) fn finish(text: String, binds: Vec<Bind>, dialect: Dialect) -> Sql {
        match dialect.positional(&text) {
            (text, Some(order)) => {
                let binds = order
                    .into_iter()
                    .filter_map(|n| binds.get(n.wrapping_sub(1)).cloned())
                    .collect();
                Sql { text, binds }
            }
            (text, None) => Sql { text, binds },
        }
    }
}

/// Which slice of the collection a page query fetches: `size` rows after
/// skipping `offset`. The query asks for `size + 1` rows; a surplus row means
/// more remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Rows to skip (`$skip`, plus what earlier pages delivered).
    pub offset: u64,
    /// Rows to deliver at most.
    pub size: u64,
}

/// The properties a response carries: those `$select` names (in declaration
/// order) plus the key, or all of them.
///
/// ```
/// use gatehouse::odata::{parse_query, selected_properties, EdmType, EntitySet, Property};
/// let set = EntitySet::new("Pets", "pets", "id")
///     .property(Property::new("id", EdmType::Int32))
///     .property(Property::new("name", EdmType::String))
///     .property(Property::new("age", EdmType::Int32));
/// let q = parse_query("$select=age").unwrap();
/// let names: Vec<_> = selected_properties(&set, q.select.as_ref()).iter().map(|p| &p.name).collect();
/// assert_eq!(names, ["id", "age"]);
/// ```
pub fn selected_properties<'s>(set: &'s EntitySet, select: Option<&Select>) -> Vec<&'s Property> {
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

pub(crate) fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The `WHERE` clause of `$filter`, `$search` and an extra condition.
pub(crate) fn where_with<'m>(
    w: &mut Writer<'m>,
    query: &'m Query,
    extra: Option<String>,
    text: &mut String,
) -> Result<(), QueryError> {
    let mut conditions: Vec<String> = extra.into_iter().collect();
    if let Some(filter) = &query.filter {
        conditions.push(w.condition(filter)?.sql);
    }
    if let Some(search) = &query.search {
        conditions.push(search_condition(w, search));
    }
    if !conditions.is_empty() {
        *text += " WHERE ";
        *text += &conditions.join(" AND ");
    }
    Ok(())
}

/// `$orderby` terms, then the key (in the last term's direction) unless the
/// last term already is the key.
pub(crate) fn order_by<'m>(w: &mut Writer<'m>, query: &'m Query) -> Result<String, QueryError> {
    let mut terms = Vec::new();
    let non_null = query
        .filter
        .as_ref()
        .map(non_null_paths)
        .unwrap_or_default();
    for item in &query.orderby {
        let r = resolve(w.model, w.root(), &[], &item.path, "$orderby")?;
        let value = w.path_value(&r)?;
        let nullable = value.nullable && !non_null.contains(&&item.path);
        terms.push(w.dialect.order_term(&value.sql, item.descending, nullable));
    }
    let root = w.root();
    let ends_in_key = query
        .orderby
        .last()
        .is_some_and(|item| item.path.segments() == [root.key.as_str()]);
    if !ends_in_key {
        let key = root.key_property().ok_or_else(|| {
            QueryError::new(
                "model_error",
                "$orderby",
                format!("{} declares no key", root.name),
            )
        })?;
        let value = w.property(&w.root_alias(), key);
        // A key is never null. It runs the way the last term does: an
        // index on that term's column ends in the key on SQLite and InnoDB,
        // so one scan yields both orders, where a mixed direction needs a sort.
        let descending = query.orderby.last().is_some_and(|item| item.descending);
        terms.push(w.dialect.order_term(&value, descending, false));
    }
    Ok(terms.join(", "))
}

/// The paths `filter` admits only non-null values of: those compared, in
/// a conjunct at its top, with `eq`, `lt`, `le`, `gt` or `ge` against a
/// non-null literal, or looked up `in` a list of such literals. Such a
/// comparison holds for no null (OData's null rules, and SQL's), so a row
/// that passes has a value there.
pub(crate) fn non_null_paths(filter: &Expr) -> Vec<&Path> {
    let literal = |e: &Expr| matches!(e, Expr::Literal(l) if *l != Literal::Null);
    match filter {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => {
            let mut paths = non_null_paths(left);
            paths.extend(non_null_paths(right));
            paths
        }
        Expr::Binary {
            op: BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
            left,
            right,
        } => match (&**left, &**right) {
            (Expr::Path(p), other) | (other, Expr::Path(p)) if literal(other) => vec![p],
            _ => Vec::new(),
        },
        Expr::In { operand, list } => match &**operand {
            Expr::Path(p) if list.iter().all(literal) => vec![p],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A `$search` expression as a condition: each term a case-insensitive
/// substring match against any searchable property, `%` and `_` literal.
pub(crate) fn search_condition(w: &mut Writer<'_>, search: &SearchExpr) -> String {
    match search {
        SearchExpr::Word(term) | SearchExpr::Phrase(term) => {
            let escaped = term
                .replace('!', "!!")
                .replace('%', "!%")
                .replace('_', "!_");
            let pattern = w.bind(Bind::Text(format!("%{escaped}%")));
            let t0 = w.root_alias();
            let matches: Vec<String> = w
                .root()
                .searchable_properties()
                .map(|p| {
                    let like = w
                        .dialect
                        .like_ignoring_case(&w.column(&t0, &p.column), &pattern);
                    false_if_null(like, p.nullable)
                })
                .collect();
            format!("({})", matches.join(" OR "))
        }
        SearchExpr::Not(inner) => format!("(NOT {})", search_condition(w, inner)),
        SearchExpr::And(a, b) => {
            format!(
                "({} AND {})",
                search_condition(w, a),
                search_condition(w, b)
            )
        }
        SearchExpr::Or(a, b) => {
            format!("({} OR {})", search_condition(w, a), search_condition(w, b))
        }
    }
}

#[cfg(test)]
#[path = "sql_tests.rs"]
mod tests;
