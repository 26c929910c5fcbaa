//! Whole statements for one query, each checked against the model first:
//! what the project's tests, EXPLAIN checks and benchmarks print and run.
//! Requests check their query once and go through [`fetch_query`] with their
//! scopes and paging.

use crate::db::Dialect;
use crate::odata::check::checked::check_query;
use crate::odata::check::paging::Page;
use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::check_condition;
use crate::odata::model::sets::{EntitySet, Model};
use crate::odata::query::syntax::{Expr, Query};
use crate::odata::sql::expr::Writer;
use crate::odata::sql::fetch::{count_restricted, fetch_query, Fetch};
use crate::odata::sql::select::Sql;

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
