//! A pool of plain SQLite connections for the hot read path of `/odata`.
//!
//! sqlx's SQLite driver hands every row through a worker thread and copies
//! each value; for pages of hundreds of rows that copying is most of a
//! request's cost. These connections are read by the OData service on
//! blocking threads, straight from SQLite's own buffers. Writes, migrations
//! and every other query stay on the sqlx pool; both open the same file, which
//! WAL mode lets readers and the writer share.

use std::time::Duration;

use deadpool_sqlite::{Config, Pool, Runtime};
use sqlx::sqlite::SqliteConnectOptions;

/// The read pool over one SQLite file.
#[derive(Clone)]
pub struct SqliteReader {
    pool: std::sync::Arc<Connections>,
}

/// The pool itself. Its connections close on blocking threads of the Tokio
/// runtime; when the last handle goes after the runtime has stopped (a host
/// dropping its Rocket at exit), they are left to the process's end instead.
struct Connections(Option<Pool>);

impl Drop for Connections {
    fn drop(&mut self) {
        if tokio::runtime::Handle::try_current().is_err() {
            std::mem::forget(self.0.take());
        }
    }
}

impl std::fmt::Debug for SqliteReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteReader").finish_non_exhaustive()
    }
}

/// A failure of the read pool or of SQLite itself.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// SQLite refused the statement or failed while running it.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// No connection could be had, or the blocking task failed.
    #[error("sqlite read pool: {0}")]
    Pool(String),
}

impl SqliteReader {
    /// A pool over the file `url` names; `None` for an in-memory database,
    /// which other connections cannot see.
    pub fn for_url(url: &str) -> Option<SqliteReader> {
        let options: SqliteConnectOptions = url.parse().ok()?;
        let path = options.get_filename();
        if path.as_os_str().is_empty() || path.to_string_lossy().contains(":memory:") {
            return None;
        }
        // Two readers per core keep the cores busy; more would only hold
        // more page caches.
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let mut config = Config::new(path);
        config.pool = Some(deadpool_sqlite::PoolConfig::new(2 * cores));
        let pool = config.create_pool(Runtime::Tokio1).ok()?;
        Some(SqliteReader {
            pool: std::sync::Arc::new(Connections(Some(pool))),
        })
    }

    /// Runs `read` with a connection on a blocking thread.
    pub async fn read<R, E>(
        &self,
        read: impl FnOnce(&rusqlite::Connection) -> Result<R, E> + Send + 'static,
    ) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<ReadError> + Send + 'static,
    {
        let pool = self
            .pool
            .0
            .as_ref()
            .ok_or_else(|| E::from(ReadError::Pool("closed".into())))?;
        let conn = pool
            .get()
            .await
            .map_err(|e| E::from(ReadError::Pool(e.to_string())))?;
        conn.interact(move |conn| {
            conn.busy_timeout(Duration::from_secs(10))
                .map_err(|e| E::from(ReadError::from(e)))?;
            read(conn)
        })
        .await
        .map_err(|e| E::from(ReadError::Pool(e.to_string())))?
    }
}

/// Binds `binds` to a statement written with numbered `$n` placeholders:
/// `binds[i]` to `$(i+1)`, wherever (and however often) it appears.
pub fn bind_numbered(
    stmt: &mut rusqlite::Statement<'_>,
    binds: &[crate::odata::Bind],
) -> Result<(), rusqlite::Error> {
    use crate::odata::Bind;
    for (n, bind) in binds.iter().enumerate() {
        let Some(at) = stmt.parameter_index(&format!("${}", n + 1))? else {
            continue;
        };
        match bind {
            Bind::Null => stmt.raw_bind_parameter(at, rusqlite::types::Null)?,
            Bind::Bool(b) => stmt.raw_bind_parameter(at, i64::from(*b))?,
            Bind::Int(i) => stmt.raw_bind_parameter(at, *i)?,
            Bind::Text(t) | Bind::Decimal(t) => stmt.raw_bind_parameter(at, t.as_str())?,
            Bind::Double(d) => stmt.raw_bind_parameter(at, *d)?,
        }
    }
    Ok(())
}
