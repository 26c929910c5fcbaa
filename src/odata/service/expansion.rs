//! `$expand`: each navigation is loaded for a whole page of parents with one
//! statement (`IN` over the parents' keys), nested levels likewise, and the
//! results are appended to the parents' JSON objects. A to-many navigation is
//! paged per parent (`$top`/`$skip` inside the expand, cut by the page
//! size), with `nav@odata.count` and `nav@odata.nextLink` where asked for
//! and needed.

use std::collections::{HashMap, HashSet};

use futures::future::BoxFuture;
use futures::FutureExt;

use super::answer::Ctx;
use super::reply::ODataError;
use super::rows::{run, CountSink, Entity, EntitySink, Layout};
use super::scoped;
use super::values::write_str;
use crate::odata::fetch::{count_per_value, fetch_query, Fetch, Restriction};
use crate::odata::model::{EdmType, EntitySet, Navigation, NavigationKind};
use crate::odata::paging::next_link;
use crate::odata::query::{ExpandItem, Literal, Query};
use crate::odata::sql::{selected_properties, Page};

/// One `$expand` item resolved against the model.
pub struct Expansion<'m, 'q> {
    nav: &'m Navigation,
    target: &'m EntitySet,
    options: &'q Query,
}

/// The expansions `items` name on `set`, and the internal columns the
/// parents' fetch must read for them (the to-one foreign keys, in order).
pub fn plan<'m, 'q>(
    ctx: &Ctx<'m>,
    set: &'m EntitySet,
    items: &'q [ExpandItem],
) -> Result<(Vec<Expansion<'m, 'q>>, Vec<String>), ODataError> {
    let mut expansions = Vec::new();
    let mut internal = Vec::new();
    for item in items {
        let name = item.path.segments().join("/");
        let nav = set.find_navigation(&name).ok_or_else(|| {
            ODataError::from(crate::odata::QueryError::new(
                "unknown_property",
                "$expand",
                format!("{} has no navigation '{name}'", set.name),
            ))
        })?;
        let target = ctx
            .service
            .model
            .target_of(nav)
            .ok_or_else(|| ODataError::internal(&format!("{name} leads nowhere")))?;
        if !target.public && ctx.caller.user_id.is_none() {
            return Err(ODataError::unauthorized());
        }
        if let NavigationKind::ToOne { column } = &nav.kind {
            internal.push(column.clone());
        }
        expansions.push(Expansion {
            nav,
            target,
            options: &item.options,
        });
    }
    Ok((expansions, internal))
}

/// The types of `internal` columns: each to-one foreign key has its
/// target's key type.
pub fn internal_types(expansions: &[Expansion<'_, '_>]) -> Vec<EdmType> {
    expansions
        .iter()
        .filter(|e| !e.nav.is_collection())
        .map(|e| key_type(e.target))
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
            if e.nav.is_collection() {
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

/// Loads the targets of `e` and the expansions nested under it.
async fn load<'m, 'q>(
    ctx: &Ctx<'m>,
    e: &Expansion<'m, 'q>,
    restriction: &Restriction,
    parent_type: Option<EdmType>,
    page: Page,
) -> Result<(Vec<Entity>, bool), ODataError> {
    let per_value = parent_type.is_some();
    let (nested, internal) = plan(ctx, e.target, &e.options.expand)?;
    let options = scoped(e.target, &ctx.caller, e.options);
    let fetch = Fetch {
        restriction: Some(restriction),
        per_value,
        internal,
        page,
        scopes: Some(&ctx.scopes),
        count: false,
    };
    let sql = fetch_query(
        &ctx.service.model,
        e.target,
        &options,
        &fetch,
        ctx.dialect(),
    )?;
    let layout = Layout::new(
        selected_properties(e.target, e.options.select.as_ref()),
        &e.target.key,
        internal_types(&nested),
        parent_type,
    );
    let sink = EntitySink::new(layout);
    let limit = if per_value { u64::MAX } else { page.size };
    let (sink, more) = run(ctx.db, sql, limit, sink).await?;
    let mut children = sink.entities;
    attach(ctx, e.target, &nested, &mut children).await?;
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
        column: ctx.key_column(e.target)?,
        values,
    };
    let size = restriction.values.len() as u64;
    let mut single = e.options.clone();
    (single.top, single.skip, single.count) = (None, None, false);
    let single = Expansion {
        options: &single,
        ..*e
    };
    let (targets, _) = load(ctx, &single, &restriction, None, Page { offset: 0, size }).await?;
    let by_key: HashMap<String, Entity> = targets
        .into_iter()
        .map(|t| (t.key.to_string(), t))
        .collect();
    for parent in parents.iter_mut() {
        parent.json.push(b',');
        write_str(&mut parent.json, &e.nav.name);
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
    let NavigationKind::ToMany { remote_column } = &e.nav.kind else {
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
    let size = e
        .options
        .top
        .map_or(ctx.page_size, |t| t.min(ctx.page_size));
    let page = Page {
        offset: e.options.skip.unwrap_or(0),
        size,
    };
    let parent_type = Some(key_type(set));
    let (children, _) = load(ctx, e, &restriction, parent_type, page).await?;
    let mut groups: HashMap<String, Vec<Entity>> = HashMap::new();
    for child in children {
        let parent = child.parent.clone().unwrap_or_default();
        groups.entry(parent).or_default().push(child);
    }
    let counts = if e.options.count {
        counts(ctx, set, e, &restriction).await?
    } else {
        HashMap::new()
    };
    for parent in parents.iter_mut() {
        let key = parent.key.to_string();
        let mut group = groups.remove(&key).unwrap_or_default();
        let more = group.len() as u64 > size;
        group.truncate(usize::try_from(size).unwrap_or(usize::MAX));
        if e.options.count {
            let n = counts.get(&key).copied().unwrap_or(0);
            parent.json.push(b',');
            write_str(&mut parent.json, &format!("{}@odata.count", e.nav.name));
            parent.json.extend_from_slice(format!(":{n}").as_bytes());
        }
        parent.json.push(b',');
        write_str(&mut parent.json, &e.nav.name);
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
            e.nav.name
        );
        let delivered = group.len() as u64;
        if let Some(link) = next_link(&ctx.service.origin, &path, e.options, delivered, more) {
            parent.json.push(b',');
            write_str(&mut parent.json, &format!("{}@odata.nextLink", e.nav.name));
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
    let options = scoped(e.target, &ctx.caller, e.options);
    let sql = count_per_value(
        &ctx.service.model,
        e.target,
        &options,
        restriction,
        Some(&ctx.scopes),
        ctx.dialect(),
    )?;
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
