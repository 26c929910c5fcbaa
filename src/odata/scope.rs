//! Scopes: a filter an entity set binds to the caller, which every query,
//! key lookup, `$count`, `$expand` and navigation route over the set honours.
//!
//! A scope answers an ordinary `$filter` expression over the set's own
//! properties and navigations, so it is checked and translated to SQL exactly
//! like the client's filter, and it is combined with that filter by `and`.
//!
//! ```
//! use gatehouse::odata::{parse_filter, Caller, EntitySet, Scope};
//! let pets = EntitySet::new("Pets", "pets", "id").scoped(Scope::new(|caller: &Caller| {
//!     match caller.user_id {
//!         Some(id) => parse_filter(&format!("owner_id eq {id}")).expect("valid filter"),
//!         None => gatehouse::odata::Expr::Literal(gatehouse::odata::Literal::Boolean(false)),
//!     }
//! }));
//! let expr = pets.scope.as_ref().unwrap().filter(&Caller { user_id: Some(7) });
//! assert_eq!(expr.to_string(), "owner_id eq 7");
//! ```

use std::fmt;
use std::sync::Arc;

use super::query::Expr;

/// Who is asking: the signed-in user (by session or bearer token), or a guest
/// reading a public set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caller {
    /// `users.id` of the caller; `None` for a guest.
    pub user_id: Option<i64>,
}

type ScopeFn = dyn Fn(&Caller) -> Expr + Send + Sync;

/// A filter bound to the caller. Cheap to clone; two scopes are equal only
/// when they are the same function.
#[derive(Clone)]
pub struct Scope(Arc<ScopeFn>);

impl Scope {
    /// A scope computed by `filter` for each caller. The expression must be
    /// valid over the set it scopes (it is checked like any `$filter`).
    pub fn new(filter: impl Fn(&Caller) -> Expr + Send + Sync + 'static) -> Scope {
        Scope(Arc::new(filter))
    }

    /// The condition for `caller`.
    pub fn filter(&self, caller: &Caller) -> Expr {
        (self.0)(caller)
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scope(..)")
    }
}

impl PartialEq for Scope {
    fn eq(&self, other: &Scope) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Scope {}
