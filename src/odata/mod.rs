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
//! assert_eq!(own_rows.filter(&Caller { user_id: Some(7) }).to_string(), "owner_id eq 7");
//! # let _ = Literal::Null;
//! ```

#![warn(missing_docs)]

mod aggregation;
mod apply;
mod apply_hierarchy;
mod apply_scan;
mod batch;
mod check;
mod declare;
mod error;
mod expand;
mod fetch;
mod filter;
mod function;
mod hierarchy;
mod items;
mod lexer;
mod metadata;
mod model;
mod options;
mod paging;
mod print;
mod query;
mod resolve;
mod scope;
mod scopes;
mod search;
mod security_events;
mod seek;
mod service;
mod skiptoken;
mod sql;
mod sql_expr;
#[cfg(any(test, feature = "internals"))]
mod statements;
mod typed;
mod typing;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod proptests;

// What a host declares a set with: its properties, navigations and scope.
pub use crate::config::{HierarchyConfig, NavigationConfig, SetConfig};
pub use error::ParseError;
pub use filter::parse_filter;
pub use model::{EdmType, EntitySet, Hierarchy, Navigation, NavigationKind, Property};
pub use query::{
    BinaryOp, Expr, Function, Guid, LambdaPredicate, Literal, Path, Quantifier, UnaryOp,
};
pub use scope::{Caller, Scope};
// The security activity log, ready for a host to expose.
pub use security_events::security_events;

// The pipeline itself.
crate::internal! {
    use batch::{parse_batch, Batch, BatchError, BatchFormat, BatchRequest, CHANGESET};
}
crate::internal! {
    use apply::{MAX_APPLY_DEPTH, MAX_TRANSFORMATIONS};
}
crate::internal! {
    use query::{Aggregate, AggregateExpr, Apply, Method, Transformation};
}
crate::internal! { use check::{check_query, Checked, Expansion}; }
crate::internal! { use declare::declared_sets; }
crate::internal! { use expand::{MAX_EXPAND_DEPTH, MAX_EXPAND_ITEMS}; }
crate::internal! {
    use fetch::{
        count_per_value, count_restricted, fetch_query, order_types, seek_statements, Fetch,
        Restriction,
    };
}
crate::internal! { use filter::{MAX_IN_LIST, MAX_NESTING, MAX_TREE_HEIGHT}; }
crate::internal! { use metadata::{metadata_xml, service_document, NAMESPACE}; }
crate::internal! { use model::Model; }
crate::internal! { use options::{parse_query, MAX_QUERY_LENGTH}; }
crate::internal! { use paging::{Page, DEFAULT_PAGE_SIZE}; }
crate::internal! { use query::{ExpandItem, Format, OrderItem, Query, SearchExpr, Select}; }
crate::internal! { use resolve::QueryError; }
crate::internal! { use scopes::Scopes; }
#[cfg(any(test, feature = "internals"))]
crate::internal! { use search::parse_search; }
crate::internal! {
    use service::{
        routes, run as run_rows, BodySink, Cell, Cells, Layout, Numbers, ODataError, Reply,
        Service, Sink,
    };
}
crate::internal! { use seek::Position; }
crate::internal! { use skiptoken::{SkipTokens, MAX_SKIPTOKEN_LENGTH}; }
crate::internal! { use sql::{Bind, Sql}; }
#[cfg(any(test, feature = "internals"))]
crate::internal! { use statements::{count_query, filter_sql, page_query}; }
