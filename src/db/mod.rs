//! Database access: one pool over SQLite, PostgreSQL or MySQL/MariaDB.
//!
//! Queries are written once with `$n` placeholders; the [`Dialect`] turns them
//! into what the engine expects and supplies the few expressions that differ.
//! Each table's queries live beside the code that owns the table.
//!
//! The OData service reads through connections of its own, [`Readers`],
//! opened from a `Db` on ignite and never carried by it.

mod dialect;
mod each;
mod expressions;
mod failover;
mod migrate;
mod my_text;
mod mysql;
mod pg_asker;
pub(crate) mod pg_text;
mod pg_url;
mod postgres;
mod reader;
mod readers;
mod replicas;
mod schema;
mod server_url;
mod tx;

pub use dialect::Dialect;
pub use each::{EngineRow, RowReader};
pub use expressions::{DatePart, Stored, TextValue};
pub use my_text::Temporal as MyTemporal;
pub use mysql::MySqlReads;
pub use postgres::{raw as pg_raw, PgReads};
pub use reader::{ReadLimits, bind_numbered, ReadError, ReadFailure, SqliteReader, Step};
pub use migrate::Migrations;
pub use readers::{Readers, Reads, Wanted as ReadersWanted};
pub use replicas::{ReplicaState, Replicas};
pub use schema::{table_columns, Column, SqlType};
pub use tx::Tx;

use failover::{find_writable, Primary};
use pg_url::Hosts;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow, AnyTypeInfoKind};
use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Execute, Executor, Row, ValueRef};
use tracing::Instrument;

/// A statement on sqlx's `Any` driver, with its binds.
pub type AnyQuery<'q> = Query<'q, Any, AnyArguments<'q>>;

/// A value bound to a placeholder of generated SQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// A boolean (an integer 0/1 where the engine has no booleans).
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// Text.
    Text(String),
    /// A double-precision number.
    Double(f64),
    /// An exact decimal, bound as its text and converted in the query.
    Decimal(String),
}

/// Gatehouse's database, `databases.main`: one pool that sign-in, sessions
/// and the host's own handlers share, as a [`rocket_db_pools::Database`].
///
/// Gatehouse attaches it on ignite unless the host attached `Db::init()`
/// before Gatehouse; either way there is one pool. A handler takes
/// `Connection<Db>` for a connection of its own, or `&Db` (through
/// [`rocket_db_pools::Database::fetch`] or `&State<Db>`) to reach the
/// pool and the [`Dialect`]:
///
/// ```no_run
/// use gatehouse::Db;
/// use rocket::{get, State};
///
/// #[get("/projects/count")]
/// async fn projects(db: &State<Db>) -> Option<String> {
///     let row = db.fetch_optional(db.query("SELECT COUNT(*) AS n FROM projects")).await.ok()??;
///     sqlx::Row::try_get::<i64, _>(&row, "n").ok().map(|n| n.to_string())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Db(DbPool);

impl rocket_db_pools::Database for Db {
    type Pool = DbPool;
    const NAME: &'static str = "main";
}

impl From<DbPool> for Db {
    fn from(pool: DbPool) -> Self {
        Self(pool)
    }
}

/// `rocket_db_pools::Database` asks for it; the pool's methods take `&self`.
/// `rocket_db_pools::Database` asks for it (a host's `Connection<Db>`);
/// `DbPool` has no method that changes it.
impl std::ops::DerefMut for Db {
    fn deref_mut(&mut self) -> &mut DbPool {
        &mut self.0
    }
}

impl std::ops::Deref for Db {
    type Target = DbPool;
    fn deref(&self) -> &DbPool {
        &self.0
    }
}


/// The pool behind [`Db`] and the dialect spoken by it; cheap to clone,
/// every clone shares the pool.
#[derive(Clone)]
pub struct DbPool {
    pool: AnyPool,
    dialect: Dialect,
    /// Where the pool connects; kept for the OData readers ([`Readers`])
    /// and never printed (it may hold a password).
    url: std::sync::Arc<str>,
    /// Which of several PostgreSQL hosts accepts writes, when the URL
    /// names several.
    primary: Option<Arc<Primary>>,
    /// Statements waiting for a connection of the pool now.
    waiting: Arc<AtomicI64>,
}

/// One statement waiting for a connection, counted while it waits (also
/// when it stops waiting because its request went away).
struct Waiting<'a>(&'a AtomicI64);

impl<'a> Waiting<'a> {
    fn on(count: &'a AtomicI64) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for DbPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbPool")
            .field("dialect", &self.dialect)
            .field("size", &self.pool.size())
            .finish_non_exhaustive()
    }
}

/// How big the shared pool is and how long a request waits for one of its
/// connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSize {
    /// Connections at most.
    pub max_connections: u32,
    /// Seconds a request waits for a free connection.
    pub acquire_timeout_secs: u64,
}

impl PoolSize {
    /// Gatehouse's sizes when it opens the pool itself: 8 connections on
    /// SQLite (one file, one writer), 16 on a server engine.
    pub fn default_for(dialect: Dialect) -> Self {
        let max_connections = match dialect {
            Dialect::Sqlite => 8,
            Dialect::Postgres | Dialect::MySql => 16,
        };
        Self {
            max_connections,
            acquire_timeout_secs: 10,
        }
    }
}

/// The keys of `databases.main` the pool reads when the host attaches
/// `Db::init()`: rocket_db_pools' own names.
#[derive(serde::Deserialize)]
struct PoolConfig {
    url: String,
    max_connections: Option<u32>,
    connect_timeout: Option<u64>,
}

#[rocket::async_trait]
impl rocket_db_pools::Pool for DbPool {
    type Connection = sqlx::pool::PoolConnection<Any>;
    type Error = DbError;

    async fn init(figment: &rocket::figment::Figment) -> Result<Self, DbError> {
        let config: PoolConfig = figment
            .extract()
            .map_err(|e| sqlx::Error::Configuration(e.to_string().into()))?;
        let dialect =
            Dialect::from_url(&config.url).map_err(|e| sqlx::Error::Configuration(e.into()))?;
        let default = PoolSize::default_for(dialect);
        let size = PoolSize {
            max_connections: config.max_connections.unwrap_or(default.max_connections),
            acquire_timeout_secs: config
                .connect_timeout
                .unwrap_or(default.acquire_timeout_secs),
        };
        Self::open(&config.url, size).await
    }

    async fn get(&self) -> Result<Self::Connection, DbError> {
        self.connection().await
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

/// Database failures. Never shown to a client: callers map them to a generic
/// server error and log the detail.
pub type DbError = sqlx::Error;

impl Db {
    /// Connects to `url` (`sqlite://…`, `postgres://…`, `mysql://…`) with
    /// Gatehouse's pool sizes.
    pub async fn connect(url: &str) -> Result<Self, DbError> {
        let dialect = Dialect::from_url(url).map_err(|e| sqlx::Error::Configuration(e.into()))?;
        Ok(Self(DbPool::open(url, PoolSize::default_for(dialect)).await?))
    }

    /// The pool Gatehouse manages when the host attached no `Db`: sized by
    /// `databases.main`'s `max_connections` and `connect_timeout` where
    /// `figment` sets them (rocket_db_pools' names), else by Gatehouse's
    /// sizes ([`PoolSize::default_for`]).
    pub(crate) async fn open_configured(figment: &rocket::figment::Figment) -> Result<Self, DbError> {
        let main = figment.focus("databases.main");
        Ok(Self(<DbPool as rocket_db_pools::Pool>::init(&main).await?))
    }
}

impl DbPool {
    /// Opens the pool at `url`.
    ///
    /// SQLite connections run in WAL mode with a busy timeout, so concurrent
    /// requests wait for each other instead of failing with "database is locked".
    /// MySQL connections read committed, as PostgreSQL's do.
    async fn open(url: &str, size: PoolSize) -> Result<Self, DbError> {
        sqlx::any::install_default_drivers();
        let dialect = Dialect::from_url(url).map_err(|e| sqlx::Error::Configuration(e.into()))?;
        let mut options = AnyPoolOptions::new()
            .max_connections(size.max_connections)
            .acquire_timeout(Duration::from_secs(size.acquire_timeout_secs));
        match dialect {
            Dialect::Sqlite => {
                options = options.after_connect(|conn, _| {
                    Box::pin(async move {
                        // The busy timeout first: switching to WAL takes a
                        // lock another process may hold while it starts too.
                        conn.execute("PRAGMA busy_timeout = 10000").await?;
                        conn.execute("PRAGMA journal_mode = WAL").await?;
                        conn.execute("PRAGMA synchronous = NORMAL").await?;
                        conn.execute("PRAGMA foreign_keys = ON").await?;
                        Ok(())
                    })
                });
            }
            Dialect::MySql => {
                options = options.after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute(MYSQL_READ_COMMITTED).await?;
                        Ok(())
                    })
                });
            }
            Dialect::Postgres => {}
        }
        let Some(hosts) = Hosts::parse(url) else {
            return Ok(Self {
                pool: options.connect(url).await?,
                dialect,
                url: url.into(),
                primary: None,
                waiting: Arc::default(),
            });
        };
        let Some(found) = find_writable(&hosts).await else {
            let msg = "none of the hosts `databases.main.url` names accepts writes";
            return Err(sqlx::Error::Configuration(msg.into()));
        };
        let pool = options.connect(hosts.url(found)).await?;
        let primary = Arc::new(Primary::new(hosts, found));
        tokio::spawn(primary.clone().watch(pool.clone()));
        Ok(Self {
            pool,
            dialect,
            url: url.into(),
            primary: Some(primary),
            waiting: Arc::default(),
        })
    }

    /// A connection of the pool, unless no host is known to accept writes:
    /// a statement still waiting for one when that happens stops waiting
    /// at once. Either way the error is `PoolTimedOut` (503 with
    /// `Retry-After`), not a wait for the pool's timeout.
    ///
    /// Only the wait is cut short. A statement that holds its connection
    /// runs to its end (or to its own error, when the server goes away):
    /// cutting it would leave its client not knowing whether a commit in
    /// flight took effect.
    pub(crate) async fn connection(&self) -> Result<PoolConnection<Any>, DbError> {
        let _waiting = Waiting::on(&self.waiting);
        let Some(primary) = &self.primary else {
            return self.pool.acquire().await;
        };
        if !primary.is_known() {
            return Err(sqlx::Error::PoolTimedOut);
        }
        let acquired = tokio::select! {
            acquired = self.pool.acquire() => acquired,
            () = primary.lost() => Err(sqlx::Error::PoolTimedOut),
        };
        self.noticed(acquired)
    }

    /// Passes `done` on, first asking the watcher of the primary to look
    /// now when it says the database could not be reached.
    fn noticed<T>(&self, done: Result<T, DbError>) -> Result<T, DbError> {
        if let Some(primary) = &self.primary {
            if done.as_ref().is_err_and(is_unavailable) {
                primary.suspect();
            }
        }
        done
    }

    /// Begins a transaction, its connection taken under the same watch of
    /// the primary as every statement's.
    pub async fn begin(&self) -> Result<sqlx::Transaction<'static, Any>, DbError> {
        let conn = self.connection().await?;
        // What `Pool::begin` does with the connection it acquired.
        self.noticed(sqlx::Transaction::begin(conn, None).await)
    }

    /// Runs the migration set of this dialect.
    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        migrate::run(self).await
    }

    /// Where the pool connects (never printed: it may hold a password).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The SQL dialect of this database.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// How many statements wait for a connection of the pool now.
    pub(crate) fn waiting(&self) -> i64 {
        self.waiting.load(Ordering::Relaxed)
    }

    /// How many times the pool found a new primary after losing one (0
    /// for a single server).
    pub(crate) fn failovers(&self) -> u64 {
        self.primary.as_ref().map_or(0, |p| p.failovers())
    }

    /// The underlying pool, past the failover gate: for the migrations
    /// and the crate's own tests.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Closes the pool: waits for the connections in use to come back,
    /// then closes every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Prepares `sql` (a statement written into the code, with `$n`
    /// placeholders) for this engine. A statement made at run time goes
    /// through [`Dialect::placeholders`] and `sqlx::query` instead, so that
    /// no text a caller makes up is kept.
    ///
    /// ```ignore
    /// db.fetch_optional(db.query("SELECT id FROM users WHERE email = $1").bind(email)).await
    /// ```
    pub fn query(&self, sql: &'static str) -> Query<'static, Any, AnyArguments<'static>> {
        sqlx::query(self.dialect.static_placeholders(sql))
    }

    /// Fetches at most one row.
    pub async fn fetch_optional<'q>(
        &self,
        query: Query<'q, Any, AnyArguments<'q>>,
    ) -> Result<Option<AnyRow>, DbError> {
        let span = self.dialect.statement_span(query.sql());
        let mut conn = self.connection().await?;
        self.noticed(query.fetch_optional(&mut *conn).instrument(span).await)
    }

    /// Fetches every row.
    pub async fn fetch_all<'q>(
        &self,
        query: Query<'q, Any, AnyArguments<'q>>,
    ) -> Result<Vec<AnyRow>, DbError> {
        let span = self.dialect.statement_span(query.sql());
        let mut conn = self.connection().await?;
        self.noticed(query.fetch_all(&mut *conn).instrument(span).await)
    }

    /// Runs `insert` (an `INSERT` with `$n` placeholders, bound by `bind`)
    /// on `executor` — the pool or an open transaction — and answers the new
    /// row's `id`: by `RETURNING id` where the engine has it, else by the
    /// id MySQL reports for the insert. Refused at once while no host is
    /// known to accept writes; an executor that still has to wait for a
    /// connection (the pool) waits unwatched, so Gatehouse's own inserts
    /// pass a connection taken under the watch.
    pub async fn insert_id<'c, E>(
        &self,
        executor: E,
        insert: &str,
        bind: impl for<'q> FnOnce(AnyQuery<'q>) -> AnyQuery<'q>,
    ) -> Result<i64, DbError>
    where
        E: Executor<'c, Database = Any>,
    {
        if self.primary.as_ref().is_some_and(|p| !p.is_known()) {
            return Err(sqlx::Error::PoolTimedOut);
        }
        self.noticed(
            async {
                if self.dialect.has_returning() {
                    let returning = format!("{insert} RETURNING id");
                    let row = bind(sqlx::query(&returning)).fetch_one(executor).await?;
                    return row.try_get("id");
                }
                let insert = self.dialect.placeholders(insert);
                let done = bind(sqlx::query(&insert)).execute(executor).await?;
                done.last_insert_id().ok_or(sqlx::Error::RowNotFound)
            }
            .instrument(self.dialect.statement_span(insert))
            .await,
        )
    }

    /// Runs a statement and answers how many rows it touched.
    pub async fn execute<'q>(
        &self,
        query: Query<'q, Any, AnyArguments<'q>>,
    ) -> Result<u64, DbError> {
        let span = self.dialect.statement_span(query.sql());
        let mut conn = self.connection().await?;
        let done = query.execute(&mut *conn).instrument(span).await;
        Ok(self.noticed(done)?.rows_affected())
    }
}

/// Run on every MySQL connection. InnoDB's default, repeatable read, locks
/// the gaps a `DELETE` or upsert of a missing key searched, so two
/// transactions on different addresses deadlock on each other's inserts.
/// Read committed, PostgreSQL's default, locks only the rows touched.
const MYSQL_READ_COMMITTED: &str = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// What a failed statement of the sqlx pool means ([`ReadFailure`]): I/O,
/// TLS and pool failures an unreachable database, a database error by its
/// MySQL number or its SQLSTATE.
pub fn failure(e: &DbError) -> ReadFailure {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => ReadFailure::Unavailable,
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            match db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
                Some(mysql) => ReadFailure::of_mysql(mysql.number(), &code),
                None => ReadFailure::of_sqlstate(&code),
            }
        }
        _ => ReadFailure::Other,
    }
}

/// Whether `e` says the database cannot be reached right now (down,
/// restarting, out of connections) rather than that a statement failed:
/// such a request may succeed when retried.
pub fn is_unavailable(e: &DbError) -> bool {
    failure(e) == ReadFailure::Unavailable
}

/// Reads a text column of a row on every engine.
pub trait TextColumn {
    /// The text in `column`, or `None` for SQL null. MySQL's `TEXT` types
    /// reach sqlx's `Any` driver as bytes (also its binary-collated
    /// character types); they are read as UTF-8 here.
    fn text(&self, column: &str) -> Result<Option<String>, DbError>;
}

impl TextColumn for AnyRow {
    fn text(&self, column: &str) -> Result<Option<String>, DbError> {
        let raw = self.try_get_raw(column)?;
        if raw.is_null() {
            return Ok(None);
        }
        if raw.type_info().kind() != AnyTypeInfoKind::Blob {
            return self.try_get(column).map(Some);
        }
        let bytes: Vec<u8> = self.try_get(column)?;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| sqlx::Error::Decode(e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::Db;

    #[tokio::test]
    async fn a_database_handle_never_prints_where_it_connects() {
        let dir = std::env::temp_dir().join(format!("gh-debug-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let url = format!("sqlite://{}/secret-name.db?mode=rwc", dir.display());
        let db = Db::connect(&url).await.expect("opens");
        let printed = format!("{db:?}");
        assert!(printed.contains("Sqlite"), "{printed}");
        assert!(!printed.contains("secret-name"), "{printed}");
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

