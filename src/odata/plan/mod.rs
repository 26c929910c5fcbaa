//! A read request's plan: everything it runs, made from its one [`Checked`]
//! query and the caller's scopes before its first statement runs. The
//! answer ([`run`](crate::odata::service::run)) only carries a plan out.
//!
//! - A collection: its page's statements (read from a position when its
//!   next links seek), the count as a column of them, the layout of their
//!   columns and the order values its next link is sealed with; with
//!   `$top=0`, the count alone.
//! - One entity: a page of at most one row. A count: one statement.
//! - A navigation: its parent's statement, then the target, waiting for
//!   the parent's key ([`Waiting`]).
//! - `$expand`: each expansion a [`Follow`], waiting for its parents' keys.
//!
//! Every check and refusal happens here. A statement waiting for keys that
//! an earlier statement reads is written when they are read, from what the
//! plan settled; nothing is looked up or refused then.

mod apply;
pub(crate) mod ctx;
pub(crate) mod error;
mod lookups;
mod page;
mod parts;
mod request;

pub(crate) use apply::derived;
pub(crate) use lookups::key_in_path;
pub(crate) use parts::{
    Close, Follow, InlineCount, Listing, Navigate, OrderValues, PagePlan, PageRead, Plan, Reading,
    RowShape, Rows, Single,
};
pub(crate) use request::plan;
