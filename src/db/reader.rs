//! Plain SQLite connections for the hot read path of `/odata`, and the
//! failures of every engine's bulk reads ([`ReadError`]).
//!
//! sqlx's SQLite driver hands every row through a worker thread and copies
//! each value; for pages of hundreds of rows that copying is most of a
//! request's cost. These connections are read by the OData service on their
//! own threads ([`Workers`]), one connection each, straight from SQLite's
//! buffers. Writes, migrations and every other query stay on the sqlx pool;
//! both open the same file, which WAL mode lets readers and the writer share.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::sqlite::SqliteConnectOptions;

use crate::workers::Workers;

/// The read threads over one SQLite file, each with its connection, opened
/// on first use.
#[derive(Clone, Debug)]
pub struct SqliteReader {
    threads: Workers<Connection>,
    /// How long one read may run before SQLite is told to stop.
    timeout: Duration,
}

/// SQLite virtual-machine steps between two looks at the clock.
const STEPS_PER_CHECK: std::os::raw::c_int = 4096;

/// A read thread's connection: opened when the thread first reads.
struct Connection {
    path: PathBuf,
    open: Option<rusqlite::Connection>,
}

impl Connection {
    fn get(&mut self) -> Result<&rusqlite::Connection, ReadError> {
        let conn = match self.open.take() {
            Some(conn) => conn,
            None => {
                let conn = rusqlite::Connection::open(&self.path)?;
                conn.busy_timeout(Duration::from_secs(10))?;
                conn
            }
        };
        Ok(self.open.insert(conn))
    }
}

/// What a reader's row callback asks of it after a row.
#[derive(Debug)]
pub enum Step<W> {
    /// The next row.
    Next,
    /// No more rows: the reader has what it wants, and the rest of the
    /// statement (bounded by its `LIMIT`) is let go.
    Stop,
    /// The next row once `W` is done (the rows so far have gone out);
    /// if `W` fails, the read is abandoned and its statement ended.
    Wait(W),
}

/// A failure of the read threads or of SQLite itself.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// SQLite refused the statement or failed while running it.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The read thread failed or is gone.
    #[error("sqlite read pool: {0}")]
    Pool(String),
    /// The read ran past the statement timeout and was interrupted.
    #[error("the read ran past the statement timeout")]
    Timeout,
    /// PostgreSQL refused the statement or failed while running it.
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had.
    #[error("postgres read pool: {0}")]
    PgPool(#[from] deadpool_postgres::PoolError),
    /// MySQL or MariaDB refused the statement, failed while running it or
    /// could not be reached.
    #[error(transparent)]
    MySql(#[from] mysql_async::Error),
}

/// What a failed statement means for the caller, whichever client ran it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFailure {
    /// The statement ran past the statement timeout and was cancelled.
    Timeout,
    /// The database cannot be reached right now (down, restarting, a lost
    /// connection): the request may succeed when retried.
    Unavailable,
    /// The statement computed a value the engine cannot represent
    /// (SQLSTATE class 22: a division by zero, a number out of range).
    DataException,
    /// Anything else.
    Other,
}

impl ReadFailure {
    /// What an error with SQLSTATE `code` means (PostgreSQL's codes):
    /// `query_canceled` (57014) is the statement timeout; class 08
    /// (connection exception) and 57P01–57P03 (shut down, crashed, starting
    /// up) an unreachable database; class 22 a data exception.
    pub fn of_sqlstate(code: &str) -> ReadFailure {
        if code == "57014" {
            ReadFailure::Timeout
        } else if code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03") {
            ReadFailure::Unavailable
        } else if code.starts_with("22") {
            ReadFailure::DataException
        } else {
            ReadFailure::Other
        }
    }

    /// What MySQL's or MariaDB's error `number` with SQLSTATE `sqlstate`
    /// means: MariaDB's 1969 and MySQL's 3024 are the statement timeout;
    /// 1053, 1077 and 1927 a server shutting down (lost connections arrive
    /// as I/O errors); class 22 a data exception.
    pub fn of_mysql(number: u16, sqlstate: &str) -> ReadFailure {
        match number {
            1969 | 3024 => ReadFailure::Timeout,
            1053 | 1077 | 1927 => ReadFailure::Unavailable,
            _ if sqlstate.starts_with("22") => ReadFailure::DataException,
            _ => ReadFailure::Other,
        }
    }
}

/// What bulk reads may take of the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// A read statement running longer is cancelled (milliseconds).
    pub statement_timeout_ms: u32,
    /// Connections (on SQLite: read threads) bulk reads hold at most; the
    /// pool that sign-in and sessions use is never among them.
    pub max_connections: u32,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            statement_timeout_ms: 5000,
            max_connections: 8,
        }
    }
}

impl SqliteReader {
    /// Read threads over the file `url` names; `None` for an in-memory
    /// database, which other connections cannot see.
    pub fn for_url(url: &str, limits: super::ReadLimits) -> Option<SqliteReader> {
        let options: SqliteConnectOptions = url.parse().ok()?;
        let path = options.get_filename().to_path_buf();
        // sqlx names its in-memory databases `file:sqlx-in-memory-<n>`.
        let name = path.to_string_lossy();
        let in_memory = url.contains(":memory:")
            || url.contains("mode=memory")
            || name.contains(":memory:")
            || name.starts_with("file:sqlx-in-memory");
        if path.as_os_str().is_empty() || in_memory {
            return None;
        }
        // Two readers per core: more help large pages and slow small ones
        // (BENCHMARKS.md), and each holds its own page cache.
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let count = (2 * cores).min(limits.max_connections as usize).max(1);
        let threads = Workers::start("gatehouse-read", count, move || Connection {
            path: path.clone(),
            open: None,
        })
        .ok()?;
        Some(SqliteReader {
            threads,
            timeout: Duration::from_millis(u64::from(limits.statement_timeout_ms)),
        })
    }

    /// Runs `read` with a connection on a read thread.
    pub async fn read<R, E>(
        &self,
        read: impl FnOnce(&rusqlite::Connection) -> Result<R, E> + Send + 'static,
    ) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<ReadError> + Send + 'static,
    {
        let timeout = self.timeout;
        self.threads
            .run(move |conn| {
                let conn = conn.get()?;
                let deadline = Instant::now() + timeout;
                let interrupted = Arc::new(AtomicBool::new(false));
                let flag = interrupted.clone();
                // SQLite calls this every few thousand steps; `true` makes
                // the running statement fail with SQLITE_INTERRUPT.
                conn.progress_handler(
                    STEPS_PER_CHECK,
                    Some(move || {
                        let late = Instant::now() >= deadline;
                        if late {
                            flag.store(true, Ordering::Relaxed);
                        }
                        late
                    }),
                );
                let answer = read(conn);
                conn.progress_handler(STEPS_PER_CHECK, None::<fn() -> bool>);
                match answer {
                    Err(_) if interrupted.load(Ordering::Relaxed) => {
                        Err(E::from(ReadError::Timeout))
                    }
                    answer => answer,
                }
            })
            .await
            .ok_or_else(|| E::from(ReadError::Pool("the read thread failed".into())))?
    }
}

/// Binds `binds` to a statement written with numbered `$n` placeholders:
/// `binds[i]` to `$(i+1)`, wherever (and however often) it appears.
pub fn bind_numbered(
    stmt: &mut rusqlite::Statement<'_>,
    binds: &[super::Bind],
) -> Result<(), rusqlite::Error> {
    use super::Bind;
    for (n, bind) in binds.iter().enumerate() {
        let Some(at) = stmt.parameter_index(&format!("${}", n + 1))? else {
            continue;
        };
        match bind {
            Bind::Bool(b) => stmt.raw_bind_parameter(at, i64::from(*b))?,
            Bind::Int(i) => stmt.raw_bind_parameter(at, *i)?,
            Bind::Text(t) | Bind::Decimal(t) => stmt.raw_bind_parameter(at, t.as_str())?,
            Bind::Double(d) => stmt.raw_bind_parameter(at, *d)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod failure_tests {
    use super::ReadFailure;

    #[test]
    fn sqlstates_say_what_a_failure_means() {
        assert_eq!(ReadFailure::of_sqlstate("57014"), ReadFailure::Timeout);
        for code in ["08006", "08001", "57P01", "57P02", "57P03"] {
            assert_eq!(
                ReadFailure::of_sqlstate(code),
                ReadFailure::Unavailable,
                "{code}"
            );
        }
        assert_eq!(
            ReadFailure::of_sqlstate("22012"),
            ReadFailure::DataException
        );
        assert_eq!(ReadFailure::of_sqlstate("42P01"), ReadFailure::Other);
        assert_eq!(ReadFailure::of_sqlstate(""), ReadFailure::Other);
    }

    #[test]
    fn mysql_error_numbers_say_what_a_failure_means() {
        assert_eq!(ReadFailure::of_mysql(1969, "70100"), ReadFailure::Timeout);
        assert_eq!(ReadFailure::of_mysql(3024, "HY000"), ReadFailure::Timeout);
        for number in [1053, 1077, 1927] {
            assert_eq!(
                ReadFailure::of_mysql(number, "08S01"),
                ReadFailure::Unavailable
            );
        }
        assert_eq!(
            ReadFailure::of_mysql(1365, "22012"),
            ReadFailure::DataException
        );
        assert_eq!(ReadFailure::of_mysql(1146, "42S02"), ReadFailure::Other);
    }
}
