//! A read request's plan: everything it runs, made from its one [`Checked`]
//! query and the caller's scopes before its first statement runs. The
//! answer ([`answer::run`](super::answer::run)) only carries a plan out.
//!
//! - A collection: its page's statements (read from a position when its
//!   next links seek), the count as a column of them, the layout of their
//!   columns and the order values its next link is sealed with; with
//!   `$top=0`, the count alone.
//! - One entity: a page of at most one row. A count: one statement.
//! - A navigation: its parent's statement, then the target, waiting for
//!   the parent's key ([`Waiting`]).
//! - `$expand`: each expansion a [`Follow`], waiting for its parents' keys.
//!
//! Every check and refusal happens here. A statement waiting for keys that
//! an earlier statement reads is written when they are read, from what the
//! plan settled; nothing is looked up or refused then.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use super::ctx::{Ctx, Source};
use super::path::{KeySegment, SetPath};
use super::reply::ODataError;
use super::rows::{InlineCount, OrderValues, PageRead};
use super::sinks::{Entity, Layout};
use super::values::write_str;
use crate::odata::check::{check_query, Checked, Expansion};
use crate::odata::fetch::{
    count_per_value, count_restricted, fetch_query, order_columns, order_types, seek_statements,
    Fetch, Restriction,
};
use crate::odata::model::{EdmType, EntitySet, Navigation, NavigationKind};
use crate::odata::paging::Page;
use crate::odata::query::{Literal, Path, Query, Select};
use crate::odata::resolve::QueryError;
use crate::odata::seek::Position;
use crate::odata::skiptoken::SkipTokens;
use crate::odata::sql::Sql;

/// Everything one read request runs.
pub(super) enum Plan<'p, 'm, 'q> {
    /// A collection, an entity or a count of rows whose source is known.
    Read(Reading<'p, 'm, 'q>),
    /// A navigation of one entity: its parent's statement, then the target.
    Navigation(Box<Navigate<'p, 'm, 'q>>),
}

/// What a request reads of a source.
pub(super) enum Reading<'p, 'm, 'q> {
    /// A collection response.
    Collection(Box<Listing<'p, 'm, 'q>>),
    /// One entity, or 404.
    Entity(Box<Single<'p, 'm, 'q>>),
    /// A plain-text count.
    Count(Sql),
}

/// A collection response.
pub(super) struct Listing<'p, 'm, 'q> {
    /// The body's start: `{"@odata.context":"…"`.
    pub head: Vec<u8>,
    /// The rows read.
    pub rows: Rows<'p, 'm, 'q>,
    /// What closes the body.
    pub close: Close,
}

/// The rows of a collection response.
pub(super) enum Rows<'p, 'm, 'q> {
    /// `$top=0`: no row is read; the count alone, when asked.
    None {
        /// The statement counting the collection.
        count: Option<Sql>,
    },
    /// A page.
    Page(Box<PagePlan<'p, 'm, 'q>>),
}

/// One entity's response.
pub(super) struct Single<'p, 'm, 'q> {
    /// The entity's `@odata.context`.
    pub context: String,
    /// The set it is read from, for the 404.
    pub set: &'m EntitySet,
    /// A page of at most one row.
    pub page: PagePlan<'p, 'm, 'q>,
}

/// Every statement of one page and how its rows are written.
pub(super) struct PagePlan<'p, 'm, 'q> {
    /// The statements, and the count and order values their rows carry.
    pub read: PageRead,
    /// How a row becomes JSON.
    pub layout: Layout,
    /// The rows the page holds at most.
    pub limit: u64,
    /// How the next link's `$skiptoken` is made, when the page seeks.
    pub seal: Option<Seal>,
    /// The page's expansions, each waiting for the page's keys.
    pub follows: Vec<Follow<'p, 'm, 'q>>,
}

/// What a page's `$skiptoken` is made with.
pub(super) struct Seal {
    tokens: SkipTokens,
    binding: String,
    types: Vec<EdmType>,
}

impl Seal {
    /// The token after the row with `last` order values, if the page
    /// filled and they fit a token.
    pub fn token(&self, last: Option<Vec<Literal>>) -> Option<String> {
        self.tokens.seal(&self.binding, &last?, &self.types)
    }
}

/// What closes a collection body: its next link, when another page follows.
pub(super) struct Close {
    page: Page,
    origin: String,
    path: String,
    query: Query,
}

impl Close {
    /// Writes `]`, the next link after `delivered` entities when `more`
    /// rows remain, and `}`.
    pub fn write(&self, body: &mut Vec<u8>, delivered: u64, more: bool, token: Option<String>) {
        body.push(b']');
        let (origin, path) = (&self.origin, &self.path);
        if let Some(link) = self
            .page
            .next_link(origin, path, &self.query, delivered, more, token)
        {
            body.extend_from_slice(b",\"@odata.nextLink\":");
            write_str(body, &link);
        }
        body.push(b'}');
    }
}

/// One `$expand` navigation, waiting for the keys of its parents: one
/// statement reads the targets of all of them.
pub(super) struct Follow<'p, 'm, 'q> {
    /// The expansion, checked with the request.
    pub expansion: &'p Expansion<'m, 'q>,
    /// The set of its parents.
    pub parents: &'m EntitySet,
    /// The targets' column holding a parent's key (to-many) or the
    /// targets' key (to-one).
    column: String,
    /// Read per parent, for a to-many navigation.
    pub per_parent: Option<PerParent>,
    /// The targets' internal columns, for their own expansions.
    internal: Vec<String>,
    /// How a target row becomes JSON.
    pub layout: Layout,
    /// The targets' own expansions.
    pub follows: Vec<Follow<'p, 'm, 'q>>,
}

/// How a to-many expansion is read for each parent.
pub(super) struct PerParent {
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
        Restriction {
            column: self.column.clone(),
            values: keys,
        }
    }

    /// The statement reading the targets `restriction` admits, and how many
    /// rows of it the follow takes at most.
    pub fn statement(
        &self,
        ctx: &Ctx<'m>,
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
        ctx: &Ctx<'m>,
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

/// A navigation of one entity.
pub(super) struct Navigate<'p, 'm, 'q> {
    /// The statement reading the parent's key (and, to-one, the foreign key).
    pub parent: Sql,
    /// How the parent's row is read.
    pub layout: Layout,
    /// The target, waiting for the parent's row.
    pub target: Waiting<'p, 'm, 'q>,
}

/// A reading of a navigation's target, waiting for the key its parent's
/// row gives.
pub(super) struct Waiting<'p, 'm, 'q> {
    /// The parent's set.
    pub set: &'m EntitySet,
    /// The navigation followed.
    nav: &'m Navigation,
    shape: Shape,
    /// The target's column matched against the parent's key (to-many) or
    /// its foreign key (to-one).
    column: String,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
}

impl<'p, 'm, 'q> Waiting<'p, 'm, 'q> {
    /// The target's reading, given the parent's row: `None` for a to-one
    /// navigation that leads to no entity.
    pub fn bind(
        self,
        ctx: &Ctx<'m>,
        parent: Entity,
    ) -> Result<Option<Reading<'p, 'm, 'q>>, ODataError> {
        let path = format!(
            "{}({})/{}",
            self.set.name,
            key_in_path(&parent.key),
            self.nav.name
        );
        let value = match &self.nav.kind {
            NavigationKind::ToOne { .. } => match parent.internal.into_iter().next().flatten() {
                Some(fk) => fk,
                None => return Ok(None),
            },
            NavigationKind::ToMany { .. } => parent.key,
        };
        let source = Source {
            set: self.checked.set(),
            restriction: Some(Restriction {
                column: self.column,
                values: vec![value],
            }),
            path,
        };
        reading(ctx, source, self.checked, self.query, self.shape).map(Some)
    }
}

/// What is read of a source.
#[derive(Clone, Copy)]
enum Shape {
    Collection,
    Entity,
    Count,
}

/// The set whose rows `path` (below `set`) reads: `set`, or the target of
/// its navigation. 404 for a navigation `set` lacks or a `$count` of a
/// single entity; 401 for a target the caller may not read. Asks no
/// database.
pub(super) fn target<'m>(
    ctx: &Ctx<'m>,
    set: &'m EntitySet,
    path: &SetPath,
) -> Result<&'m EntitySet, ODataError> {
    let Some(name) = &path.navigation else {
        // An entity's key is checked before its options.
        if let Some(key) = &path.key {
            key_restriction(set, key)?;
        }
        return Ok(set);
    };
    let nav = navigation(set, name)?;
    let target = ctx
        .service
        .model
        .target_of(nav)
        .ok_or_else(|| ODataError::not_found(format!("'{name}' leads nowhere")))?;
    if !target.readable_by(&ctx.caller) {
        return Err(ODataError::unauthorized());
    }
    if path.count && !nav.is_collection() {
        return Err(ODataError::not_found(format!(
            "'{name}' is a single entity; it has no $count"
        )));
    }
    Ok(target)
}

/// `query` checked for `set`: once per request, before any statement runs
/// (a request whose options are wrong is 400 whatever the data).
pub(super) fn check<'m, 'q>(
    ctx: &Ctx<'m>,
    set: &'m EntitySet,
    query: &'q Query,
) -> Result<Checked<'m, 'q>, ODataError> {
    Ok(check_query(&ctx.service.model, set, query)?)
}

/// The plan of a read of `path`, whose set is `set` (a derived set's rows
/// are read at its source's path), `checked` being the request's query
/// checked for the set [`target`] named.
pub(super) fn request<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    set: &'m EntitySet,
    path: &SetPath,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
) -> Result<Plan<'p, 'm, 'q>, ODataError> {
    let whole = |restriction| Source {
        set,
        restriction,
        path: path.set.clone(),
    };
    let read = match (&path.key, &path.navigation) {
        (None, _) if path.count => reading(ctx, whole(None), checked, query, Shape::Count)?,
        (None, _) => reading(ctx, whole(None), checked, query, Shape::Collection)?,
        (Some(key), None) => {
            let source = whole(Some(key_restriction(set, key)?));
            reading(ctx, source, checked, query, Shape::Entity)?
        }
        (Some(key), Some(name)) => {
            return navigate(ctx, set, key, name, path.count, checked, query);
        }
    };
    Ok(Plan::Read(read))
}

fn reading<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    source: Source<'m>,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
    shape: Shape,
) -> Result<Reading<'p, 'm, 'q>, ODataError> {
    Ok(match shape {
        Shape::Count => Reading::Count(count(ctx, &source, checked)?),
        Shape::Entity => Reading::Entity(Box::new(Single {
            context: ctx.context(&source.set.name, query, true),
            set: source.set,
            page: page(ctx, &source, checked, Page::first(1), false, None)?,
        })),
        Shape::Collection => Reading::Collection(Box::new(listing(ctx, source, checked, query)?)),
    })
}

fn listing<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    source: Source<'m>,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
) -> Result<Listing<'p, 'm, 'q>, ODataError> {
    let slice = ctx.page.of(query);
    let mut head = Vec::with_capacity(256 + 128 * slice.rows().min(1000) as usize);
    head.extend_from_slice(b"{\"@odata.context\":");
    write_str(&mut head, &ctx.context(&source.set.name, query, false));
    let seeking = seeking(ctx, &source, checked, query, slice)?;
    let rows = match slice.rows() {
        0 => {
            // No row is read, yet an expansion is refused as on any page.
            admit(ctx, checked.expand())?;
            follows(ctx, source.set, checked.expand())?;
            Rows::None {
                count: match query.count {
                    true => Some(count(ctx, &source, checked)?),
                    false => None,
                },
            }
        }
        _ => Rows::Page(Box::new(page(
            ctx,
            &source,
            checked,
            slice,
            query.count,
            seeking,
        )?)),
    };
    let close = Close {
        page: slice,
        origin: ctx.service.origin.clone(),
        path: source.path,
        query: query.clone(),
    };
    Ok(Listing { head, rows, close })
}

/// A collection page whose next links seek.
struct Seeking {
    /// Where the page starts; `None` past `$skip` rows (a link without a
    /// `$skiptoken`), still selecting the order's values for the next link.
    position: Option<Position>,
    /// The types of the order's terms.
    types: Vec<EdmType>,
    /// What the page's tokens are bound to.
    binding: String,
}

/// How a collection page of `source` under `query` is read by position:
/// `None` for a collection whose next links carry no `$skiptoken` (a
/// navigation's, or a derived set's). 400 for a `$skiptoken` such a
/// collection was sent, or one that does not open.
fn seeking(
    ctx: &Ctx<'_>,
    source: &Source<'_>,
    checked: &Checked<'_, '_>,
    query: &Query,
    page: Page,
) -> Result<Option<Seeking>, ODataError> {
    // A page that holds all that `$top` asks for has no next link.
    if query.skiptoken.is_none() && query.top.is_some_and(|top| top <= page.rows()) {
        return Ok(None);
    }
    // A navigation's collection never seeks: its order is not asked for;
    // nor does a derived set's, whose rows no index holds.
    let types = match source.restriction {
        None if source.set.derived.is_none() => Some(order_types(checked, ctx.dialect())?),
        _ => None,
    };
    let Some(types) = types else {
        return match query.skiptoken {
            Some(_) => Err(QueryError::new(
                "invalid_skiptoken",
                "$skiptoken",
                "this collection's next links carry no $skiptoken; page it with $skip",
            )
            .into()),
            None => Ok(None),
        };
    };
    let binding = SkipTokens::binding(&source.path, query);
    let position = match &query.skiptoken {
        Some(token) => Some(Position::After(
            ctx.service.tokens.open(&binding, token, &types)?,
        )),
        None if page.offset() == 0 => Some(Position::First),
        None => None,
    };
    Ok(Some(Seeking {
        position,
        types,
        binding,
    }))
}

/// Every statement of `page` of `source` (its rows, the count when asked,
/// from its position when it seeks), the layout of their columns and the
/// follow-ups of its expansions.
fn page<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    source: &Source<'m>,
    checked: &'p Checked<'m, 'q>,
    page: Page,
    count: bool,
    seeking: Option<Seeking>,
) -> Result<PagePlan<'p, 'm, 'q>, ODataError> {
    let expansions = checked.expand();
    let internal = admit(ctx, expansions)?;
    let selected = checked.selected();
    let order = match &seeking {
        Some(s) => Some(OrderValues {
            columns: order_columns(checked, internal.len(), ctx.dialect())?,
            types: s.types.clone(),
        }),
        None => None,
    };
    // The columns a page statement has before `__count`.
    let read_columns = order
        .as_ref()
        .and_then(|o| o.columns.iter().max().map(|last| last + 1))
        .unwrap_or(0)
        .max(selected.len() + internal.len());
    let sought = seeking
        .as_ref()
        .is_some_and(|s| matches!(s.position, Some(Position::After(_))));
    // The page statement carries the count; alone it is needed only for an
    // empty page past the first row.
    let count = match count {
        true => Some(InlineCount {
            column: read_columns,
            alone: match page.offset() {
                0 if !sought => None,
                _ => Some(self::count(ctx, source, checked)?),
            },
        }),
        false => None,
    };
    let mut layout = Layout::new(
        selected,
        &source.set.key,
        internal_types(expansions),
        None,
        ctx.numbers,
    );
    if let Some(derived) = &source.set.derived {
        layout = layout.branching(selected, &derived.branches, ctx.numbers);
    }
    let fetch = Fetch {
        restriction: source.restriction.as_ref(),
        per_value: false,
        internal,
        page,
        scopes: Some(&ctx.scopes),
        count: count.is_some(),
    };
    let statements = match &seeking {
        Some(s) => seek_statements(checked, &fetch, s.position.as_ref(), ctx.dialect())?,
        None => vec![fetch_query(checked, &fetch, ctx.dialect())?],
    };
    let seal = seeking.map(|s| Seal {
        tokens: ctx.service.tokens.clone(),
        binding: s.binding,
        types: s.types,
    });
    Ok(PagePlan {
        read: PageRead {
            statements,
            count,
            order,
        },
        layout,
        limit: page.rows(),
        seal,
        follows: follows(ctx, source.set, expansions)?,
    })
}

/// The follow-ups of `expansions` of rows of `parents`.
fn follows<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    parents: &'m EntitySet,
    expansions: &'p [Expansion<'m, 'q>],
) -> Result<Vec<Follow<'p, 'm, 'q>>, ODataError> {
    let mut planned = Vec::with_capacity(expansions.len());
    for expansion in expansions {
        let checked = expansion.checked();
        let nested = checked.expand();
        let internal = admit(ctx, nested)?;
        let target = expansion.target();
        let (column, per_parent) = match &expansion.nav().kind {
            NavigationKind::ToOne { .. } => (key_column(target)?, None),
            NavigationKind::ToMany { remote_column } => {
                let per = PerParent {
                    page: ctx.page.of(expansion.options()),
                    key_type: key_type(parents),
                    count: expansion.options().count,
                };
                (remote_column.clone(), Some(per))
            }
        };
        let layout = Layout::new(
            checked.selected(),
            &target.key,
            internal_types(nested),
            per_parent.as_ref().map(|p| p.key_type),
            ctx.numbers,
        );
        planned.push(Follow {
            expansion,
            parents,
            column,
            per_parent,
            internal,
            layout,
            follows: follows(ctx, target, nested)?,
        });
    }
    Ok(planned)
}

/// The plan of navigation `name` of the entity `key` of `set`.
fn navigate<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    set: &'m EntitySet,
    key: &KeySegment,
    name: &str,
    count: bool,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
) -> Result<Plan<'p, 'm, 'q>, ODataError> {
    let nav = navigation(set, name)?;
    let target = checked.set();
    // The target's expansions are refused before the parent is read.
    admit(ctx, checked.expand())?;
    follows(ctx, target, checked.expand())?;
    let (internal, column) = match &nav.kind {
        NavigationKind::ToOne { column } => (vec![column.clone()], key_column(target)?),
        NavigationKind::ToMany { remote_column } => (Vec::new(), remote_column.clone()),
    };
    let keys_only = Query {
        select: Some(Select::Paths(vec![Path::single(&set.key)])),
        ..Query::default()
    };
    let parent = check(ctx, set, &keys_only)?;
    let layout = Layout::new(
        parent.selected(),
        &set.key,
        vec![key_type(target); internal.len()],
        None,
        ctx.numbers,
    );
    let restriction = key_restriction(set, key)?;
    let fetch = Fetch {
        restriction: Some(&restriction),
        per_value: false,
        internal,
        page: Page::first(1),
        scopes: Some(&ctx.scopes),
        count: false,
    };
    let shape = match (count, nav.is_collection()) {
        (true, _) => Shape::Count,
        (false, true) => Shape::Collection,
        (false, false) => Shape::Entity,
    };
    Ok(Plan::Navigation(Box::new(Navigate {
        parent: fetch_query(&parent, &fetch, ctx.dialect())?,
        layout,
        target: Waiting {
            set,
            nav,
            shape,
            column,
            checked,
            query,
        },
    })))
}

/// The statement counting the rows of `source` that `checked`'s filter and
/// search admit, under the caller's scope.
fn count(ctx: &Ctx<'_>, source: &Source<'_>, checked: &Checked<'_, '_>) -> Result<Sql, ODataError> {
    let restriction = source.restriction.as_ref();
    Ok(count_restricted(
        checked,
        restriction,
        Some(&ctx.scopes),
        ctx.dialect(),
    )?)
}

/// Refuses `expansions` into a set the caller may not read; answers the
/// internal columns the parents' fetch must read for them (the to-one
/// foreign keys, in order).
fn admit(ctx: &Ctx<'_>, expansions: &[Expansion<'_, '_>]) -> Result<Vec<String>, ODataError> {
    let mut internal = Vec::new();
    for e in expansions {
        if !e.target().readable_by(&ctx.caller) {
            return Err(ODataError::unauthorized());
        }
        if let NavigationKind::ToOne { column } = &e.nav().kind {
            internal.push(column.clone());
        }
    }
    Ok(internal)
}

/// The types of the internal columns of `expansions`' parents: each to-one
/// foreign key has its target's key type.
fn internal_types(expansions: &[Expansion<'_, '_>]) -> Vec<EdmType> {
    expansions
        .iter()
        .filter(|e| !e.nav().is_collection())
        .map(|e| key_type(e.target()))
        .collect()
}

/// The type of `set`'s key.
fn key_type(set: &EntitySet) -> EdmType {
    set.key_property().map_or(EdmType::Int64, |k| k.edm_type)
}

/// The table column of `set`'s key.
fn key_column(set: &EntitySet) -> Result<String, ODataError> {
    set.key_property()
        .map(|k| k.column.clone())
        .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))
}

/// Navigation `name` of `set`, or 404.
fn navigation<'m>(set: &'m EntitySet, name: &str) -> Result<&'m Navigation, ODataError> {
    set.find_navigation(name)
        .ok_or_else(|| ODataError::not_found(format!("{} has no navigation '{name}'", set.name)))
}

/// Characters escaped in a key written into a URL path.
const KEY_IN_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// A key as written in a resource path, URL-safe.
pub(super) fn key_in_path(key: &Literal) -> String {
    utf8_percent_encode(&key.to_string(), KEY_IN_PATH).to_string()
}

/// The row of `set` with `key`, as a restriction on its key column; 400
/// for a key of another type or name.
fn key_restriction(set: &EntitySet, key: &KeySegment) -> Result<Restriction, ODataError> {
    let property = set
        .key_property()
        .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))?;
    if key.name.as_ref().is_some_and(|n| *n != property.name) {
        return Err(ODataError::invalid_key(format!(
            "{} is keyed by '{}'",
            set.name, property.name
        )));
    }
    let fits = match (
        property.edm_type,
        crate::odata::typing::literal_type(&key.value),
    ) {
        (expected, Some(given)) if expected == given => true,
        (expected, Some(given)) => expected.is_integer() && given.is_integer(),
        _ => false,
    };
    if !fits {
        return Err(ODataError::invalid_key(format!(
            "the key of {} is an {}; '{}' is not",
            set.name,
            property.edm_type.name(),
            key.value
        )));
    }
    Ok(Restriction {
        column: property.column.clone(),
        values: vec![key.value.clone()],
    })
}
