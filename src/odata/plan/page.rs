//! Planning a page: its statements, read from a position when its next
//! links seek, the count they carry, the layout of their columns, and the
//! follow-ups of its expansions.

use crate::odata::check::checked::{Checked, Expansion};
use crate::odata::check::paging::Page;
use crate::odata::check::resolve::QueryError;
use crate::odata::check::skiptoken::SkipTokens;
use crate::odata::model::sets::{EdmType, EntitySet, NavigationKind};
use crate::odata::plan::ctx::{ODataRequest, Source};
use crate::odata::plan::error::ODataError;
use crate::odata::plan::parts::{
    Follow, InlineCount, OrderValues, PagePlan, PageRead, PerParent, RowShape, Seal,
};
use crate::odata::query::syntax::Query;
use crate::odata::sql::fetch::{count_restricted, fetch_query, seek_statements, Fetch, Order};
use crate::odata::sql::seek::Position;
use crate::odata::sql::select::Sql;

/// A collection page whose next links seek.
pub(super) struct Seeking {
    /// Where the page starts; `None` past `$skip` rows (a link without a
    /// `$skiptoken`), still selecting the order's values for the next link.
    position: Option<Position>,
    /// The order, worked out once.
    order: Order,
    /// What the page's tokens are bound to.
    binding: String,
}

/// How a collection page of `source` under `query` is read by position:
/// `None` for a collection whose next links carry no `$skiptoken` (a
/// navigation's, or a derived set's). 400 for a `$skiptoken` such a
/// collection was sent, or one that does not open.
pub(super) fn seeking(
    ctx: &ODataRequest<'_>,
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
    let order = match source.restriction {
        None if source.set.derived.is_none() => Some(Order::of(checked, ctx.dialect())?),
        _ => None,
    };
    let Some(order) = order else {
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
    let types = order.types();
    let position = match &query.skiptoken {
        Some(token) => Some(Position::After(ctx.tokens.open(&binding, token, &types)?)),
        None if page.offset() == 0 => Some(Position::First),
        None => None,
    };
    Ok(Some(Seeking {
        position,
        order,
        binding,
    }))
}

/// Every statement of `page` of `source` (its rows, the count when asked,
/// from its position when it seeks), the layout of their columns and the
/// follow-ups of its expansions.
pub(super) fn page<'p, 'm, 'q>(
    ctx: &ODataRequest<'m>,
    source: &Source<'m>,
    checked: &'p Checked<'m, 'q>,
    page: Page,
    count: bool,
    seeking: Option<Seeking>,
) -> Result<PagePlan<'p, 'm, 'q>, ODataError> {
    let expansions = checked.expand();
    let internal = admit(ctx, expansions)?;
    let selected = checked.selected();
    let order = seeking.as_ref().map(|s| OrderValues {
        columns: s.order.columns(checked, internal.len(), ctx.dialect()),
        types: s.order.types(),
    });
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
    let layout = RowShape {
        properties: selected.to_vec(),
        key: &source.set.key,
        internal: internal_types(expansions),
        parent: None,
        branches: source.set.derived.as_ref().map_or(&[], |d| &d.branches[..]),
        numbers: ctx.numbers,
    };
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
        tokens: ctx.tokens.clone(),
        binding: s.binding,
        types: s.order.types(),
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

/// Refuses `expansions`, at any depth, into a set the caller may not read:
/// what planning their follow-ups refuses, for a read that plans them
/// later (a navigation's target) or not at all (`$top=0`).
pub(super) fn refuse_unreadable(
    ctx: &ODataRequest<'_>,
    expansions: &[Expansion<'_, '_>],
) -> Result<(), ODataError> {
    admit(ctx, expansions)?;
    for expansion in expansions {
        refuse_unreadable(ctx, expansion.checked().expand())?;
    }
    Ok(())
}

/// The follow-ups of `expansions` of rows of `parents`.
pub(super) fn follows<'p, 'm, 'q>(
    ctx: &ODataRequest<'m>,
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
        let layout = RowShape {
            properties: checked.selected().to_vec(),
            key: &target.key,
            internal: internal_types(nested),
            parent: per_parent.as_ref().map(|p| p.key_type),
            branches: &[],
            numbers: ctx.numbers,
        };
        let follow = Follow {
            expansion,
            parents,
            column,
            per_parent,
            internal,
            layout,
            follows: follows(ctx, target, nested)?,
        };
        // Its statements are written once the parents' keys are read (their
        // text depends on how many there are): written here once without
        // keys, whatever they would refuse is refused before any statement
        // runs.
        let none = follow.restriction(Vec::new());
        follow.statement(ctx, &none)?;
        follow.counting(ctx, &none)?;
        planned.push(follow);
    }
    Ok(planned)
}

/// The statement counting the rows of `source` that `checked`'s filter and
/// search admit, under the caller's scope.
pub(super) fn count(
    ctx: &ODataRequest<'_>,
    source: &Source<'_>,
    checked: &Checked<'_, '_>,
) -> Result<Sql, ODataError> {
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
fn admit(
    ctx: &ODataRequest<'_>,
    expansions: &[Expansion<'_, '_>],
) -> Result<Vec<String>, ODataError> {
    let mut internal = Vec::new();
    for e in expansions {
        if !e.target().readable_by(&ctx.caller) {
            return Err(ODataError::not_readable(&ctx.caller));
        }
        if let NavigationKind::ToOne { column } = &e.nav().kind {
            internal.push(column.clone());
        }
    }
    Ok(internal)
}

/// The types of the internal columns of `expansions`' parents: each to-one
/// foreign key has its target's key type.
pub(super) fn internal_types(expansions: &[Expansion<'_, '_>]) -> Vec<EdmType> {
    expansions
        .iter()
        .filter(|e| !e.nav().is_collection())
        .map(|e| key_type(e.target()))
        .collect()
}

/// The type of `set`'s key.
pub(super) fn key_type(set: &EntitySet) -> EdmType {
    set.key_property().map_or(EdmType::Int64, |k| k.edm_type)
}

/// The table column of `set`'s key.
pub(super) fn key_column(set: &EntitySet) -> Result<String, ODataError> {
    set.key_property()
        .map(|k| k.column.clone())
        .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))
}
