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
//! let expr = pets.scope.as_ref().unwrap().filter(&Caller::user(7));
//! assert_eq!(expr.to_string(), "owner_id eq 7");
//! ```

use std::fmt;
use std::sync::Arc;

use crate::odata::query::syntax::Expr;

/// Who is asking: the signed-in user (by session or bearer token), or a guest
/// reading a public set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    /// `users.id` of the caller; `None` for a guest.
    pub user_id: Option<i64>,
    /// The sets a bearer token was given, when it was given only some: it
    /// reads no other, public or not. `None` for every set the user may
    /// read (a session, a token given them all).
    pub sets: Option<Arc<[String]>>,
}

impl Caller {
    /// The signed-in user `user_id`, reading every set they may.
    ///
    /// ```
    /// use gatehouse::odata::Caller;
    /// assert!(Caller::user(7).may_name("Pets"));
    /// ```
    pub fn user(user_id: i64) -> Self {
        Self {
            user_id: Some(user_id),
            sets: None,
        }
    }

    /// Whether the caller may read the set called `set` as far as a
    /// token's sets go (whether the set itself lets them is
    /// `EntitySet::readable_by`'s).
    pub fn may_name(&self, set: &str) -> bool {
        self.sets
            .as_ref()
            .is_none_or(|sets| sets.iter().any(|named| named == set))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Dialect;
    use crate::odata::check::resolve::QueryError;
    use crate::odata::check::scopes::Scopes;
    use crate::odata::model::fixture::model;
    use crate::odata::model::sets::Model;
    use crate::odata::{check_query, fetch_query, parse_filter, parse_query, Fetch, Page};

    /// The fixture with organisations scoped by `scope` for each caller.
    fn scoped_model(scope: fn(&Caller) -> String) -> Model {
        let mut m = model();
        let orgs = m.sets.iter_mut().find(|s| s.name == "Organisations");
        orgs.expect("fixture").scope = Some(Scope::new(move |c: &Caller| {
            parse_filter(&scope(c)).expect("valid")
        }));
        m
    }

    /// Organisations the caller's id names.
    fn own_id(c: &Caller) -> String {
        format!("id eq {}", c.user_id.unwrap_or(0))
    }

    fn try_sql(m: &Model, set: &str, query: &str, scopes: &Scopes) -> Result<String, QueryError> {
        let set = m.find(set).expect("fixture");
        let fetch = Fetch {
            restriction: None,
            per_value: false,
            internal: vec![],
            page: Page::first(5),
            scopes: Some(scopes),
            count: false,
        };
        let q = parse_query(query).expect("parses");
        let checked = check_query(m, set, &q)?;
        Ok(fetch_query(&checked, &fetch, Dialect::Sqlite)?.text)
    }

    fn sql(m: &Model, query: &str, scopes: &Scopes) -> String {
        try_sql(m, "Users", query, scopes).expect("fits")
    }

    #[test]
    fn paths_and_lambdas_into_a_scoped_set_see_only_its_scope() {
        let m = scoped_model(own_id);
        let scopes = Scopes::for_caller(&m, &Caller::user(7));
        let path = sql(&m, "$filter=organisation/name eq 'Acme'", &scopes);
        assert!(
            path.contains(r#"WHERE "t1"."id" = "t0"."org_id" AND ("t1"."id" = $"#),
            "{path}"
        );
        let lambda = sql(
            &m,
            "$filter=organisation/users/any(u: u/organisation/name eq 'x')",
            &scopes,
        );
        assert_eq!(lambda.matches(r#"AND ("t"#).count(), 2, "{lambda}");
        let unscoped = sql(
            &m,
            "$filter=organisation/name eq 'Acme'",
            &Scopes::default(),
        );
        assert!(!unscoped.contains(" AND "), "{unscoped}");
    }

    #[test]
    fn a_scope_is_joined_to_the_rows_of_its_own_set() {
        let m = scoped_model(own_id);
        let scopes = Scopes::for_caller(&m, &Caller::user(7));
        let orgs = try_sql(&m, "Organisations", "$filter=name eq 'A'", &scopes).expect("fits");
        assert!(
            orgs.contains(r#"WHERE (("t0"."id" = $1) AND ("t0"."name" = $2))"#),
            "{orgs}"
        );
        let alone = try_sql(&m, "Organisations", "", &scopes).expect("fits");
        assert!(alone.contains(r#"WHERE ("t0"."id" = $1) ORDER"#), "{alone}");
    }

    #[test]
    fn a_scopes_own_lambda_reads_the_rows_it_confines() {
        // An organisation is visible to its members.
        let m = scoped_model(|c| format!("users/any(m: m/id eq {})", c.user_id.unwrap_or(0)));
        let scopes = Scopes::for_caller(&m, &Caller::user(7));
        // Inside a client's lambda too, `m` is the scope's member row, and
        // the scope's paths start at the organisation it confines.
        let text = sql(
            &m,
            "$filter=posts/any(p: p/author/organisation/name eq 'x')",
            &scopes,
        );
        assert!(
            text.contains(concat!(
                r#"(SELECT "t3"."name" FROM "orgs" AS "t3" WHERE "t3"."id" = "#,
                r#"(SELECT "t2"."org_id" FROM "users" AS "t2" WHERE "t2"."id" = "t1"."author_id") "#,
                r#"AND EXISTS (SELECT 1 FROM "users" AS "t4" WHERE "t4"."org_id" = "t3"."id" "#,
                r#"AND ("t4"."id" = $1)))"#
            )),
            "{text}"
        );
    }

    #[test]
    fn a_scope_that_does_not_fit_fails_only_the_statements_that_reach_its_set() {
        let m = scoped_model(|_| "nmae eq 'x'".into());
        let scopes = Scopes::for_caller(&m, &Caller::user(7));
        try_sql(&m, "Users", "$filter=name eq 'x'", &scopes).expect("fits");
        for (set, query) in [
            ("Users", "$filter=organisation/name eq 'x'"),
            ("Organisations", ""),
        ] {
            let e = try_sql(&m, set, query, &scopes).expect_err("refused");
            assert_eq!(e.code, "unknown_property", "{set}?{query}");
        }
    }
}
