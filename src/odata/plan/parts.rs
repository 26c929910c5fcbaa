//! The parts of a read's [`Plan`]: what each statement reads and how its
//! rows are written, and what waits for keys an earlier statement reads.

use crate::odata::check::checked::Expansion;
use crate::odata::check::paging::Page;
use crate::odata::check::skiptoken::SkipTokens;
use crate::odata::model::sets::Property;
use crate::odata::model::sets::{EdmType, EntitySet};
use crate::odata::plan::ctx::Numbers;
use crate::odata::plan::ctx::ODataRequest;
use crate::odata::plan::error::ODataError;
use crate::odata::query::syntax::{Literal, Query};
use crate::odata::sql::fetch::{count_per_value, fetch_query, Fetch, Restriction};
use crate::odata::sql::select::Sql;

/// Everything one read request runs.
pub(crate) enum Plan<'p, 'm, 'q> {
    /// A collection, an entity or a count of rows whose source is known.
    Read(Reading<'p, 'm, 'q>),
    /// A navigation of one entity: its parent's statement, then the target.
    Navigation(Box<Navigate<'p, 'm, 'q>>),
}

/// What a request reads of a source.
pub(crate) enum Reading<'p, 'm, 'q> {
    /// A collection response.
    Collection(Box<Listing<'p, 'm, 'q>>),
    /// One entity, or 404.
    Entity(Box<Single<'p, 'm, 'q>>),
    /// A plain-text count.
    Count(Sql),
}

/// A collection response.
pub(crate) struct Listing<'p, 'm, 'q> {
    /// The body's `@odata.context`.
    pub context: String,
    /// The rows its page holds at most (the body's buffer is sized by it).
    pub page_rows: u64,
    /// The rows read.
    pub rows: Rows<'p, 'm, 'q>,
    /// What closes the body.
    pub close: Close,
}

/// The rows of a collection response.
pub(crate) enum Rows<'p, 'm, 'q> {
    /// `$top=0`: no row is read; the count alone, when asked.
    None {
        /// The statement counting the collection.
        count: Option<Sql>,
    },
    /// A page.
    Page(Box<PagePlan<'p, 'm, 'q>>),
}

/// One entity's response.
pub(crate) struct Single<'p, 'm, 'q> {
    /// The entity's `@odata.context`.
    pub context: String,
    /// The set it is read from, for the 404.
    pub set: &'m EntitySet,
    /// A page of at most one row.
    pub page: PagePlan<'p, 'm, 'q>,
}

/// Every statement of one page and how its rows are written.
pub(crate) struct PagePlan<'p, 'm, 'q> {
    /// The statements, and the count and order values their rows carry.
    pub read: PageRead,
    /// How a row becomes JSON.
    pub layout: RowShape<'m>,
    /// The rows the page holds at most.
    pub limit: u64,
    /// How the next link's `$skiptoken` is made, when the page seeks.
    pub seal: Option<Seal>,
    /// The page's expansions, each waiting for the page's keys.
    pub follows: Vec<Follow<'p, 'm, 'q>>,
}

/// What a page's `$skiptoken` is made with.
pub(crate) struct Seal {
    pub(super) tokens: SkipTokens,
    pub(super) binding: String,
    pub(super) types: Vec<EdmType>,
}

impl Seal {
    /// The token after the row with `last` order values, if the page
    /// filled and they fit a token.
    pub fn token(&self, last: Option<Vec<Literal>>) -> Option<String> {
        self.tokens.seal(&self.binding, &last?, &self.types)
    }
}

/// What closes a collection body: its next link, when another page follows.
pub(crate) struct Close {
    pub(super) page: Page,
    pub(super) origin: String,
    pub(super) path: String,
    pub(super) query: Query,
}

impl Close {
    /// The next link after `delivered` entities when `more` rows remain
    /// (with `token` as its `$skiptoken`, when the page seeks).
    pub fn next_link(&self, delivered: u64, more: bool, token: Option<String>) -> Option<String> {
        self.page.next_link(
            &self.origin,
            &self.path,
            &self.query,
            delivered,
            more,
            token,
        )
    }
}

/// One `$expand` navigation, waiting for the keys of its parents: one
/// statement reads the targets of all of them.
pub(crate) struct Follow<'p, 'm, 'q> {
    /// The expansion, checked with the request.
    pub expansion: &'p Expansion<'m, 'q>,
    /// The set of its parents.
    pub parents: &'m EntitySet,
    /// The targets' column holding a parent's key (to-many) or the
    /// targets' key (to-one).
    pub(super) column: String,
    /// Read per parent, for a to-many navigation.
    pub per_parent: Option<PerParent>,
    /// The targets' internal columns, for their own expansions.
    pub(super) internal: Vec<String>,
    /// How a target row becomes JSON.
    pub layout: RowShape<'m>,
    /// The targets' own expansions.
    pub follows: Vec<Follow<'p, 'm, 'q>>,
}

/// How a to-many expansion is read for each parent.
pub(crate) struct PerParent {
    /// Each parent's page of targets.
    pub page: Page,
    /// The parents' key type.
    pub key_type: EdmType,
    /// `$count` inside the expansion.
    pub count: bool,
}

impl<'m> Follow<'_, 'm, '_> {
    /// The rows holding one of `keys` in the follow's column.
    pub fn restriction(&self, keys: Vec<Literal>) -> Restriction {
        Restriction::of(self.column.clone(), keys)
    }

    /// The statement reading the targets `restriction` admits, and how many
    /// rows of it the follow takes at most.
    pub fn statement(
        &self,
        ctx: &ODataRequest<'m>,
        restriction: &Restriction,
    ) -> Result<(Sql, u64), ODataError> {
        // A to-one target per distinct key, whatever `$top` or the page
        // size say.
        let (page, limit) = match &self.per_parent {
            Some(per) => (per.page, u64::MAX),
            None => {
                let n = restriction.values.len() as u64;
                (Page::first(n), n)
            }
        };
        let fetch = Fetch {
            restriction: Some(restriction),
            per_value: self.per_parent.is_some(),
            internal: self.internal.clone(),
            page,
            scopes: Some(&ctx.scopes),
            count: false,
        };
        let sql = fetch_query(self.expansion.checked(), &fetch, ctx.dialect())?;
        Ok((sql, limit))
    }

    /// The statement counting each parent's targets, when `$count` asks.
    pub fn counting(
        &self,
        ctx: &ODataRequest<'m>,
        restriction: &Restriction,
    ) -> Result<Option<Sql>, ODataError> {
        if !self.per_parent.as_ref().is_some_and(|p| p.count) {
            return Ok(None);
        }
        let checked = self.expansion.checked();
        let sql = count_per_value(checked, restriction, Some(&ctx.scopes), ctx.dialect())?;
        Ok(Some(sql))
    }
}

/// A navigation of one entity: its parent's statement, then the target's
/// reading, both written before either runs.
pub(crate) struct Navigate<'p, 'm, 'q> {
    /// The statement reading the parent's key (and, to-one, the foreign key).
    pub parent: Sql,
    /// How the parent's row is read.
    pub layout: RowShape<'m>,
    /// The parent's set, for the 404 when the parent is not there.
    pub set: &'m EntitySet,
    /// A to-one navigation: a parent whose foreign key is null leads to no
    /// entity.
    pub to_one: bool,
    /// The target, read once the parent is found.
    pub target: Reading<'p, 'm, 'q>,
}

/// What is read of a source.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    Collection,
    Entity,
    Count,
}

/// A count that a page statement carries as its column `column` (the same
/// on every row), read with the page in one trip to the database.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InlineCount {
    /// The column holding the count.
    pub column: usize,
    /// The count alone, for a page without rows; `None` when the page
    /// starts at the first row, where no row means a count of 0.
    pub alone: Option<Sql>,
}

/// The statements of one page and what they carry besides its rows.
pub(crate) struct PageRead {
    /// Read one after another, until the page and its probe row are read.
    pub statements: Vec<Sql>,
    /// The collection's count, carried by the statements' rows.
    pub count: Option<InlineCount>,
    /// The order's values, carried by the statements' rows.
    pub order: Option<OrderValues>,
}

/// The values of a page's order that its statements read, off the last row
/// the page can hold, for its next link.
#[derive(Debug, Clone)]
pub(crate) struct OrderValues {
    /// The column of each value, in order.
    pub columns: Vec<usize>,
    /// The values' types, in order.
    pub types: Vec<EdmType>,
}

/// How a statement's rows become JSON: the properties it selects (the key
/// among them), then the internal columns of the given types, then
/// `__parent` when it pages per parent.
#[derive(Debug, Clone)]
pub(crate) struct RowShape<'m> {
    /// The properties selected, in the statement's order.
    pub properties: Vec<&'m Property>,
    /// The name of the set's key.
    pub key: &'m str,
    /// The types of the internal columns (for reading them as literals).
    pub internal: Vec<EdmType>,
    /// The type of `__parent`, when the statement pages per parent.
    pub parent: Option<EdmType>,
    /// The properties each branch of a `concat` carries (none: every row
    /// carries every property).
    pub branches: &'m [Vec<String>],
    /// How Int64 and Decimal values are written.
    pub numbers: Numbers,
}
