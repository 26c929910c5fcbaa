//! MySQL's and MariaDB's connections for bulk reads (OData), on
//! `mysql_async` and its pool.
//!
//! As on PostgreSQL ([`super::PgReads`]), pages are read with the engine's
//! own client rather than sqlx: each row arrives as typed values, without
//! sqlx's stream layers and per-cell lookups. Each connection keeps its
//! prepared statements and its session settings (read committed, the
//! statement timeout); the pool neither pings nor resets a connection
//! between statements.

use mysql_async::prelude::Queryable;
use mysql_async::{
    Conn, DriverError, Opts, OptsBuilder, Params, Pool, PoolConstraints, PoolOpts, Row, Value,
};
use tokio::sync::OnceCell;

use super::server_url::ServerUrl;
use super::{Bind, ReadError, ReadFailure, ReadLimits, Step, MYSQL_READ_COMMITTED};

/// Prepared statements a connection keeps (least recently used go first).
const STATEMENTS_KEPT: usize = 256;

/// How long a connection may wait idle before it is closed.
const IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The bulk-read connections to one MySQL or MariaDB database.
#[derive(Clone)]
pub struct MySqlReads {
    opts: Opts,
    limits: ReadLimits,
    /// Opened on the first read: which timeout setting a connection gets
    /// depends on whether the server is MariaDB, which only it can tell.
    pool: std::sync::Arc<OnceCell<Pool>>,
}

impl std::fmt::Debug for MySqlReads {
    /// Never the options, which hold the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MySqlReads")
            .field("limits", &self.limits)
            .field("open", &self.pool.initialized())
            .finish_non_exhaustive()
    }
}

impl MySqlReads {
    /// At most `limits.max_connections` connections to `url`, each reading
    /// committed and cancelling a statement after
    /// `limits.statement_timeout_ms`. Nothing is opened before the first
    /// read, so a database that is down at start does not stop the process.
    pub fn new(url: &str, limits: ReadLimits) -> Result<MySqlReads, ReadError> {
        Ok(MySqlReads {
            opts: opts(url)?,
            limits,
            pool: std::sync::Arc::new(OnceCell::new()),
        })
    }

    /// The pool, opened on first use with the settings the server speaks.
    async fn pool(&self) -> Result<&Pool, ReadError> {
        self.pool
            .get_or_try_init(|| async {
                let probe = Conn::new(self.opts.clone()).await?;
                // MariaDB counts seconds in `max_statement_time`; MySQL has
                // `max_execution_time` in milliseconds. MariaDB's versions
                // start at 10, MySQL's are below.
                let mariadb = probe.server_version().0 >= 10;
                let _ = probe.disconnect().await;
                let ms = self.limits.statement_timeout_ms;
                let timeout = if mariadb {
                    format!(
                        "SET SESSION max_statement_time = {}",
                        f64::from(ms) / 1000.0
                    )
                } else {
                    format!("SET SESSION max_execution_time = {ms}")
                };
                let max = (self.limits.max_connections.max(1)) as usize;
                let constraints = PoolConstraints::new(0, max)
                    .ok_or_else(|| ReadError::Pool("a pool of no connections".into()))?;
                let opts = OptsBuilder::from_opts(self.opts.clone())
                    .setup(vec![MYSQL_READ_COMMITTED.to_owned(), timeout])
                    .stmt_cache_size(STATEMENTS_KEPT)
                    .pool_opts(
                        PoolOpts::default()
                            .with_constraints(constraints)
                            .with_inactive_connection_ttl(IDLE_TIMEOUT)
                            .with_reset_connection(false),
                    );
                Ok::<Pool, ReadError>(Pool::new(opts))
            })
            .await
    }

    /// Runs `text` (with `?` placeholders) bound to `binds` as a prepared
    /// statement and hands each row, as it arrives, to `each`, which says
    /// how to go on ([`Step`]). A connection that turns out lost on the
    /// first step is dropped and the statement runs again, up to once per
    /// connection the pool may hold. A read abandoned while the statement
    /// runs (its future dropped, or a [`Step::Wait`] that failed) ends the
    /// statement's connection on the server.
    pub async fn each<E, W>(
        &self,
        text: &str,
        binds: &[Bind],
        mut each: impl FnMut(&Row) -> Result<Step<W>, E>,
    ) -> Result<(), E>
    where
        E: From<ReadError>,
        W: std::future::Future<Output = Result<(), E>>,
    {
        let pool = self.pool().await?;
        let mut retries = self.limits.max_connections;
        loop {
            let mut conn = pool.get_conn().await.map_err(ReadError::from)?;
            let mut guard = Abandoned {
                pool: pool.clone(),
                id: Some(conn.id()),
            };
            let params = Params::Positional(binds.iter().map(value).collect());
            let mut result = match conn.exec_iter(text, params).await {
                Ok(result) => result,
                Err(e) if retries > 0 && is_lost(&e) => {
                    guard.id = None;
                    retries -= 1;
                    continue;
                }
                Err(e) => {
                    guard.id = None;
                    return Err(ReadError::from(e).into());
                }
            };
            while let Some(row) = result.next().await.map_err(ReadError::from)? {
                match each(&row)? {
                    Step::Next => {}
                    Step::Stop => break,
                    Step::Wait(wait) => wait.await?,
                }
            }
            guard.id = None;
            return Ok(());
        }
    }
}

/// Ends, when dropped holding one, the server connection of a statement
/// whose rows nobody reads any more: the server would otherwise finish it
/// for nobody, and the pool would read the rest before reusing it.
struct Abandoned {
    pool: Pool,
    id: Option<u32>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id, tokio::runtime::Handle::try_current()) else {
            return;
        };
        let pool = self.pool.clone();
        runtime.spawn(async move {
            let killed = async {
                let mut conn = pool.get_conn().await?;
                conn.query_drop(format!("KILL {id}")).await
            };
            if let Err(e) = killed.await {
                tracing::warn!(error = %e, "an abandoned statement could not be ended");
            }
        });
    }
}

/// The client's settings from sqlx's URL: where to connect and who as, and
/// of its parameters `socket`; sqlx's own ones are left to sqlx.
fn opts(url: &str) -> Result<Opts, ReadError> {
    let url = ServerUrl::parse(url).ok_or_else(|| ReadError::Pool("not a URL".into()))?;
    let host = if url.host.is_empty() {
        "localhost"
    } else {
        &url.host
    };
    Ok(OptsBuilder::default()
        .ip_or_hostname(host)
        .tcp_port(url.port.unwrap_or(3306))
        .user(url.user.clone())
        .pass(url.password.clone())
        .db_name(url.database.clone())
        .socket(url.param("socket"))
        .into())
}

/// A bound value as MySQL receives it: the types sqlx sent for the same
/// values, so the statement means the same on either path.
fn value(bind: &Bind) -> Value {
    match bind {
        Bind::Bool(b) => Value::Int(i64::from(*b)),
        Bind::Int(i) => Value::Int(*i),
        Bind::Text(t) | Bind::Decimal(t) => Value::Bytes(t.as_bytes().to_vec()),
        Bind::Double(d) => Value::Double(*d),
    }
}

/// Whether `e` says the connection is gone, so the statement may run on
/// another.
fn is_lost(e: &mysql_async::Error) -> bool {
    failure(e) == ReadFailure::Unavailable
}

/// How `e` is answered.
pub fn failure(e: &mysql_async::Error) -> ReadFailure {
    match e {
        mysql_async::Error::Server(server) => ReadFailure::of_mysql(server.code, &server.state),
        mysql_async::Error::Io(_)
        | mysql_async::Error::Driver(
            DriverError::ConnectionClosed
            | DriverError::PoolDisconnected
            | DriverError::PacketOutOfOrder,
        ) => ReadFailure::Unavailable,
        _ => ReadFailure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::{opts, MySqlReads};
    use crate::db::ReadLimits;

    #[test]
    fn a_read_pool_never_prints_its_password() {
        let reads = MySqlReads::new(
            "mysql://root:hunter2@db.example/gate",
            ReadLimits::default(),
        )
        .expect("reads");
        let printed = format!("{reads:?}");
        assert!(printed.contains("MySqlReads"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn a_url_with_sqlx_parameters_gives_the_client_its_settings() {
        let opts =
            opts("mysql://app:secret@db.example:3307/gate?ssl-mode=disabled&charset=utf8mb4")
                .expect("sqlx's own parameters are left to sqlx");
        assert_eq!(opts.user(), Some("app"));
        assert_eq!(opts.pass(), Some("secret"));
        assert_eq!(opts.db_name(), Some("gate"));
        assert_eq!(opts.ip_or_hostname(), "db.example");
        assert_eq!(opts.tcp_port(), 3307);
    }
}
