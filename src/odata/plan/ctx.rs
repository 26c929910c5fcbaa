//! Who asks and how the answer is written ([`ODataRequest`]): what every
//! plan of one request is made with; and where rows come from
//! ([`Source`]).

use crate::db::Dialect;
use crate::odata::check::paging::Page;
use crate::odata::check::scopes::Scopes;
use crate::odata::check::skiptoken::SkipTokens;
use crate::odata::model::scope::Caller;
use crate::odata::model::sets::{EdmType, EntitySet, Model};
use crate::odata::query::syntax::Query;
use crate::odata::sql::fetch::Restriction;

/// One request as its plan sees it: the model it reads, who asks, the page
/// it asks for and the format of its answer.
pub struct ODataRequest<'m> {
    /// The declared sets (or the one set `$apply` derives).
    pub model: &'m Model,
    /// Signs and opens the `$skiptoken`s of next links.
    pub tokens: &'m SkipTokens,
    /// `base_url` without a trailing slash, for context URLs and next links.
    pub origin: &'m str,
    /// The engine the statements are written for.
    pub dialect: Dialect,
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

/// How Int64 and Decimal values are written: as JSON numbers, or as JSON
/// strings for clients whose numbers are IEEE 754 doubles, which would lose
/// digits past 2^53 (`IEEE754Compatible=true`, as UI5 asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Numbers {
    /// JSON numbers.
    #[default]
    Json,
    /// Int64 and Decimal as strings.
    Ieee754Compatible,
}

impl Numbers {
    /// Whether a value of type `edm` is written as a string.
    pub fn quotes(self, edm: EdmType) -> bool {
        self == Self::Ieee754Compatible && matches!(edm, EdmType::Int64 | EdmType::Decimal)
    }
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

impl ODataRequest<'_> {
    /// The engine's dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The `@odata.context` of an answer over `set` under `query`:
    /// `<origin>/odata/$metadata#Set`, with the `$select` list as sent
    /// (`Set(a,b)`), and `/$entity` for one entity.
    pub fn context(&self, set: &str, query: &Query, entity: bool) -> String {
        let origin = self.origin;
        let selected = match &query.select {
            Some(select) => format!("({select})"),
            None => String::new(),
        };
        let entity = if entity { "/$entity" } else { "" };
        format!("{origin}/odata/$metadata#{set}{selected}{entity}")
    }
}
