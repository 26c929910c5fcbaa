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

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::model::Model;
use super::query::{Expr, LambdaPredicate, Path};

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

/// The lambda variable a scope's paths are anchored to when the scope
/// confines a set reached through a path or lambda; `$` keeps it apart from
/// any name a client can write.
pub(crate) const SCOPE_VARIABLE: &str = "$scoped";

/// Every scope of a model evaluated for one caller, with paths anchored to
/// [`SCOPE_VARIABLE`] so they apply to a set reached from another.
/// For a guest, also the sets that are not public: no path may reach them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scopes {
    anchored: HashMap<String, Expr>,
    denied: Vec<String>,
}

impl Scopes {
    /// The scopes of `model`'s sets for `caller`.
    pub fn for_caller(model: &Model, caller: &Caller) -> Scopes {
        let anchored = model
            .sets
            .iter()
            .filter_map(|set| {
                let scope = set.scope.as_ref()?;
                Some((set.name.clone(), anchor(&scope.filter(caller), &[])))
            })
            .collect();
        let denied = match caller.user_id {
            Some(_) => Vec::new(),
            None => model
                .sets
                .iter()
                .filter(|s| !s.public)
                .map(|s| s.name.clone())
                .collect(),
        };
        Scopes { anchored, denied }
    }

    /// The anchored scope of the set called `set`, if it has one.
    pub(crate) fn anchored(&self, set: &str) -> Option<&Expr> {
        self.anchored.get(set)
    }

    /// Whether the caller may not read the set called `set` at all.
    pub(crate) fn denies(&self, set: &str) -> bool {
        self.denied.iter().any(|d| d == set)
    }
}

/// `expr` with every path that does not start at a lambda variable in
/// `bound` made to start at [`SCOPE_VARIABLE`].
fn anchor(expr: &Expr, bound: &[&str]) -> Expr {
    let path = |p: &Path| {
        let free = p
            .segments()
            .first()
            .is_none_or(|s| !bound.contains(&s.as_str()));
        if free {
            let mut segments = vec![SCOPE_VARIABLE.to_owned()];
            segments.extend(p.segments().iter().cloned());
            Path(segments)
        } else {
            p.clone()
        }
    };
    match expr {
        Expr::Literal(_) => expr.clone(),
        Expr::Path(p) => Expr::Path(path(p)),
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: Box::new(anchor(left, bound)),
            right: Box::new(anchor(right, bound)),
        },
        Expr::Unary { op, operand } => Expr::Unary {
            op: *op,
            operand: Box::new(anchor(operand, bound)),
        },
        Expr::In { operand, list } => Expr::In {
            operand: Box::new(anchor(operand, bound)),
            list: list.iter().map(|e| anchor(e, bound)).collect(),
        },
        Expr::Call { function, args } => Expr::Call {
            function: *function,
            args: args.iter().map(|e| anchor(e, bound)).collect(),
        },
        Expr::Lambda {
            collection,
            quantifier,
            predicate,
        } => Expr::Lambda {
            collection: path(collection),
            quantifier: *quantifier,
            predicate: predicate.as_ref().map(|p| {
                let mut inner = bound.to_vec();
                inner.push(&p.variable);
                LambdaPredicate {
                    variable: p.variable.clone(),
                    body: Box::new(anchor(&p.body, &inner)),
                }
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Dialect;
    use crate::odata::fixture::model;
    use crate::odata::{fetch_query, parse_filter, parse_query, Fetch, Page};

    /// The fixture with organisations scoped to `id eq <user>`.
    fn scoped_model() -> Model {
        let mut m = model();
        let orgs = m.sets.iter_mut().find(|s| s.name == "Organisations");
        orgs.expect("fixture").scope = Some(Scope::new(|c: &Caller| {
            parse_filter(&format!("id eq {}", c.user_id.unwrap_or(0))).expect("valid")
        }));
        m
    }

    fn sql(m: &Model, query: &str, scopes: &Scopes) -> String {
        let users = m.find("Users").expect("fixture");
        let fetch = Fetch {
            restriction: None,
            per_value: false,
            internal: vec![],
            page: Page { offset: 0, size: 5 },
            scopes: Some(scopes),
            count: false,
        };
        let q = parse_query(query).expect("parses");
        fetch_query(m, users, &q, &fetch, Dialect::Sqlite)
            .expect("fits")
            .text
    }

    #[test]
    fn paths_and_lambdas_into_a_scoped_set_see_only_its_scope() {
        let m = scoped_model();
        let scopes = Scopes::for_caller(&m, &Caller { user_id: Some(7) });
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
    fn anchoring_keeps_lambda_variables() {
        let e = parse_filter("a eq 1 and posts/any(p: p/likes gt b)").expect("parses");
        assert_eq!(
            anchor(&e, &[]).to_string(),
            "$scoped/a eq 1 and $scoped/posts/any(p:p/likes gt $scoped/b)"
        );
    }
}
