//! Every scope of a model for one caller, checked once per request: what the
//! SQL step joins to the rows of each set.

use std::collections::HashMap;

use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::{check_condition, Typed};
use crate::odata::model::scope::Caller;
use crate::odata::model::sets::Model;

/// Every scope of a model evaluated for one caller and checked against the
/// model, so that the SQL step can join each to the rows of its set, reached
/// directly or from another set. For a guest, also the sets that are not
/// public: no path may reach them.
#[derive(Debug, Clone, Default)]
pub struct Scopes<'m> {
    checked: HashMap<String, Result<Typed<'m>, QueryError>>,
    denied: Vec<String>,
}

impl<'m> Scopes<'m> {
    /// The scopes of `model`'s sets for `caller`. A scope that does not fit
    /// its set is kept as its error, reported by every statement that reads
    /// that set.
    pub fn for_caller(model: &'m Model, caller: &Caller) -> Scopes<'m> {
        let checked = model
            .sets
            .iter()
            .filter_map(|set| {
                let scope = set.scope.as_ref()?;
                let checked = check_condition(model, set, &scope.filter(caller), "$filter");
                Some((set.name.clone(), checked))
            })
            .collect();
        // Paths are judged by what the owner may read: the sets' own
        // scopes cross into sets a token was not given (the reference
        // host's `Users` are confined through `Organisations`); what a
        // token reads — the set it names, its navigations, `$expand` — is
        // its sets only.
        let owner = Caller {
            sets: None,
            ..caller.clone()
        };
        let denied = model
            .sets
            .iter()
            .filter(|s| !s.readable_by(&owner))
            .map(|s| s.name.clone())
            .collect();
        Scopes { checked, denied }
    }

    /// The checked scope of the set called `set`, if it has one; its paths
    /// start at the set's own rows.
    pub(crate) fn of(&self, set: &str) -> Result<Option<&Typed<'m>>, QueryError> {
        match self.checked.get(set) {
            Some(Ok(scope)) => Ok(Some(scope)),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(None),
        }
    }

    /// Whether the caller may not read the set called `set` at all.
    pub(crate) fn denies(&self, set: &str) -> bool {
        self.denied.iter().any(|d| d == set)
    }
}
