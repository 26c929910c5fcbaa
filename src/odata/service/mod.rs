//! The `/odata` service: the routes, and the steps that run a parsed and
//! checked query against the database and write the rows as OData JSON.
//!
//! The pure steps (parsing, checking, SQL) live in the parent module; this
//! one adds what needs a database, a caller and HTTP: scopes bound to the
//! caller, access by session or bearer token, streaming rows into the body,
//! loading `$expand` for a whole page at once, and next links.

mod access;
mod batch;
pub(crate) mod batch_body;
mod read;
pub(crate) mod reply;
pub mod routes;
pub(crate) mod rows;
pub(crate) mod run;
pub(crate) mod state;

pub use crate::odata::plan::error::ODataError;
pub use reply::Reply;
pub use rows::{run, BodySink, Cell, Cells, Layout, Numbers, Sink};
pub use state::Service;
