//! OData query parsing: the first pure step of the `/odata` pipeline. It turns
//! a request's raw query string into a [`Query`] AST (with `$filter` as an
//! [`Expr`] tree and `$search` as a [`SearchExpr`]), refusing unknown or
//! repeated options, malformed values and queries too large or too deeply
//! nested to be cheap, with a [`ParseError`] naming the option and position.
//! It knows nothing of the entity model, SQL or HTTP; checking names against
//! the model, building SQL and answering requests are later steps.
//!
//! ```
//! use gatehouse::odata::parse_query;
//! let q = parse_query("$filter=organisation/name%20eq%20'Acme'&$top=10").unwrap();
//! assert_eq!(q.to_string(), "$filter=organisation/name eq 'Acme'&$top=10");
//! ```

#![warn(missing_docs)]

mod batch;
mod check;
mod declare;
mod error;
mod expand;
mod fetch;
mod filter;
mod function;
mod lexer;
mod metadata;
mod model;
mod options;
mod paging;
mod print;
mod query;
mod resolve;
mod scope;
mod search;
mod service;
mod sql;
mod sql_expr;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod proptests;

pub use batch::{parse_batch, Batch, BatchError, BatchFormat, BatchRequest, CHANGESET};
pub use check::check_query;
pub use declare::{declared_sets, NavigationConfig, SetConfig};
pub use error::ParseError;
pub use expand::{MAX_EXPAND_DEPTH, MAX_EXPAND_ITEMS};
pub use fetch::{count_per_value, count_restricted, fetch_query, Fetch, Restriction};
pub use filter::{parse_filter, MAX_IN_LIST, MAX_NESTING, MAX_TREE_HEIGHT};
pub use metadata::{metadata_xml, service_document, NAMESPACE};
pub use model::{EdmType, EntitySet, Model, Navigation, NavigationKind, Property};
pub use options::{parse_query, MAX_QUERY_LENGTH};
pub use paging::{next_link, PagePlan, PageSize, DEFAULT_PAGE_SIZE};
pub use query::{
    BinaryOp, ExpandItem, Expr, Format, Function, Guid, LambdaPredicate, Literal, OrderItem, Path,
    Quantifier, Query, SearchExpr, Select, UnaryOp,
};
pub use resolve::QueryError;
pub use scope::{Caller, Scope, Scopes};
pub use search::parse_search;
pub use service::{routes, Cell, Cells, Layout, ODataError, Reply, Service};
pub use sql::{count_query, filter_sql, page_query, selected_properties, Bind, Page, Sql};
