//! Recursive hierarchies (UI5's tree tables): a set's rows as a tree over
//! the to-one navigation to each node's parent, read through `$apply`'s
//! hierarchy functions, and what `$metadata` says of it.

pub(crate) mod annotations;
pub(crate) mod plan;
