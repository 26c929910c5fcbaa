//! OData entity sets: what a host declares ([`EntitySet`], [`Property`],
//! [`Navigation`], [`Scope`]) and, inside the crate, the `/odata` pipeline.
//!
//! The pipeline's first pure step is query parsing. It turns
//! a request's raw query string into a `Query` AST (with `$filter` as an
//! [`Expr`] tree and `$search` as a `SearchExpr`), refusing unknown or
//! repeated options, malformed values and queries too large or too deeply
//! nested to be cheap, with a [`ParseError`] naming the option and position.
//! It knows nothing of the entity model, SQL or HTTP; checking names against
//! the model, building SQL and answering requests are later steps.
//!
//! A scope is a `$filter` expression computed for each caller:
//!
//! ```
//! use gatehouse::odata::{parse_filter, Caller, Literal, Scope};
//! let own_rows = Scope::new(|caller: &Caller| {
//!     let id = caller.user_id.unwrap_or(0);
//!     parse_filter(&format!("owner_id eq {id}")).unwrap()
//! });
//! assert_eq!(own_rows.filter(&Caller::user(7)).to_string(), "owner_id eq 7");
//! # let _ = Literal::Null;
//! ```

#![warn(missing_docs)]

// The pipeline, one folder a step; each imports only the steps before it.
mod check;
mod model;
mod plan;
mod query;
mod service;
mod sql;

// What a host declares a set with: its properties, navigations and scope.
pub use crate::config::{HierarchyConfig, NavigationConfig, Roots, SetConfig};
pub use model::scope::{Caller, Scope};
pub use model::sets::{EdmType, EntitySet, Hierarchy, Navigation, NavigationKind, Property};
pub use query::error::ParseError;
pub use query::filter::parse_filter;
pub use query::syntax::{
    BinaryOp, Expr, Function, Guid, LambdaPredicate, Literal, Path, Quantifier, UnaryOp,
};
// The security activity log, ready for a host to expose.
pub use model::security_events::security_events;

// The pipeline itself.
crate::internal! {
    use service::batch_body::{parse_batch, Batch, BatchError, BatchFormat, BatchRequest, CHANGESET};
}
crate::internal! {
    use query::apply::{MAX_APPLY_DEPTH, MAX_TRANSFORMATIONS};
}
crate::internal! {
    use query::syntax::{Aggregate, AggregateExpr, Apply, Method, Transformation};
}
crate::internal! { use check::checked::{check_query, Checked, Expansion}; }
crate::internal! { use model::declare::declared_sets; }
crate::internal! { use query::expand::{MAX_EXPAND_DEPTH, MAX_EXPAND_ITEMS}; }
crate::internal! {
    use sql::fetch::{
        count_per_value, count_restricted, fetch_query, seek_statements, Fetch, Order,
        Restriction,
    };
}
crate::internal! { use query::filter::{MAX_IN_LIST, MAX_NESTING, MAX_TREE_HEIGHT}; }
crate::internal! { use model::metadata::{metadata_xml, service_document, NAMESPACE}; }
crate::internal! { use model::sets::Model; }
crate::internal! { use query::options::{parse_query, MAX_QUERY_LENGTH, MAX_SKIPTOKEN_LENGTH}; }
crate::internal! { use check::paging::{Page, DEFAULT_PAGE_SIZE}; }
crate::internal! { use query::syntax::{ExpandItem, Format, OrderItem, Query, SearchExpr, Select}; }
crate::internal! { use check::resolve::QueryError; }
crate::internal! { use check::scopes::Scopes; }
#[cfg(any(test, feature = "internals"))]
crate::internal! { use query::search::parse_search; }
crate::internal! {
    use service::{
        routes, run as run_rows, BodySink, Cell, Cells, Layout, Numbers, ODataError, Reply,
        Service, Sink,
    };
}
crate::internal! { use sql::seek::Position; }
crate::internal! { use check::skiptoken::SkipTokens; }
crate::internal! { use sql::select::{Bind, Sql}; }
#[cfg(any(test, feature = "internals"))]
crate::internal! { use sql::statements::{count_query, filter_sql, page_query}; }
