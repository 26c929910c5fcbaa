//! The fourth step: SQL written from checked parts — a condition from a
//! typed expression (`expr`), the select list, order and search (`select`),
//! a page's statement (`fetch`), read from a position (`seek`), `$apply`'s
//! statements (`aggregation`) and a hierarchy's recursive statement
//! (`hierarchy`). Every value is bound; what differs between engines is
//! asked of `db::Dialect`.

pub(crate) mod aggregation;
pub(crate) mod expr;
pub(crate) mod fetch;
pub(crate) mod hierarchy;
pub(crate) mod seek;
pub(crate) mod select;
#[cfg(any(test, feature = "internals"))]
pub(crate) mod statements;
