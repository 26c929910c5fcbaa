//! What one request's plan and answer work with: the service, the
//! database, the caller, the page and the caller's scopes ([`Ctx`]), and
//! where rows come from ([`Source`]).

use super::rows::Numbers;
use super::state::Service;
use crate::db::{Dialect, Readers};
use crate::odata::fetch::Restriction;
use crate::odata::model::EntitySet;
use crate::odata::paging::Page;
use crate::odata::query::Query;
use crate::odata::scope::Caller;
use crate::odata::scopes::Scopes;

/// Everything one request's answer needs.
pub struct Ctx<'m> {
    /// The model and paging policy.
    pub service: &'m Service,
    /// What the set is read through.
    pub db: &'m Readers,
    /// Who asks.
    pub caller: Caller,
    /// The request's page: the page size in effect, from its `Prefer`
    /// header; each collection answered cuts it to its own options.
    pub page: Page,
    /// The caller's scopes of every set.
    pub scopes: Scopes<'m>,
    /// How Int64 and Decimal values are written.
    pub numbers: Numbers,
}

/// Where rows come from: a whole set, or the rows matching a restriction.
pub struct Source<'m> {
    /// The set read.
    pub set: &'m EntitySet,
    /// Only rows matching this.
    pub restriction: Option<Restriction>,
    /// The resource path next links point at (`Users`, `Users(3)/posts`).
    pub path: String,
}

impl Ctx<'_> {
    /// The engine's dialect.
    pub fn dialect(&self) -> Dialect {
        self.db.dialect()
    }

    /// The `@odata.context` of an answer over `set` under `query`:
    /// `<origin>/odata/$metadata#Set`, with the `$select` list as sent
    /// (`Set(a,b)`), and `/$entity` for one entity.
    pub fn context(&self, set: &str, query: &Query, entity: bool) -> String {
        let origin = &self.service.origin;
        let selected = match &query.select {
            Some(select) => format!("({select})"),
            None => String::new(),
        };
        let entity = if entity { "/$entity" } else { "" };
        format!("{origin}/odata/$metadata#{set}{selected}{entity}")
    }
}
