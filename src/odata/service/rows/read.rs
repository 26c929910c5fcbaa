//! Running a page's statements and handing their rows, as they arrive, to
//! a [`Sink`] that writes them out at once: memory follows a piece of the
//! page, never the table.
//!
//! The rows come through the service's readers (`db::Reads::each`): on
//! SQLite a read thread with a plain connection, straight from SQLite's
//! buffers; on PostgreSQL and MySQL the engine's own client. Each engine's
//! row is read through [`Cells`], so the JSON writing is the same code.

use std::future::Future;
use std::pin::Pin;

use super::cells::{Cells, EngineCells};
use super::sinks::{CountSink, Sink};
use super::values::{order_literal, Cell};
use crate::db::{EngineRow, Readers, RowReader};
use crate::odata::plan::error::ODataError;
use crate::odata::plan::{InlineCount, OrderValues, PageRead};
use crate::odata::{Literal, Sql};

/// Runs `sql`, handing each row to `sink`; stops reading after `limit` rows
/// and answers the sink and whether another row followed.
pub async fn run<S: Sink>(
    db: &Readers,
    sql: Sql,
    limit: u64,
    sink: S,
) -> Result<(S, bool), ODataError> {
    let read = PageRead {
        statements: vec![sql],
        count: None,
        order: None,
    };
    let (sink, more, _) = run_page(db, read, limit, sink).await?;
    Ok((sink, more))
}

/// Runs the statements of `read` in turn, handing each row to `sink`, until
/// `limit` rows and the probe row beyond them came; answers the sink,
/// whether the probe row came, and the order values of the page's last row
/// when the page is full and `read` carries them.
pub async fn run_page<S: Sink>(
    db: &Readers,
    page: PageRead,
    limit: u64,
    sink: S,
) -> Result<(S, bool, Option<Vec<Literal>>), ODataError> {
    let PageRead {
        statements,
        count,
        order,
    } = page;
    let reads = db
        .reads()
        .ok_or_else(|| ODataError::internal(&"the database has no readers"))?;
    let feed = Feed {
        sink,
        limit,
        seen: 0,
        count: count.as_ref().map(|c| c.column),
        more: false,
        order,
        last: None,
    };
    let mut feed = reads.each(parts(statements), Reader::new(feed)).await?.feed;
    if let Some(InlineCount { alone, .. }) = count.filter(|_| feed.seen == 0) {
        let n = match alone {
            Some(alone) => {
                let counted = reads.each(parts(vec![alone]), Reader::new(Feed::of(counter())));
                counted.await?.feed.sink.total()
            }
            None => 0,
        };
        feed.sink.count(n);
    }
    Ok(feed.done())
}

/// Statements as the database's bulk reads take them.
fn parts(statements: Vec<Sql>) -> Vec<(String, Vec<crate::db::Bind>)> {
    statements.into_iter().map(|s| (s.text, s.binds)).collect()
}

/// A sink being fed the rows of a page's statements, up to a limit.
struct Feed<S> {
    sink: S,
    limit: u64,
    seen: u64,
    /// The column carrying the collection's count, read off the first row.
    count: Option<usize>,
    /// Whether a row beyond the limit came.
    more: bool,
    /// The columns carrying the order's values.
    order: Option<OrderValues>,
    /// The order's values of the row at the limit, once it came.
    last: Option<Vec<Literal>>,
}

impl<S: Sink> Feed<S> {
    /// A feed taking every row up to the first.
    fn of(sink: S) -> Feed<S> {
        Feed {
            sink,
            limit: 1,
            seen: 0,
            count: None,
            more: false,
            order: None,
            last: None,
        }
    }

    /// Takes `row`; answers whether the statement should go on.
    fn take(&mut self, row: &dyn Cells) -> Result<bool, ODataError> {
        if self.seen == self.limit {
            self.more = true;
            return Ok(false);
        }
        if let Some(column) = self.count.filter(|_| self.seen == 0) {
            let Cell::Int(n) = row.cell(column)? else {
                return Err(ODataError::internal(&"a count that is not an integer"));
            };
            self.sink.count(n);
        }
        self.sink.row(row)?;
        self.seen += 1;
        if let Some(order) = self.order.as_ref().filter(|_| self.seen == self.limit) {
            self.last = order
                .columns
                .iter()
                .zip(&order.types)
                .map(|(column, edm)| Ok(order_literal(row.cell(*column)?, *edm)))
                .collect::<Result<Option<Vec<_>>, ODataError>>()?;
        }
        Ok(true)
    }

    fn done(self) -> (S, bool, Option<Vec<Literal>>) {
        let last = self.last.filter(|_| self.more);
        (self.sink, self.more, last)
    }
}

/// A feed and each engine's rows read as its cells.
struct Reader<S> {
    feed: Feed<S>,
    cells: EngineCells,
}

impl<S: Sink> Reader<S> {
    fn new(feed: Feed<S>) -> Reader<S> {
        Reader {
            feed,
            cells: EngineCells::default(),
        }
    }
}

impl<S: Sink> RowReader for Reader<S> {
    type Error = ODataError;
    type Wait = Pin<Box<dyn Future<Output = Result<(), ODataError>> + Send>>;

    fn begin(&mut self) {
        self.cells.begin();
    }

    fn row(&mut self, row: EngineRow<'_>) -> Result<bool, ODataError> {
        let feed = &mut self.feed;
        self.cells.read(row, |cells| feed.take(cells))
    }

    fn wants_more(&self) -> bool {
        !self.feed.more
    }

    fn wait(&mut self) -> Option<Self::Wait> {
        let handoff = self.feed.sink.handoff()?;
        Some(Box::pin(handoff.send()))
    }

    fn wait_blocking(&mut self) -> Result<(), ODataError> {
        match self.feed.sink.handoff() {
            Some(handoff) => handoff.send_blocking(),
            None => Ok(()),
        }
    }
}

fn counter() -> CountSink {
    CountSink {
        key_type: None,
        counts: Vec::new(),
    }
}

impl CountSink {
    /// The lone count read.
    fn total(&self) -> i64 {
        self.counts.first().map_or(0, |(_, n)| *n)
    }
}

/// The single integer `sql` answers (a count).
pub async fn scalar(db: &Readers, sql: Sql) -> Result<i64, ODataError> {
    let (sink, _) = run(db, sql, 1, counter()).await?;
    Ok(sink.total())
}
