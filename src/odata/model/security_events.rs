//! The security activity log as an OData entity set a host may expose.

use crate::odata::{parse_filter, Caller, EdmType, EntitySet, Expr, Literal, Property, Scope};

/// The table the security activity log is kept in.
pub(crate) const TABLE: &str = "gatehouse_security_events";

/// `SecurityEvents`, over `gatehouse_security_events`: `id` (key),
/// `occurred_at` (UTC), `event` (see [`AuthEvent::code`]), `user_id`,
/// `ip_address`, `user_agent` and `detail`.
///
/// The set is not public and comes scoped to the caller's own events
/// (`user_id eq <caller>`); a host that shows more, say to its
/// administrators, replaces the scope with [`EntitySet::scoped`].
///
/// ```
/// use gatehouse::odata::{security_events, Caller};
/// use gatehouse::Gatehouse;
///
/// let set = security_events();
/// let own = set.scope.as_ref().expect("a scope").filter(&Caller::user(7));
/// assert_eq!(own.to_string(), "user_id eq 7");
/// let gatehouse = Gatehouse::new().odata_set(set);
/// ```
///
/// [`AuthEvent::code`]: crate::AuthEvent::code
pub fn security_events() -> EntitySet {
    use EdmType::*;
    EntitySet::new("SecurityEvents", TABLE, "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("occurred_at", DateTimeOffset).not_null())
        .property(Property::new("event", String).not_null())
        .property(Property::new("user_id", Int64))
        .property(Property::new("ip_address", String))
        .property(Property::new("user_agent", String))
        .property(Property::new("detail", String))
        .scoped(Scope::new(own_events))
}

/// The caller's own events; none for a guest.
fn own_events(caller: &Caller) -> Expr {
    caller
        .user_id
        .and_then(|id| parse_filter(&format!("user_id eq {id}")).ok())
        .unwrap_or(Expr::Literal(Literal::Boolean(false)))
}
