//! Running a page's statements and handing their rows, as they arrive, to
//! a [`Sink`] that writes them out at once: memory follows a piece of the
//! page, never the table.
//!
//! The rows come through the database's bulk reads ([`Reads`]): on SQLite a
//! read thread with a plain connection, straight from SQLite's buffers; on
//! PostgreSQL and MySQL the engine's own client. Each engine's row is read
//! through [`Cells`], so the JSON writing is the same code.

use std::cell::{OnceCell, RefCell};

use super::cells::{my_columns, pg_kinds, Cells, MyCells, PgCells};
use super::reply::ODataError;
use super::sinks::{CountSink, Sink};
use super::values::{order_literal, Cell};
use crate::db::{bind_numbered, Db, MySqlReads, PgReads, ReadError, Reads, Step};
use crate::odata::{EdmType, Literal, Sql};

/// A count that a page statement carries as its column `column` (the same
/// on every row), read with the page in one trip to the database.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineCount {
    /// The column holding the count.
    pub column: usize,
    /// The count alone, for a page without rows; `None` when the page
    /// starts at the first row, where no row means a count of 0.
    pub alone: Option<Sql>,
}

/// Runs `sql`, handing each row to `sink`; stops reading after `limit` rows
/// and answers the sink and whether another row followed.
pub async fn run<S: Sink>(db: &Db, sql: Sql, limit: u64, sink: S) -> Result<(S, bool), ODataError> {
    let read = PageRead {
        statements: vec![sql],
        count: None,
        order: None,
    };
    let (sink, more, _) = run_page(db, read, limit, sink).await?;
    Ok((sink, more))
}

/// The statements of one page and what they carry besides its rows.
pub struct PageRead {
    /// Read one after another, until the page and its probe row are read.
    pub statements: Vec<Sql>,
    /// The collection's count, carried by the statements' rows.
    pub count: Option<InlineCount>,
    /// The order's values, carried by the statements' rows.
    pub order: Option<OrderValues>,
}

/// The values of a page's order that its statements select (`__s0`, …),
/// read off the last row the page can hold, for its next link.
#[derive(Debug, Clone)]
pub struct OrderValues {
    /// The column of the first value.
    pub first: usize,
    /// The values' types, in order.
    pub types: Vec<EdmType>,
}

/// Runs the statements of `read` in turn, handing each row to `sink`, until
/// `limit` rows and the probe row beyond them came; answers the sink,
/// whether the probe row came, and the order values of the page's last row
/// when the page is full and `read` carries them.
pub async fn run_page<S: Sink>(
    db: &Db,
    page: PageRead,
    limit: u64,
    sink: S,
) -> Result<(S, bool, Option<Vec<Literal>>), ODataError> {
    let PageRead {
        statements,
        count,
        order,
    } = page;
    let feed = Feed {
        sink,
        limit,
        seen: 0,
        count: count.as_ref().map(|c| c.column),
        more: false,
        order,
        last: None,
    };
    let reader = match db.reads() {
        Some(Reads::Sqlite(reader)) => reader,
        Some(reads) => {
            let mut feed = feed;
            for sql in &statements {
                feed = read(reads, sql, feed).await?;
                if feed.more {
                    break;
                }
            }
            if let Some(InlineCount { alone, .. }) = count.filter(|_| feed.seen == 0) {
                let n = match alone {
                    Some(alone) => read(reads, &alone, Feed::of(counter())).await?.sink.total(),
                    None => 0,
                };
                feed.sink.count(n);
            }
            return Ok(feed.done());
        }
        None => return Err(ODataError::internal(&"the database has no bulk reads")),
    };
    reader
        .read(move |conn| {
            let mut feed = feed;
            for sql in &statements {
                feed = read_sqlite(conn, sql, feed)?;
                if feed.more {
                    break;
                }
            }
            if let Some(InlineCount { alone, .. }) = count.filter(|_| feed.seen == 0) {
                let n = match alone {
                    Some(alone) => read_sqlite(conn, &alone, Feed::of(counter()))?.sink.total(),
                    None => 0,
                };
                feed.sink.count(n);
            }
            Ok(feed.done())
        })
        .await
}

/// A sink being fed the rows of one statement, up to a limit.
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
                .types
                .iter()
                .enumerate()
                .map(|(i, edm)| Ok(order_literal(row.cell(order.first + i)?, *edm)))
                .collect::<Result<Option<Vec<_>>, ODataError>>()?;
        }
        Ok(true)
    }

    fn done(self) -> (S, bool, Option<Vec<Literal>>) {
        let last = self.last.filter(|_| self.more);
        (self.sink, self.more, last)
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
pub async fn scalar(db: &Db, sql: Sql) -> Result<i64, ODataError> {
    let (sink, _) = run(db, sql, 1, counter()).await?;
    Ok(sink.total())
}

/// Feeds the rows of `sql` from a server engine's own driver.
async fn read<S: Sink>(reads: &Reads, sql: &Sql, feed: Feed<S>) -> Result<Feed<S>, ODataError> {
    match reads {
        Reads::Postgres(pool) => read_postgres(pool, sql, feed).await,
        Reads::MySql(pool) => read_mysql(pool, sql, feed).await,
        Reads::Sqlite(_) => Err(ODataError::internal(&"SQLite is read on its threads")),
    }
}

/// Feeds the rows of `sql` from PostgreSQL's bulk-read connections as they
/// arrive, each column decoded by the kind its type gave on the first row.
async fn read_postgres<S: Sink>(
    reads: &PgReads,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut rows = reads.query(&sql.text, &sql.binds).await?;
    let mut kinds = Vec::new();
    let mut texts: Vec<OnceCell<String>> = Vec::new();
    let scratch = RefCell::new(Vec::new());
    while let Some(row) = rows.next().await? {
        if kinds.is_empty() {
            kinds = pg_kinds(&row);
            texts.resize_with(kinds.len(), OnceCell::new);
        }
        for text in &mut texts {
            text.take();
        }
        let go = feed.take(&PgCells {
            row: &row,
            kinds: &kinds,
            texts: &texts,
            scratch: &scratch,
        })?;
        if let Some(handoff) = feed.sink.handoff() {
            // Dropping `rows` unfinished cancels the statement.
            handoff.send().await?;
        }
        if !go {
            rows.finish();
            break;
        }
    }
    Ok(feed)
}

/// Feeds the rows of `sql` from MySQL's or MariaDB's bulk-read connections
/// as they arrive.
async fn read_mysql<S: Sink>(
    reads: &MySqlReads,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut columns = Vec::new();
    let mut texts: Vec<OnceCell<String>> = Vec::new();
    let scratch = RefCell::new(Vec::new());
    let taker = &mut feed;
    // The closure owns what it lends each row, so the future stays `Send`.
    reads
        .each(&sql.text, &sql.binds, move |row| {
            if columns.is_empty() {
                columns = my_columns(row);
                texts.resize_with(columns.len(), OnceCell::new);
            }
            for text in &mut texts {
                text.take();
            }
            let go = taker.take(&MyCells {
                row,
                columns: &columns,
                texts: &texts,
                scratch: &scratch,
            })?;
            Ok(match taker.sink.handoff() {
                Some(handoff) => Step::Wait(handoff.send()),
                None if go => Step::Next,
                None => Step::Stop,
            })
        })
        .await?;
    Ok(feed)
}

fn read_sqlite<S: Sink>(
    conn: &rusqlite::Connection,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut stmt = conn.prepare_cached(&sql.text).map_err(ReadError::from)?;
    bind_numbered(&mut stmt, &sql.binds).map_err(ReadError::from)?;
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(ReadError::from)? {
        let go = feed.take(row)?;
        if let Some(handoff) = feed.sink.handoff() {
            handoff.send_blocking()?;
        }
        if !go {
            break;
        }
    }
    Ok(feed)
}
