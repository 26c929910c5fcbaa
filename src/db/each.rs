//! One way to read statements' rows on every engine: [`Reads::each`] runs
//! statements in turn and hands each row, as its engine's client delivers
//! it ([`EngineRow`]), to a [`RowReader`], which decodes it. Where the rows
//! are read is hidden here: on SQLite's read threads (the reader moves to
//! the thread and back), on PostgreSQL's or MySQL's own connections. Every
//! statement runs under the read timeout; rows abandoned while their
//! statement runs end it on the server.

use std::future::Future;

use super::reader::{ReadError, Step};
use super::replicas::spread;
use super::{bind_numbered, Bind, Dialect, Reads};

/// A row as its engine's client hands it over.
pub enum EngineRow<'r> {
    /// A row of SQLite's, read in place.
    Sqlite(&'r rusqlite::Row<'r>),
    /// A row of PostgreSQL's, in its binary format.
    Postgres(&'r tokio_postgres::Row),
    /// A row of MySQL's or MariaDB's, typed by the binary protocol.
    MySql(&'r mysql_async::Row),
}

/// What takes the rows of [`Reads::each`].
pub trait RowReader: Send + 'static {
    /// The reader's failures; a read failure becomes one.
    type Error: From<ReadError> + Send + 'static;
    /// What the reader waits for between two rows (output going out).
    type Wait: Future<Output = Result<(), Self::Error>> + Send;

    /// A statement begins: its rows come next, their columns its own.
    fn begin(&mut self);

    /// Takes a row; answers whether its statement should go on.
    fn row(&mut self, row: EngineRow<'_>) -> Result<bool, Self::Error>;

    /// Whether the next statement is still wanted.
    fn wants_more(&self) -> bool;

    /// What to wait for before the next row, on a server engine.
    fn wait(&mut self) -> Option<Self::Wait>;

    /// The same on a read thread, where nothing is awaited: done there and
    /// then.
    fn wait_blocking(&mut self) -> Result<(), Self::Error>;
}

impl Reads {
    /// Runs `statements` (text with placeholders for this engine, and
    /// values) in turn while `reader` wants more, handing it every row;
    /// answers the reader.
    pub async fn each<R: RowReader>(
        &self,
        statements: Vec<(String, Vec<Bind>)>,
        mut reader: R,
    ) -> Result<R, R::Error> {
        match self {
            Reads::Sqlite(threads) => {
                // The read thread has no span of its own: each statement's
                // is a child of the caller's.
                let caller = tracing::Span::current();
                threads
                    .read(move |conn| {
                        for (text, binds) in &statements {
                            if !reader.wants_more() {
                                break;
                            }
                            reader.begin();
                            let span = caller.in_scope(|| Dialect::Sqlite.statement_span(text));
                            let _in = span.enter();
                            let mut stmt = conn.prepare_cached(text).map_err(ReadError::from)?;
                            bind_numbered(&mut stmt, binds).map_err(ReadError::from)?;
                            let mut rows = stmt.raw_query();
                            let mut read = 0u64;
                            while let Some(row) = rows.next().map_err(ReadError::from)? {
                                read += 1;
                                let go = reader.row(EngineRow::Sqlite(row))?;
                                reader.wait_blocking()?;
                                if !go {
                                    break;
                                }
                            }
                            span.record("db.response.returned_rows", read);
                        }
                        Ok(reader)
                    })
                    .await
            }
            Reads::Postgres(pool, replicas) => {
                for (text, binds) in &statements {
                    if !reader.wants_more() {
                        break;
                    }
                    reader.begin();
                    let span = Dialect::Postgres.statement_span(text);
                    let mut read = 0u64;
                    let mut rows = spread(pool, replicas.as_deref(), text, binds).await?;
                    while let Some(row) = rows.next().await? {
                        read += 1;
                        let go = reader.row(EngineRow::Postgres(&row))?;
                        if let Some(wait) = reader.wait() {
                            // Dropping `rows` unfinished cancels the statement.
                            wait.await?;
                        }
                        if !go {
                            rows.finish();
                            break;
                        }
                    }
                    span.record("db.response.returned_rows", read);
                }
                Ok(reader)
            }
            Reads::MySql(pool) => {
                for (text, binds) in &statements {
                    if !reader.wants_more() {
                        break;
                    }
                    reader.begin();
                    let span = Dialect::MySql.statement_span(text);
                    let mut read = 0u64;
                    let (reader, counted) = (&mut reader, &mut read);
                    pool.each(text, binds, move |row| {
                        *counted += 1;
                        let go = reader.row(EngineRow::MySql(row))?;
                        Ok(match reader.wait() {
                            Some(wait) => Step::Wait(wait),
                            None if go => Step::Next,
                            None => Step::Stop,
                        })
                    })
                    .await?;
                    span.record("db.response.returned_rows", read);
                }
                Ok(reader)
            }
        }
    }
}
