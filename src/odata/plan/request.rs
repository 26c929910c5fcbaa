//! Planning a read: the set it reads, its query checked once, and the
//! plan of its collection, entity, count or navigation — in one call,
//! [`plan`], before any statement runs.

use crate::odata::check::checked::{check_query, Checked};
use crate::odata::check::paging::Page;
use crate::odata::check::resolve::QueryError;
use crate::odata::model::sets::{EntitySet, NavigationKind};
use crate::odata::plan::ctx::{ODataRequest, Source};
use crate::odata::plan::error::ODataError;
use crate::odata::plan::lookups::{key_in_path, key_restriction, navigation};
use crate::odata::plan::page::{count, key_column, key_type, page, refuse_unreadable, seeking};
use crate::odata::plan::parts::{
    Close, Listing, Navigate, Plan, Reading, RowShape, Rows, Shape, Single,
};
use crate::odata::query::path::{KeySegment, SetPath};
use crate::odata::query::syntax::{Path, Query, Select};
use crate::odata::sql::fetch::{fetch_query, Fetch, Restriction, Through};

/// The plan of a read of `path` below `set` with `query`: the set it reads
/// (401, 404), `query` checked once for it into `checked` (400), then the
/// plan's statements. Asks no database: a wrong request is refused
/// whatever the data.
pub(crate) fn plan<'p, 'm, 'q>(
    ctx: &ODataRequest<'m>,
    set: &'m EntitySet,
    path: &SetPath,
    query: &'q Query,
    checked: &'p mut Option<Checked<'m, 'q>>,
) -> Result<Plan<'p, 'm, 'q>, ODataError> {
    let target = target(ctx, set, path)?;
    let checked = &*checked.insert(check_query(ctx.model, target, query)?);
    request(ctx, set, path, checked, query)
}

/// The set whose rows `path` (below `set`) reads: `set`, or the target of
/// its navigation. 404 for a navigation `set` lacks or a `$count` of a
/// single entity; 401 for a target the caller may not read.
fn target<'m>(
    ctx: &ODataRequest<'m>,
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
        .model
        .target_of(nav)
        .ok_or_else(|| ODataError::not_found(format!("'{name}' leads nowhere")))?;
    if !target.readable_by(&ctx.caller) {
        return Err(ODataError::not_readable(&ctx.caller));
    }
    if path.count && !nav.is_collection() {
        return Err(ODataError::not_found(format!(
            "'{name}' is a single entity; it has no $count"
        )));
    }
    Ok(target)
}

/// The plan of a read of `path`, whose set is `set` (a derived set's rows
/// are read at its source's path), `checked` being the request's query
/// checked for the set [`target`] named.
fn request<'p, 'm, 'q>(
    ctx: &ODataRequest<'m>,
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
    ctx: &ODataRequest<'m>,
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
    ctx: &ODataRequest<'m>,
    source: Source<'m>,
    checked: &'p Checked<'m, 'q>,
    query: &'q Query,
) -> Result<Listing<'p, 'm, 'q>, ODataError> {
    let slice = ctx.page.of(query);
    let context = ctx.context(&source.set.name, query, false);
    let seeking = seeking(ctx, &source, checked, query, slice)?;
    let rows = match slice.rows() {
        0 => {
            // No row is read, yet an expansion is refused as on any page.
            refuse_unreadable(ctx, checked.expand())?;
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
        origin: ctx.origin.to_owned(),
        path: source.path,
        query: query.clone(),
    };
    Ok(Listing {
        context,
        page_rows: slice.rows(),
        rows,
        close,
    })
}

/// The plan of navigation `name` of the entity `key` of `set`.
fn navigate<'p, 'm, 'q>(
    ctx: &ODataRequest<'m>,
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
    refuse_unreadable(ctx, checked.expand())?;
    // So is a `$skiptoken`: a navigation's collection is paged by `$skip`
    // (its next links carry none), whether or not the parent is there.
    if query.skiptoken.is_some() {
        return Err(QueryError::new(
            "invalid_skiptoken",
            "$skiptoken",
            "this collection's next links carry no $skiptoken; page it with $skip",
        )
        .into());
    }
    let parent_key = key_column(set)?;
    let (internal, restriction) = match &nav.kind {
        NavigationKind::ToOne { column } => (
            vec![column.clone()],
            Restriction {
                through: Some(Through {
                    table: set.table.clone(),
                    column: column.clone(),
                    key_column: parent_key,
                    key: key.value.clone(),
                }),
                ..Restriction::of(key_column(target)?, Vec::new())
            },
        ),
        NavigationKind::ToMany { remote_column } => (
            Vec::new(),
            Restriction::of(remote_column.clone(), vec![key.value.clone()]),
        ),
    };
    let keys_only = Query {
        select: Some(Select::Paths(vec![Path::single(&set.key)])),
        ..Query::default()
    };
    let parent = check_query(ctx.model, set, &keys_only)?;
    let layout = RowShape {
        properties: parent.selected().to_vec(),
        key: &set.key,
        internal: vec![key_type(target); internal.len()],
        parent: None,
        branches: &[],
        numbers: ctx.numbers,
    };
    let fetch = Fetch {
        restriction: Some(&key_restriction(set, key)?),
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
    let source = Source {
        set: target,
        restriction: Some(restriction),
        path: format!("{}({})/{}", set.name, key_in_path(&key.value), nav.name),
    };
    Ok(Plan::Navigation(Box::new(Navigate {
        parent: fetch_query(&parent, &fetch, ctx.dialect())?,
        layout,
        set,
        to_one: !nav.is_collection(),
        target: reading(ctx, source, checked, query, shape)?,
    })))
}
