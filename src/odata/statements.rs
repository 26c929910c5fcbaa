//! Whole statements for one query, each checked against the model first:
//! what the project's tests, EXPLAIN checks and benchmarks print and run.
//! Requests check their query once and go through [`fetch_query`] with their
//! scopes and paging.

use super::check::check_query;
use super::fetch::{count_restricted, fetch_query, Fetch};
use super::model::{EntitySet, Model};
use super::paging::Page;
use super::query::{Expr, Query};
use super::resolve::QueryError;
use super::sql::Sql;
use super::sql_expr::Writer;
use super::typed::check_condition;
use crate::db::Dialect;

/// The condition a `$filter` expression sets on `set`'s rows (aliased
/// `"t0"`), checked against the model first.
pub fn filter_sql(
    model: &Model,
    set: &EntitySet,
    filter: &Expr,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    let checked = check_condition(model, set, filter, "$filter")?;
    let mut w = Writer::new(set, dialect);
    let text = w.expr(&checked)?.sql;
    Ok(Sql::finish(text, w.binds, dialect))
}

/// The statement fetching `page` of `query` over `set`.
pub fn page_query(
    model: &Model,
    set: &EntitySet,
    query: &Query,
    page: Page,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    let fetch = Fetch {
        restriction: None,
        per_value: false,
        internal: Vec::new(),
        page,
        scopes: None,
        count: false,
    };
    fetch_query(&check_query(model, set, query)?, &fetch, dialect)
}

/// The statement counting the rows `query`'s `$filter` and `$search` admit.
pub fn count_query(
    model: &Model,
    set: &EntitySet,
    query: &Query,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    count_restricted(&check_query(model, set, query)?, None, None, dialect)
}
