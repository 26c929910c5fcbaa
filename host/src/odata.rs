//! The reference host's OData sets: `Users` (a directory of members, never a
//! password hash or remember token), `Organisations` and `Employees` (the
//! org chart, a recursive hierarchy for UI5's tree tables), each scoped to
//! the caller's organisation, with navigations both ways; and the add-on's
//! `SecurityEvents`, scoped to the caller's own events.

use gatehouse::odata::{
    parse_filter, Caller, EdmType, EntitySet, Expr, Literal, Navigation, Property, Scope,
};

/// `Users`, `Organisations`, `Employees` and `SecurityEvents`.
pub fn sets() -> [EntitySet; 4] {
    use EdmType::*;
    let users = EntitySet::new("Users", "organisation_members", "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("name", String).not_null())
        .property(Property::new("email", String).not_null())
        .property(Property::new("email_verified_at", DateTimeOffset))
        .property(Property::new("created_at", DateTimeOffset))
        .property(Property::new("updated_at", DateTimeOffset))
        .property(Property::new("organisation_id", Int64))
        .navigation(Navigation::to_one(
            "organisation",
            "Organisations",
            "organisation_id",
        ))
        .searchable(&["name", "email"])
        .scoped(member_of("organisation/members"));
    let organisations = EntitySet::new("Organisations", "organisations", "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("name", String).not_null())
        .property(Property::new("legal_form", Int32).not_null())
        .property(Property::new("company_size", String).not_null())
        .property(Property::new("function", String).not_null())
        .property(Property::new("billing_email", String))
        .property(Property::new("marketing_consent", Boolean).not_null())
        .property(Property::new("created_at", DateTimeOffset))
        .property(Property::new("updated_at", DateTimeOffset))
        .navigation(Navigation::to_many("members", "Users", "organisation_id"))
        .searchable(&["name"])
        .scoped(member_of("members"));
    // Who manages whom: the hierarchy `OrgChart` over `manager`.
    let employees = EntitySet::new("Employees", "employees", "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("organisation_id", Int64).not_null())
        .property(Property::new("manager_id", Int64))
        .property(Property::new("name", String).not_null())
        .property(Property::new("title", String).not_null())
        .navigation(Navigation::to_one("manager", "Employees", "manager_id"))
        .navigation(Navigation::to_one(
            "organisation",
            "Organisations",
            "organisation_id",
        ))
        .searchable(&["name", "title"])
        .hierarchy("OrgChart", "manager")
        .scoped(member_of("organisation/members"));
    // The add-on's declaration comes scoped to the caller's own events.
    [
        users,
        organisations,
        employees,
        gatehouse::odata::security_events(),
    ]
}

/// Rows whose `members` collection (reached by `path`) holds the caller.
fn member_of(path: &'static str) -> Scope {
    Scope::new(move |caller: &Caller| match caller.user_id {
        Some(id) => parse_filter(&format!("{path}/any(m: m/id eq {id})"))
            .unwrap_or(Expr::Literal(Literal::Boolean(false))),
        None => Expr::Literal(Literal::Boolean(false)),
    })
}
