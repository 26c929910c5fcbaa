//! PostgreSQL's connections for bulk reads (OData), on `tokio-postgres`
//! pooled by `deadpool-postgres`.
//!
//! Pages are read here rather than through sqlx: `tokio-postgres` hands out
//! each row as the server sent it (one buffer, one range per column), so a
//! row costs a few hundred instructions before its JSON is written, where
//! sqlx's stream layers and per-cell lookups cost about two thousand. Each
//! connection keeps its prepared statements, so a page after the first is
//! one round trip; idle connections are not pinged before use (a lost one
//! fails its first step and the statement runs again on another).

use std::pin::Pin;
use std::time::Duration;

use deadpool_postgres::{
    Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime,
};
use futures::TryStreamExt;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{NoTls, Row, RowStream};

use super::pg_url::client_config;
use super::{Bind, ReadError, ReadFailure, ReadLimits};

/// Prepared statements a connection keeps; past this many its cache starts
/// over, so query shapes a client invents cannot grow it without bound.
const STATEMENTS_KEPT: usize = 256;

/// How long a statement waits for a connection, and for a new one to open.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// The bulk-read connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgReads {
    pool: Pool,
}

impl std::fmt::Debug for PgReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PgReads")
            .field("size", &status.size)
            .field("available", &status.available)
            .finish()
    }
}

impl PgReads {
    /// At most `limits.max_connections` connections to `url`, each
    /// cancelling a statement after `limits.statement_timeout_ms`. They open
    /// on demand, so a database that is down at start does not stop the
    /// process.
    pub fn new(url: &str, limits: ReadLimits) -> Result<PgReads, ReadError> {
        let mut config = client_config(url)?;
        // The timeout rides on the connection's start-up options, after
        // any the URL gave (such as a `search_path`). JIT compilation is
        // off: it starts on a plan's estimated cost, and a tree's recursive
        // statement, whose estimates multiply level by level, spent 865 of
        // its 1,010 ms compiling (BENCHMARKS.md); a page is never long
        // enough to win that back.
        let timeout = format!(
            "-c statement_timeout={} -c jit=off",
            limits.statement_timeout_ms
        );
        let options = match config.get_options() {
            Some(given) if !given.trim().is_empty() => format!("{given} {timeout}"),
            _ => timeout,
        };
        config.options(&options);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(ACQUIRE_TIMEOUT);
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(limits.max_connections.max(1) as usize)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(ACQUIRE_TIMEOUT))
            .create_timeout(Some(ACQUIRE_TIMEOUT))
            .build()
            .map_err(|e| ReadError::Pool(e.to_string()))?;
        Ok(PgReads { pool })
    }

    /// Runs `text` (with `$n` placeholders) bound to `binds`; its rows come
    /// as the server sends them. The statement is prepared once per
    /// connection. A connection that turns out lost on the first step is
    /// dropped and the statement runs again, once per connection that was
    /// idle.
    pub async fn query(&self, text: &str, binds: &[Bind]) -> Result<PgRows, ReadError> {
        let mut retries = self.pool.status().available;
        loop {
            let conn = self.pool.get().await?;
            match start(&conn, text, binds).await {
                Ok(rows) => {
                    return Ok(PgRows {
                        rows: Box::pin(rows),
                        conn: Some(conn),
                        settled: false,
                    })
                }
                Err(e) if retries > 0 && is_lost(&e) => {
                    retries -= 1;
                    let _ = Object::take(conn);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Prepares (or finds prepared) and starts `text` on `conn`.
async fn start(
    conn: &Object,
    text: &str,
    binds: &[Bind],
) -> Result<RowStream, tokio_postgres::Error> {
    let types: Vec<Type> = binds.iter().map(param_type).collect();
    if conn.statement_cache.size() >= STATEMENTS_KEPT {
        conn.statement_cache.clear();
    }
    let statement = conn.prepare_typed_cached(text, &types).await?;
    let params = binds.iter().map(|bind| -> &(dyn ToSql + Sync) {
        match bind {
            Bind::Bool(b) => b,
            Bind::Int(i) => i,
            Bind::Text(t) | Bind::Decimal(t) => t,
            Bind::Double(d) => d,
        }
    });
    conn.query_raw(&statement, params).await
}

/// The type a bound value is declared with: the types sqlx declared for
/// the same values, so the statement means the same on either path.
fn param_type(bind: &Bind) -> Type {
    match bind {
        Bind::Bool(_) => Type::BOOL,
        Bind::Int(_) => Type::INT8,
        Bind::Text(_) | Bind::Decimal(_) => Type::TEXT,
        Bind::Double(_) => Type::FLOAT8,
    }
}

/// Whether `e` says the connection is gone (the server restarted or shut
/// down), so the statement may run on another.
fn is_lost(e: &tokio_postgres::Error) -> bool {
    failure(e) == ReadFailure::Unavailable
}

/// The rows of one running statement, holding its connection until dropped.
pub struct PgRows {
    rows: Pin<Box<RowStream>>,
    /// Held while the rows are read; taken out of the pool when they are
    /// abandoned.
    conn: Option<Object>,
    /// The last row came, or the reader let the rest go on purpose.
    settled: bool,
}

impl PgRows {
    /// The next row; `None` after the last.
    pub async fn next(&mut self) -> Result<Option<Row>, ReadError> {
        let row = self.rows.try_next().await?;
        self.settled |= row.is_none();
        Ok(row)
    }

    /// Lets the statement's remaining rows go: the reader has what it wants
    /// (a statement bounded by `LIMIT` sends few more), and the connection
    /// passes them over.
    pub fn finish(mut self) {
        self.settled = true;
    }
}

impl Drop for PgRows {
    /// Rows dropped while the statement still runs (the client that wanted
    /// them went away) cancel it on the server, which would otherwise
    /// finish it for nobody.
    fn drop(&mut self) {
        let Some(conn) = self.conn.take().filter(|_| !self.settled) else {
            return;
        };
        // The connection leaves the pool (and closes), so the cancel cannot
        // reach a later statement on it.
        let token = conn.cancel_token();
        drop(Object::take(conn));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = token.cancel_query(NoTls).await {
                    tracing::warn!(error = %e, "an abandoned statement could not be cancelled");
                }
            });
        }
    }
}

/// How `e` is answered: by its SQLSTATE, and as unavailable when it has
/// none that says more and the connection is closed or failed reading.
pub fn failure(e: &tokio_postgres::Error) -> ReadFailure {
    let by_code = e.code().map_or(ReadFailure::Other, |code| {
        ReadFailure::of_sqlstate(code.code())
    });
    let gone =
        e.is_closed() || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    match by_code {
        ReadFailure::Other if gone => ReadFailure::Unavailable,
        by_code => by_code,
    }
}

/// How a failure to get a connection is answered: always unavailable.
pub fn pool_failure(e: &PoolError) -> ReadFailure {
    match e {
        PoolError::Backend(e) => match failure(e) {
            ReadFailure::Other => ReadFailure::Unavailable,
            other => other,
        },
        _ => ReadFailure::Unavailable,
    }
}

/// Column `i` of `row` as the server sent it, in binary format; `None` for
/// null.
pub fn raw(row: &Row, i: usize) -> Result<Option<&[u8]>, ReadError> {
    Ok(row.try_get::<_, RawValue<'_>>(i)?.0)
}

/// Any value, as its bytes.
struct RawValue<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for RawValue<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawValue(Some(raw)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawValue(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::PgReads;
    use crate::db::pg_url::client_config;
    use crate::db::ReadLimits;

    #[tokio::test]
    async fn a_read_pool_never_prints_its_password() {
        let reads = PgReads::new(
            "postgres://app:hunter2@db.example/gate",
            ReadLimits::default(),
        )
        .expect("reads");
        let printed = format!("{reads:?}");
        assert!(printed.contains("PgReads"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn a_url_with_sqlx_parameters_gives_the_client_its_settings() {
        let config = client_config(
            "postgres://app:secret@db.example:6432/gate?sslmode=disable\
             &statement-cache-capacity=10&options=-c%20search_path%3Dgh_test_x",
        )
        .expect("sqlx's own parameters are left to sqlx");
        assert_eq!(config.get_user(), Some("app"));
        assert_eq!(config.get_password(), Some(&b"secret"[..]));
        assert_eq!(config.get_dbname(), Some("gate"));
        assert_eq!(config.get_ports(), [6432]);
        assert_eq!(config.get_options(), Some("-c search_path=gh_test_x"));
    }
}
