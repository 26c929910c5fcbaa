//! `$apply` planned: checked once against the set it reads, then the rows
//! it makes of the set written as a set of their own (a derived set over
//! the aggregating statement, or a hierarchy's recursive one), which the
//! request then reads as it reads any set.

use crate::odata::check::apply::{check_apply, Shapes};
use crate::odata::check::resolve::QueryError;
use crate::odata::model::sets::{EntitySet, Model};
use crate::odata::plan::ctx::ODataRequest;
use crate::odata::plan::error::ODataError;
use crate::odata::query::path::SetPath;
use crate::odata::query::syntax::{Apply, Query};
use crate::odata::sql::aggregation::derive;

/// The model of the one set that `query`'s `$apply` makes of `set` for
/// `ctx`'s caller, and `query` ordered as that set's rows come when it
/// names no order. 400 for `$apply` below a key or a navigation.
pub(crate) fn derived(
    ctx: &ODataRequest<'_>,
    set: &EntitySet,
    path: &SetPath,
    mut query: Query,
) -> Result<(Model, Query), ODataError> {
    if path.key.is_some() || path.navigation.is_some() {
        return Err(QueryError::new(
            "apply_unsupported",
            "$apply",
            "$apply applies to an entity set's collection",
        )
        .into());
    }
    let apply = query.apply.clone().unwrap_or(Apply(Vec::new()));
    let shapes = Shapes::default();
    let checked = check_apply(ctx.model, set, &apply, &shapes)?;
    let (derived, order) = derive(&checked, &ctx.scopes, ctx.dialect())?;
    if query.orderby.is_empty() {
        query.orderby = order;
    }
    Ok((Model::new().set(derived), query))
}
