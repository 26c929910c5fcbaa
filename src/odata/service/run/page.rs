//! A collection page carried out as its [`plan`](super::plan) says: its
//! body streamed to the client as its rows are read, so that the server's
//! memory for a page does not grow with its size. A page with `$expand` is
//! gathered whole first: its expansions are loaded for all its entities at
//! once.

use std::pin::Pin;
use std::time::Instant;

use futures::future::{ready, select, Either};
use futures::{Stream, StreamExt};

use super::expansion::attach;
use super::{Counted, Ctx};
use crate::db::Readers;
use crate::odata::plan::error::ODataError;
use crate::odata::plan::{Close, Listing, PagePlan, Rows};
use crate::odata::service::reply::{Chunk, Reply, Rest};
use crate::odata::service::rows::{
    run_page, scalar, write_str, BodySink, EntitySink, Layout, VALUE_OPEN,
};

/// Answers the collection `listing` plans.
pub(super) async fn listing(
    ctx: &Ctx<'_>,
    listing: Listing<'_, '_, '_>,
) -> Result<Reply, ODataError> {
    let Listing {
        context,
        page_rows,
        rows,
        close,
    } = listing;
    let mut head = Vec::with_capacity(256 + 128 * page_rows.min(1000) as usize);
    head.extend_from_slice(b"{\"@odata.context\":");
    write_str(&mut head, &context);
    match rows {
        Rows::None { count } => {
            if let Some(sql) = count {
                let n = scalar(ctx.db, sql).await?;
                head.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
            }
            head.extend_from_slice(VALUE_OPEN);
            write_close(&mut head, &close, 0, false, None);
            Ok(Reply::json(head))
        }
        Rows::Page(page) if page.follows.is_empty() => {
            stream(ctx.db.clone(), ctx.counted.clone(), head, *page, close).await
        }
        Rows::Page(page) => {
            let (delivered, more, token) = gathered(ctx, *page, &mut head).await?;
            write_close(&mut head, &close, delivered, more, token);
            Ok(Reply::json(head))
        }
    }
}

/// Reads a page whole: writes the count (when asked) and its entities,
/// their expansions loaded, as `,"@odata.count":n,"value":[…` onto `body`;
/// answers how many entities were written, whether more rows remain, and
/// the `$skiptoken` of the row after the page when it seeks.
pub(super) async fn gathered(
    ctx: &Ctx<'_>,
    page: PagePlan<'_, '_, '_>,
    body: &mut Vec<u8>,
) -> Result<(u64, bool, Option<String>), ODataError> {
    let PagePlan {
        read,
        layout,
        limit,
        seal,
        follows,
    } = page;
    let token = |last| seal.as_ref().and_then(|s| s.token(last));
    if follows.is_empty() {
        let sink = BodySink {
            layout: Layout::of(&layout),
            body: std::mem::take(body),
            delivered: 0,
            opened: false,
            out: None,
        };
        let started = Instant::now();
        let (mut sink, more, last) = run_page(ctx.db, read, limit, sink).await?;
        ctx.counted.page(started, sink.delivered);
        sink.open();
        *body = sink.body;
        return Ok((sink.delivered, more, token(last)));
    }
    let sink = EntitySink::new(Layout::of(&layout));
    let started = Instant::now();
    let (sink, more, last) = run_page(ctx.db, read, limit, sink).await?;
    ctx.counted.page(started, sink.entities.len() as u64);
    if let Some(n) = sink.count {
        body.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
    }
    body.extend_from_slice(VALUE_OPEN);
    let mut entities = sink.entities;
    attach(ctx, follows, &mut entities).await?;
    for (i, entity) in entities.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&entity.json);
        body.push(b'}');
    }
    Ok((entities.len() as u64, more, token(last)))
}

/// Pieces of a body the reader may have ready before the client takes
/// them: with the piece being written, at most three pieces of a page are
/// in memory at once.
const PIECES_AHEAD: usize = 2;

/// Answers the page `plan` reads, its body starting with `head`, streamed:
/// the reply waits for the first piece of the body, so that a statement
/// that fails at once is answered with its error; a page that is read
/// before then goes out whole. The rest follows as the rows are read; a
/// client that goes away stops the read.
async fn stream(
    db: Readers,
    counted: Counted,
    head: Vec<u8>,
    plan: PagePlan<'_, '_, '_>,
    close: Close,
) -> Result<Reply, ODataError> {
    let (to, from) = flume::bounded::<Chunk>(PIECES_AHEAD);
    let PagePlan {
        read,
        layout,
        limit,
        seal,
        ..
    } = plan;
    let sink = BodySink {
        layout: Layout::of(&layout),
        body: head,
        delivered: 0,
        opened: false,
        out: Some(to.clone()),
    };
    let mut produce = Box::pin(async move {
        let started = Instant::now();
        let end = run_page(&db, read, limit, sink)
            .await
            .map(|(mut sink, more, last)| {
                counted.page(started, sink.delivered);
                sink.open();
                let token = seal.and_then(|s| s.token(last));
                write_close(&mut sink.body, &close, sink.delivered, more, token);
                sink.body
            });
        let _ = to.send_async(end).await;
    });
    let first = match select(from.recv_async(), produce.as_mut()).await {
        Either::Left((first, _)) => first,
        Either::Right(((), _)) => {
            // Read before the first piece went out: one body, or its error.
            let mut pieces = from.drain();
            let mut body = pieces.next().unwrap_or(Ok(Vec::new()))?;
            for piece in pieces {
                body.extend_from_slice(&piece?);
            }
            return Ok(Reply::json(body));
        }
    };
    let first = first.map_err(|_| ODataError::internal(&"a page's reader ended unanswered"))??;
    let rest: Pin<Box<dyn Stream<Item = Chunk> + Send>> = Box::pin(futures::stream::select(
        from.into_stream(),
        futures::stream::once(produce).filter_map(|()| ready(None)),
    ));
    let mut reply = Reply::json(first);
    reply.rest = Some(Rest(rest));
    Ok(reply)
}

/// Writes what closes a collection body onto `body`: `]`, the next link
/// `close` makes after `delivered` entities when `more` rows remain, and
/// `}`.
pub(crate) fn write_close(
    body: &mut Vec<u8>,
    close: &Close,
    delivered: u64,
    more: bool,
    token: Option<String>,
) {
    body.push(b']');
    if let Some(link) = close.next_link(delivered, more, token) {
        body.extend_from_slice(b",\"@odata.nextLink\":");
        write_str(body, &link);
    }
    body.push(b'}');
}
