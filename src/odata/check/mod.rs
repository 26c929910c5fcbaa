//! The third step: a parsed query checked against the model. Names are
//! resolved (`resolve`), expressions typed (`typing`, `typed`), the whole
//! query checked once (`checked`), its `$apply` too (`apply`), the caller's
//! scopes of every set checked (`scopes`), a `$skiptoken` opened against
//! the order it was sealed for (`skiptoken`) and the page a request asks
//! for settled (`paging`).

pub(crate) mod apply;
pub(crate) mod checked;
pub(crate) mod paging;
pub(crate) mod resolve;
pub(crate) mod scopes;
pub(crate) mod skiptoken;
pub(crate) mod typed;
pub(crate) mod typing;
