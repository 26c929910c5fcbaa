//! Carrying out one request's [`Plan`]: a collection page
//! (`page`), one entity, a count, or a navigation of an
//! entity, its parent read first.

use rocket::http::Status;

mod expansion;
mod page;

use super::reply::Reply;
use super::rows::{run, scalar};
use super::rows::{write_str, EntitySink, Layout, VALUE_OPEN};
use crate::db::Readers;
use crate::metrics::{Metrics, Rows};

use crate::odata::plan::ctx::ODataRequest;
use crate::odata::plan::error::ODataError;
use crate::odata::plan::{Navigate, Plan, Reading, Single};

/// What carrying out a plan works with: the request it was made for and
/// the readers its statements run on.
pub(crate) struct Ctx<'m> {
    /// The request the plan was made for.
    pub request: ODataRequest<'m>,
    /// What the sets are read through.
    pub db: &'m Readers,
    /// Where what it reads is counted.
    pub counted: Counted,
}

/// Where a request's rows and statement times are counted.
#[derive(Clone)]
pub(crate) struct Counted {
    /// The rows of the set read.
    pub rows: Rows,
    /// The statements' times.
    pub metrics: Metrics,
    /// The engine, as the statements' label names it.
    pub engine: &'static str,
}

impl Counted {
    /// A page's statements, read in turn since `started`, wrote `rows` rows.
    pub fn page(&self, started: std::time::Instant, rows: u64) {
        self.metrics
            .statement(self.engine, "page", started.elapsed());
        self.rows.add(rows);
    }
}

/// Answers the request `plan` plans.
pub(super) async fn run_plan(ctx: &Ctx<'_>, plan: Plan<'_, '_, '_>) -> Result<Reply, ODataError> {
    match plan {
        Plan::Read(reading) => read(ctx, reading).await,
        Plan::Navigation(navigate) => match target(ctx, *navigate).await? {
            Some(reading) => read(ctx, reading).await,
            None => {
                let mut reply = Reply::json(Vec::new());
                reply.status = Status::NoContent;
                Ok(reply)
            }
        },
    }
}

async fn read(ctx: &Ctx<'_>, reading: Reading<'_, '_, '_>) -> Result<Reply, ODataError> {
    match reading {
        Reading::Collection(listing) => page::listing(ctx, *listing).await,
        Reading::Entity(single) => entity(ctx, *single).await,
        Reading::Count(sql) => {
            let n = scalar(ctx.db, sql).await?;
            let mut reply = Reply::json(n.to_string().into_bytes());
            reply.content_type = rocket::http::ContentType::Plain;
            Ok(reply)
        }
    }
}

/// The one entity `single` reads, or 404.
async fn entity(ctx: &Ctx<'_>, single: Single<'_, '_, '_>) -> Result<Reply, ODataError> {
    let Single { context, set, page } = single;
    let mut body = Vec::new();
    let (found, _, _) = page::gathered(ctx, page, &mut body).await?;
    if found == 0 {
        return Err(ODataError::not_found(format!(
            "no such entity in {}",
            set.name
        )));
    }
    let mut out = Vec::with_capacity(body.len() + 128);
    out.extend_from_slice(b"{\"@odata.context\":");
    write_str(&mut out, &context);
    out.push(b',');
    // `,"value":[{` then the entity's properties.
    let properties = body.strip_prefix(VALUE_OPEN).unwrap_or(&body);
    out.extend_from_slice(properties.get(1..).unwrap_or_default());
    Ok(Reply::json(out))
}

/// Reads the parent of `navigate` and answers its target's reading: `None`
/// for a to-one navigation whose parent's foreign key is null; 404 when the
/// parent does not exist (for this caller).
async fn target<'p, 'm, 'q>(
    ctx: &Ctx<'m>,
    navigate: Navigate<'p, 'm, 'q>,
) -> Result<Option<Reading<'p, 'm, 'q>>, ODataError> {
    let Navigate {
        parent,
        layout,
        set,
        to_one,
        target,
    } = navigate;
    let sink = EntitySink::new(Layout::of(&layout));
    let (sink, _) = run(ctx.db, parent, 1, sink).await?;
    let Some(parent) = sink.entities.into_iter().next() else {
        return Err(ODataError::not_found(format!(
            "no such entity in {}",
            set.name
        )));
    };
    let leads_nowhere = to_one && parent.internal.first().is_none_or(Option::is_none);
    Ok((!leads_nowhere).then_some(target))
}
