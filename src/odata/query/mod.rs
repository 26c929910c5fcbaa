//! The pipeline's first step: a request's resource path and query string
//! read into syntax ([`syntax::Query`]), refusing what is malformed, too
//! large or too deep with a [`error::ParseError`] that names the option and
//! position; and printed back as canonical OData. It knows nothing of the
//! model, SQL or HTTP.
//!
//! The lexer splits an option value into tokens; `filter`, `search`,
//! `expand`, `items` and `apply` (with `apply_hierarchy`, over the scanner
//! `apply_scan`) parse the options, and `options` splits the query string
//! and hands each option to its parser; `path` reads the resource path.

pub(crate) mod apply;
pub(crate) mod apply_hierarchy;
pub(crate) mod apply_scan;
pub(crate) mod error;
pub(crate) mod expand;
pub(crate) mod filter;
pub(crate) mod function;
pub(crate) mod items;
pub(crate) mod lexer;
pub(crate) mod options;
pub(crate) mod path;
pub(crate) mod print;
pub(crate) mod search;
pub(crate) mod syntax;

#[cfg(test)]
mod proptests;
