//! `$expand` carried out as its [`Follow`]s plan it: each navigation is
//! loaded for a whole page of parents with one statement (`IN` over the
//! parents' keys), nested levels likewise, and the results are appended to
//! the parents' JSON objects. A to-many navigation is paged per parent
//! (`$top`/`$skip` inside the expand cut the request's page as the top
//! level's options do), with `nav@odata.count` and `nav@odata.nextLink`
//! where asked for and needed.

use std::collections::{HashMap, HashSet};

use futures::future::BoxFuture;
use futures::FutureExt;

use super::Ctx;
use crate::odata::plan::error::ODataError;
use crate::odata::plan::{key_in_path, Follow};
use crate::odata::query::syntax::Literal;
use crate::odata::service::rows::{run, write_str, CountSink, Entity, EntitySink, Layout};
use crate::odata::sql::fetch::Restriction;

/// Loads every follow-up for `parents` and appends it to their JSON.
pub fn attach<'a, 'p: 'a, 'm: 'a, 'q: 'a>(
    ctx: &'a Ctx<'m>,
    follows: Vec<Follow<'p, 'm, 'q>>,
    parents: &'a mut [Entity],
) -> BoxFuture<'a, Result<(), ODataError>> {
    async move {
        if parents.is_empty() {
            return Ok(());
        }
        let mut fk = 0;
        for follow in follows {
            if follow.per_parent.is_some() {
                to_many(ctx, follow, parents).await?;
            } else {
                to_one(ctx, follow, fk, parents).await?;
                fk += 1;
            }
        }
        Ok(())
    }
    .boxed()
}

/// Loads the targets `restriction` admits, their own expansions attached.
async fn load<'m>(
    ctx: &Ctx<'m>,
    follow: Follow<'_, 'm, '_>,
    restriction: &Restriction,
) -> Result<Vec<Entity>, ODataError> {
    let (sql, limit) = follow.statement(&ctx.request, restriction)?;
    let sink = EntitySink::new(Layout::of(&follow.layout));
    let (sink, _) = run(ctx.db, sql, limit, sink).await?;
    let mut children = sink.entities;
    attach(ctx, follow.follows, &mut children).await?;
    Ok(children)
}

async fn to_one(
    ctx: &Ctx<'_>,
    follow: Follow<'_, '_, '_>,
    fk: usize,
    parents: &mut [Entity],
) -> Result<(), ODataError> {
    let mut seen = HashSet::new();
    let values: Vec<Literal> = parents
        .iter()
        .filter_map(|p| p.internal.get(fk).cloned().flatten())
        .filter(|v| seen.insert(v.to_string()))
        .collect();
    let name = &follow.expansion.nav().name;
    let restriction = follow.restriction(values);
    let targets = load(ctx, follow, &restriction).await?;
    let by_key: HashMap<String, Entity> = targets
        .into_iter()
        .map(|t| (t.key.to_string(), t))
        .collect();
    for parent in parents.iter_mut() {
        parent.json.push(b',');
        write_str(&mut parent.json, name);
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
    follow: Follow<'_, '_, '_>,
    parents: &mut [Entity],
) -> Result<(), ODataError> {
    let Some(per) = &follow.per_parent else {
        return Ok(());
    };
    let (page, key_type) = (per.page, per.key_type);
    let (nav, options, set) = (
        follow.expansion.nav(),
        follow.expansion.options(),
        follow.parents,
    );
    let mut seen = HashSet::new();
    let restriction = follow.restriction(
        parents
            .iter()
            .map(|p| p.key.clone())
            .filter(|k| seen.insert(k.to_string()))
            .collect(),
    );
    let counting = follow.counting(&ctx.request, &restriction)?;
    let children = load(ctx, follow, &restriction).await?;
    let mut groups: HashMap<String, Vec<Entity>> = HashMap::new();
    for child in children {
        let parent = child.parent.clone().unwrap_or_default();
        groups.entry(parent).or_default().push(child);
    }
    let counts = match counting {
        Some(sql) => counts(ctx, sql, key_type).await?,
        None => HashMap::new(),
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
        let path = format!("{}({})/{}", set.name, key_in_path(&parent.key), nav.name);
        let delivered = group.len() as u64;
        if let Some(link) =
            page.next_link(ctx.request.origin, &path, options, delivered, more, None)
        {
            parent.json.push(b',');
            write_str(&mut parent.json, &format!("{}@odata.nextLink", nav.name));
            parent.json.push(b':');
            write_str(&mut parent.json, &link);
        }
    }
    Ok(())
}

/// Each parent's count of targets, as `sql` reads them.
async fn counts(
    ctx: &Ctx<'_>,
    sql: crate::odata::sql::select::Sql,
    key_type: crate::odata::model::sets::EdmType,
) -> Result<HashMap<String, i64>, ODataError> {
    let sink = CountSink {
        key_type: Some(key_type),
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
