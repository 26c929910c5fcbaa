//! `$expand`: each navigation is loaded for a whole page of parents with one
//! statement (`IN` over the parents' keys), nested levels likewise, and the
//! results are appended to the parents' JSON objects. A to-many navigation is
//! paged per parent (`$top`/`$skip` inside the expand cut the request's
//! [`Page`] as the top level's options do), with `nav@odata.count` and
//! `nav@odata.nextLink` where asked for and needed. The expansions come
//! checked with the request's query: nothing here looks a name up.

use std::collections::{HashMap, HashSet};

use futures::future::BoxFuture;
use futures::FutureExt;

use super::ctx::Ctx;
use super::reply::ODataError;
use super::rows::run;
use super::sinks::{CountSink, Entity, EntitySink, Layout};
use super::values::write_str;
use crate::odata::check::Expansion;
use crate::odata::fetch::{count_per_value, fetch_query, Fetch, Restriction};
use crate::odata::model::{EdmType, EntitySet, NavigationKind};
use crate::odata::paging::Page;
use crate::odata::query::Literal;

/// Refuses `expansions` into a set the caller may not read; answers the
/// internal columns the parents' fetch must read for them (the to-one
/// foreign keys, in order).
pub fn admit(ctx: &Ctx<'_>, expansions: &[Expansion<'_, '_>]) -> Result<Vec<String>, ODataError> {
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

/// The types of `internal` columns: each to-one foreign key has its
/// target's key type.
pub fn internal_types(expansions: &[Expansion<'_, '_>]) -> Vec<EdmType> {
    expansions
        .iter()
        .filter(|e| !e.nav().is_collection())
        .map(|e| key_type(e.target()))
        .collect()
}

/// The type of `set`'s key.
pub fn key_type(set: &EntitySet) -> EdmType {
    set.key_property().map_or(EdmType::Int64, |k| k.edm_type)
}

/// Loads every expansion for `parents` (entities of `set`) and appends it
/// to their JSON.
pub fn attach<'a, 'm: 'a, 'q: 'a>(
    ctx: &'a Ctx<'m>,
    set: &'m EntitySet,
    expansions: &'a [Expansion<'m, 'q>],
    parents: &'a mut [Entity],
) -> BoxFuture<'a, Result<(), ODataError>> {
    async move {
        if parents.is_empty() {
            return Ok(());
        }
        let mut fk = 0;
        for e in expansions {
            if e.nav().is_collection() {
                to_many(ctx, set, e, parents).await?;
            } else {
                to_one(ctx, e, fk, parents).await?;
                fk += 1;
            }
        }
        Ok(())
    }
    .boxed()
}

/// Loads the targets of `e` and the expansions nested under it: `page` of
/// them in all, or (given the parents' key type) `page` of each parent's.
async fn load<'m, 'q>(
    ctx: &Ctx<'m>,
    e: &Expansion<'m, 'q>,
    restriction: &Restriction,
    parent_type: Option<EdmType>,
    page: Page,
) -> Result<(Vec<Entity>, bool), ODataError> {
    let per_value = parent_type.is_some();
    let checked = e.checked();
    let nested = checked.expand();
    let internal = admit(ctx, nested)?;
    let fetch = Fetch {
        restriction: Some(restriction),
        per_value,
        internal,
        page,
        scopes: Some(&ctx.scopes),
        count: false,
    };
    let sql = fetch_query(checked, &fetch, ctx.dialect())?;
    let target = e.target();
    let layout = Layout::new(
        checked.selected(),
        &target.key,
        internal_types(nested),
        parent_type,
        ctx.numbers,
    );
    let sink = EntitySink::new(layout);
    let limit = if per_value { u64::MAX } else { page.rows() };
    let (sink, more) = run(ctx.db, sql, limit, sink).await?;
    let mut children = sink.entities;
    attach(ctx, target, nested, &mut children).await?;
    Ok((children, more))
}

async fn to_one(
    ctx: &Ctx<'_>,
    e: &Expansion<'_, '_>,
    fk: usize,
    parents: &mut [Entity],
) -> Result<(), ODataError> {
    let mut seen = HashSet::new();
    let values: Vec<Literal> = parents
        .iter()
        .filter_map(|p| p.internal.get(fk).cloned().flatten())
        .filter(|v| seen.insert(v.to_string()))
        .collect();
    let restriction = Restriction {
        column: ctx.key_column(e.target())?,
        values,
    };
    // One target per distinct key, whatever `$top` or the page size say.
    let page = Page::first(restriction.values.len() as u64);
    let (targets, _) = load(ctx, e, &restriction, None, page).await?;
    let by_key: HashMap<String, Entity> = targets
        .into_iter()
        .map(|t| (t.key.to_string(), t))
        .collect();
    for parent in parents.iter_mut() {
        parent.json.push(b',');
        write_str(&mut parent.json, &e.nav().name);
        parent.json.push(b':');
        let target = parent.internal.get(fk).cloned().flatten();
        match target.and_then(|k| by_key.get(&k.to_string())) {
            Some(t) => {
                parent.json.extend_from_slice(&t.json);
                parent.json.push(b'}');
            }
            None => parent.json.extend_from_slice(b"null"),
        }
    }
    Ok(())
}

async fn to_many(
    ctx: &Ctx<'_>,
    set: &EntitySet,
    e: &Expansion<'_, '_>,
    parents: &mut [Entity],
) -> Result<(), ODataError> {
    let (nav, options) = (e.nav(), e.options());
    let NavigationKind::ToMany { remote_column } = &nav.kind else {
        return Ok(());
    };
    let mut seen = HashSet::new();
    let restriction = Restriction {
        column: remote_column.clone(),
        values: parents
            .iter()
            .map(|p| p.key.clone())
            .filter(|k| seen.insert(k.to_string()))
            .collect(),
    };
    let page = ctx.page.of(options);
    let parent_type = Some(key_type(set));
    let (children, _) = load(ctx, e, &restriction, parent_type, page).await?;
    let mut groups: HashMap<String, Vec<Entity>> = HashMap::new();
    for child in children {
        let parent = child.parent.clone().unwrap_or_default();
        groups.entry(parent).or_default().push(child);
    }
    let counts = if options.count {
        counts(ctx, set, e, &restriction).await?
    } else {
        HashMap::new()
    };
    for parent in parents.iter_mut() {
        let key = parent.key.to_string();
        let mut group = groups.remove(&key).unwrap_or_default();
        let more = page.cut(&mut group);
        if options.count {
            let n = counts.get(&key).copied().unwrap_or(0);
            parent.json.push(b',');
            write_str(&mut parent.json, &format!("{}@odata.count", nav.name));
            parent.json.extend_from_slice(format!(":{n}").as_bytes());
        }
        parent.json.push(b',');
        write_str(&mut parent.json, &nav.name);
        parent.json.extend_from_slice(b":[");
        for (i, child) in group.iter().enumerate() {
            if i > 0 {
                parent.json.push(b',');
            }
            parent.json.extend_from_slice(&child.json);
            parent.json.push(b'}');
        }
        parent.json.push(b']');
        let path = format!(
            "{}({})/{}",
            set.name,
            ctx.key_in_path(&parent.key),
            nav.name
        );
        let delivered = group.len() as u64;
        if let Some(link) =
            page.next_link(&ctx.service.origin, &path, options, delivered, more, None)
        {
            parent.json.push(b',');
            write_str(&mut parent.json, &format!("{}@odata.nextLink", nav.name));
            parent.json.push(b':');
            write_str(&mut parent.json, &link);
        }
    }
    Ok(())
}

async fn counts(
    ctx: &Ctx<'_>,
    set: &EntitySet,
    e: &Expansion<'_, '_>,
    restriction: &Restriction,
) -> Result<HashMap<String, i64>, ODataError> {
    let sql = count_per_value(e.checked(), restriction, Some(&ctx.scopes), ctx.dialect())?;
    let parent_type = key_type(set);
    let sink = CountSink {
        key_type: Some(parent_type),
        counts: Vec::new(),
    };
    let (sink, _) = run(ctx.db, sql, u64::MAX, sink).await?;
    let counts = sink
        .counts
        .into_iter()
        .filter_map(|(key, n)| Some((key?.to_string(), n)))
        .collect();
    Ok(counts)
}
