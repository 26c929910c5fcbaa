//! Building the SQL for a checked query: the third pure step of the `/odata`
//! pipeline, which takes a [`Checked`] query and never looks a name up
//! again. A page query selects the requested properties (plus the key) of
//! the rows `$filter` and `$search` admit, in `$orderby` order made stable by
//! the key, one row beyond the page so the caller learns whether more remain;
//! a count query counts the same rows, ignoring `$top` and `$skip`. Every
//! value is a bind parameter; every identifier comes from the model. A
//! page's bounds are integers the paging computes: bound too, except on
//! PostgreSQL, where they are numerals
//! ([`Dialect::writes_page_bounds`](crate::db::Dialect::writes_page_bounds)).
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
//! let sql = page_query(&model, &model.sets[0], &q, Page::first(10), Dialect::Sqlite).unwrap();
//! assert_eq!(sql.text, concat!(
//!     r#"SELECT "t0"."id" AS "id", "t0"."name" AS "name" FROM "pets" AS "t0" "#,
//!     r#"WHERE ("t0"."name" = $1) ORDER BY "t0"."id" ASC LIMIT $2 OFFSET $3"#));
//! assert_eq!(sql.binds, [Bind::Text("Rex".into()), Bind::Int(11), Bind::Int(0)]);
//! ```

pub use crate::db::Bind;
use crate::db::Dialect;
use crate::odata::check::checked::Checked;
use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::Typed;
use crate::odata::model::sets::{EdmType, Property};
use crate::odata::query::syntax::SearchExpr;
use crate::odata::sql::expr::{false_if_null, Writer};

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

pub(crate) fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The conditions on the statement's rows: the caller's scope of its set,
/// then `$filter`.
fn row_conditions<'c, 'w: 'c>(
    w: &Writer<'w>,
    checked: &'c Checked<'w, '_>,
) -> Result<Vec<&'c Typed<'w>>, QueryError> {
    let scope = w.root_scope()?;
    Ok(scope.into_iter().chain(checked.filter()).collect())
}

/// The `WHERE` clause of the caller's scope, `$filter`, `$search` and an
/// extra condition.
pub(crate) fn where_with<'w>(
    w: &mut Writer<'w>,
    checked: &Checked<'w, '_>,
    extra: Option<String>,
    text: &mut String,
) -> Result<(), QueryError> {
    let mut conditions: Vec<String> = extra.into_iter().collect();
    if let Some(condition) = w.condition(&row_conditions(w, checked)?)? {
        conditions.push(condition);
    }
    if let Some(search) = checked.search() {
        conditions.push(search_condition(w, &search.properties, search.expr));
    }
    if !conditions.is_empty() {
        *text += " WHERE ";
        *text += &conditions.join(" AND ");
    }
    Ok(())
}

/// One term of a statement's order: the value sorted on, its direction,
/// whether it can be null (after what the statement's conditions rule out),
/// and its type.
#[derive(Debug, Clone)]
pub(crate) struct OrderTerm {
    /// The value's SQL.
    pub sql: String,
    /// Descending.
    pub descending: bool,
    /// The value can be null in the rows the statement reads.
    pub nullable: bool,
    /// The value's type.
    pub edm: EdmType,
    /// The property of the set's own rows the term is, if it is one (not a
    /// path through a navigation).
    pub property: Option<String>,
}

impl OrderTerm {
    /// The term as written after `ORDER BY`, with OData's null ordering.
    pub fn render(&self, dialect: Dialect) -> String {
        dialect.order_term(&self.sql, self.descending, self.nullable)
    }
}

/// The terms of `order`, comma-separated.
pub(crate) fn render_order(terms: &[OrderTerm], dialect: Dialect) -> String {
    let rendered: Vec<String> = terms.iter().map(|t| t.render(dialect)).collect();
    rendered.join(", ")
}

/// The terms of a statement's order: `$orderby`'s, then the key (in the
/// last term's direction) unless the last already is it. The last term is never null and unique over the set.
pub(crate) fn order_terms<'w>(
    w: &mut Writer<'w>,
    checked: &Checked<'w, '_>,
) -> Result<Vec<OrderTerm>, QueryError> {
    let mut terms = Vec::new();
    let conditions = row_conditions(w, checked)?;
    let non_null: Vec<_> = conditions.iter().flat_map(|c| c.non_null_paths()).collect();
    for item in checked.orderby() {
        let value = w.path_value(&item.path)?;
        let nullable = value.nullable && !non_null.iter().any(|p| p.same_as(&item.path));
        let own = item.path.variable.is_none() && item.path.hops.is_empty();
        terms.push(OrderTerm {
            sql: value.sql,
            descending: item.descending,
            nullable,
            edm: item.path.property.edm_type,
            property: own.then(|| item.path.property.name.clone()),
        });
    }
    let root = w.root();
    let ends_in_key = checked.orderby().last().is_some_and(|item| {
        item.path.variable.is_none()
            && item.path.hops.is_empty()
            && item.path.property.name == root.key
    });
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
        let descending = checked.orderby().last().is_some_and(|item| item.descending);
        terms.push(OrderTerm {
            sql: value,
            descending,
            nullable: false,
            edm: key.edm_type,
            property: Some(key.name.clone()),
        });
    }
    Ok(terms)
}

/// A `$search` expression as a condition: each term a case-insensitive
/// substring match against any of `properties`, `%` and `_` literal.
pub(crate) fn search_condition(
    w: &mut Writer<'_>,
    properties: &[&Property],
    search: &SearchExpr,
) -> String {
    match search {
        SearchExpr::Word(term) | SearchExpr::Phrase(term) => {
            let escaped = term
                .replace('!', "!!")
                .replace('%', "!%")
                .replace('_', "!_");
            let pattern = w.bind(Bind::Text(format!("%{escaped}%")));
            let t0 = w.root_alias();
            let matches: Vec<String> = properties
                .iter()
                .map(|p| {
                    let like = w
                        .dialect
                        .like_ignoring_case(&w.column(&t0, &p.column), &pattern);
                    false_if_null(like, p.nullable)
                })
                .collect();
            format!("({})", matches.join(" OR "))
        }
        SearchExpr::Not(inner) => format!("(NOT {})", search_condition(w, properties, inner)),
        SearchExpr::And(a, b) => {
            format!(
                "({} AND {})",
                search_condition(w, properties, a),
                search_condition(w, properties, b)
            )
        }
        SearchExpr::Or(a, b) => {
            format!(
                "({} OR {})",
                search_condition(w, properties, a),
                search_condition(w, properties, b)
            )
        }
    }
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
