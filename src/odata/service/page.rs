//! A collection page: every statement it runs planned before the first
//! runs ([`Plan`]), read from a position when its next links seek, and its
//! body streamed to the client as its rows are read, so that the server's
//! memory for a page does not grow with its size. A page with `$expand` is
//! gathered whole first: its expansions are loaded for all its entities at
//! once.

use std::pin::Pin;

use futures::future::{ready, select, Either};
use futures::{Stream, StreamExt};

use super::ctx::{Ctx, Source};
use super::expansion::{admit, attach, internal_types};
use super::reply::{Chunk, ODataError, Reply, Rest};
use super::rows::{run_page, scalar, InlineCount, OrderValues, PageRead};
use super::sinks::{BodySink, EntitySink, Layout, VALUE_OPEN};
use super::values::write_str;
use crate::db::Readers;
use crate::odata::check::Checked;
use crate::odata::fetch::{fetch_query, order_columns, order_types, seek_statements, Fetch};
use crate::odata::model::EdmType;
use crate::odata::paging::Page;
use crate::odata::query::{Literal, Query};
use crate::odata::resolve::QueryError;
use crate::odata::seek::Position;
use crate::odata::skiptoken::SkipTokens;

/// How one page is read: its slice, whether it carries the count, and
/// whether it is read by position.
pub(super) struct Read<'s> {
    pub page: Page,
    pub count: bool,
    pub seeking: Option<&'s Seeking>,
}

/// A collection page whose next links seek ([`Ctx::seeking`]).
pub(super) struct Seeking {
    /// Where the page starts; `None` past `$skip` rows (a link without a
    /// `$skiptoken`), still selecting the order's values for the next link.
    position: Option<Position>,
    /// The types of the order's terms.
    types: Vec<EdmType>,
    /// What the page's tokens are bound to.
    binding: String,
}

/// Every statement of one page and how its rows are written, made before
/// the first statement runs.
pub(super) struct Plan {
    /// The statements, and the count and order values their rows carry.
    read: PageRead,
    /// How a row becomes JSON.
    layout: Layout,
    /// The rows the page holds at most.
    limit: u64,
    /// How the next link's `$skiptoken` is made, when the page seeks.
    seal: Option<Seal>,
}

/// What a page's `$skiptoken` is made with.
struct Seal {
    tokens: SkipTokens,
    binding: String,
    types: Vec<EdmType>,
}

impl Seal {
    /// The token after the row with `last` order values, if the page
    /// filled and they fit a token.
    fn token(&self, last: Option<Vec<Literal>>) -> Option<String> {
        self.tokens.seal(&self.binding, &last?, &self.types)
    }
}

/// What closes a collection body: its next link, when another page follows.
struct Close {
    page: Page,
    origin: String,
    path: String,
    query: Query,
}

impl Close {
    /// Writes `]`, the next link after `delivered` entities when `more`
    /// rows remain, and `}`.
    fn write(&self, body: &mut Vec<u8>, delivered: u64, more: bool, token: Option<String>) {
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

impl<'m> Ctx<'m> {
    /// A page of `source` as the collection response.
    pub async fn collection(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        query: &Query,
    ) -> Result<Reply, ODataError> {
        let set = source.set;
        let page = self.page.of(query);
        let mut body = Vec::with_capacity(256 + 128 * page.rows().min(1000) as usize);
        body.extend_from_slice(b"{\"@odata.context\":");
        write_str(&mut body, &self.context(&set.name, query, false));
        let seeking = self.seeking(source, checked, query, page)?;
        let close = Close {
            page,
            origin: self.service.origin.clone(),
            path: source.path.clone(),
            query: query.clone(),
        };
        if page.rows() == 0 {
            if query.count {
                let n = scalar(self.db, self.count_sql(source, checked)?).await?;
                body.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
            }
            body.extend_from_slice(VALUE_OPEN);
            close.write(&mut body, 0, false, None);
            return Ok(Reply::json(body));
        }
        let read = Read {
            page,
            count: query.count,
            seeking: seeking.as_ref(),
        };
        if checked.expand().is_empty() {
            let plan = self.plan(source, checked, read)?;
            return stream(self.db.clone(), body, plan, close).await;
        }
        let (delivered, more, token) = self.rows(source, checked, read, &mut body).await?;
        close.write(&mut body, delivered, more, token);
        Ok(Reply::json(body))
    }

    /// How a collection page of `source` under `query` is read by position:
    /// `None` for a collection whose next links carry no `$skiptoken` (a
    /// navigation's, or one ordered by a value a token does not carry).
    /// 400 for a `$skiptoken` such a collection was sent, or one that does
    /// not open.
    fn seeking(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        query: &Query,
        page: Page,
    ) -> Result<Option<Seeking>, ODataError> {
        // A page that holds all that `$top` asks for has no next link.
        if query.skiptoken.is_none() && query.top.is_some_and(|top| top <= page.rows()) {
            return Ok(None);
        }
        // A navigation's collection never seeks: its order is not asked
        // for; nor does a derived set's, whose rows no index holds.
        let types = match source.restriction {
            None if source.set.derived.is_none() => Some(order_types(checked, self.dialect())?)
                .filter(|types| types.iter().all(|t| SkipTokens::seekable(*t))),
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
                self.service.tokens.open(&binding, token, &types)?,
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

    /// Every statement of a page of `source` (its rows, the count when
    /// asked, from its position when it seeks), with the layout of its
    /// columns.
    fn plan(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        read: Read<'_>,
    ) -> Result<Plan, ODataError> {
        let Read {
            page,
            count,
            seeking,
        } = read;
        let expansions = checked.expand();
        let internal = admit(self, expansions)?;
        let selected = checked.selected();
        let order = match seeking {
            Some(s) => Some(OrderValues {
                columns: order_columns(checked, internal.len(), self.dialect())?,
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
        let sought = seeking.is_some_and(|s| matches!(s.position, Some(Position::After(_))));
        // The page statement carries the count; alone it is needed only
        // for an empty page past the first row.
        let count = match count {
            true => Some(InlineCount {
                column: read_columns,
                alone: match page.offset() {
                    0 if !sought => None,
                    _ => Some(self.count_sql(source, checked)?),
                },
            }),
            false => None,
        };
        let mut layout = Layout::new(
            selected,
            &source.set.key,
            internal_types(expansions),
            None,
            self.numbers,
        );
        if let Some(derived) = &source.set.derived {
            layout = layout.branching(selected, &derived.branches, self.numbers);
        }
        let fetch = Fetch {
            restriction: source.restriction.as_ref(),
            per_value: false,
            internal,
            page,
            scopes: Some(&self.scopes),
            count: count.is_some(),
        };
        let statements = match seeking {
            Some(seeking) => {
                seek_statements(checked, &fetch, seeking.position.as_ref(), self.dialect())?
            }
            None => vec![fetch_query(checked, &fetch, self.dialect())?],
        };
        let seal = seeking.map(|s| Seal {
            tokens: self.service.tokens.clone(),
            binding: s.binding.clone(),
            types: s.types.clone(),
        });
        Ok(Plan {
            read: PageRead {
                statements,
                count,
                order,
            },
            layout,
            limit: page.rows(),
            seal,
        })
    }

    /// Reads a page whole: writes the count (when asked) and its entities,
    /// their expansions loaded, as `,"@odata.count":n,"value":[…` onto
    /// `body`; answers how many entities were written, whether more rows
    /// remain, and the `$skiptoken` of the row after the page when it seeks.
    pub(super) async fn rows(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        read: Read<'_>,
        body: &mut Vec<u8>,
    ) -> Result<(u64, bool, Option<String>), ODataError> {
        let Plan {
            read,
            layout,
            limit,
            seal,
        } = self.plan(source, checked, read)?;
        let token = |last| seal.as_ref().and_then(|s| s.token(last));
        let expansions = checked.expand();
        if expansions.is_empty() {
            let sink = BodySink {
                layout,
                body: std::mem::take(body),
                delivered: 0,
                opened: false,
                out: None,
            };
            let (mut sink, more, last) = run_page(self.db, read, limit, sink).await?;
            sink.open();
            *body = sink.body;
            return Ok((sink.delivered, more, token(last)));
        }
        let sink = EntitySink::new(layout);
        let (sink, more, last) = run_page(self.db, read, limit, sink).await?;
        if let Some(n) = sink.count {
            body.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
        }
        body.extend_from_slice(VALUE_OPEN);
        let mut entities = sink.entities;
        attach(self, source.set, expansions, &mut entities).await?;
        for (i, entity) in entities.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(&entity.json);
            body.push(b'}');
        }
        Ok((entities.len() as u64, more, token(last)))
    }
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
async fn stream(db: Readers, head: Vec<u8>, plan: Plan, close: Close) -> Result<Reply, ODataError> {
    let (to, from) = flume::bounded::<Chunk>(PIECES_AHEAD);
    let Plan {
        read,
        layout,
        limit,
        seal,
    } = plan;
    let sink = BodySink {
        layout,
        body: head,
        delivered: 0,
        opened: false,
        out: Some(to.clone()),
    };
    let mut produce = Box::pin(async move {
        let end = run_page(&db, read, limit, sink)
            .await
            .map(|(mut sink, more, last)| {
                sink.open();
                let token = seal.and_then(|s| s.token(last));
                close.write(&mut sink.body, sink.delivered, more, token);
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
