//! The OData service's bulk readers: connections of their own over the
//! database of a [`Db`](super::Db), apart from the pool that sign-in,
//! sessions and the host share, every statement under the read timeout.
//!
//! Gatehouse opens them once, on ignite ([`Readers::configured`]), spread
//! over `odata.replicas` where there are some, and hands them to the OData
//! service alone; the host's `Db` never carries them.

use std::sync::Arc;
use std::time::Duration;

use super::{
    DbError, DbPool, Dialect, MySqlReads, PgReads, ReadError, ReadFailure, ReadLimits, ReplicaState,
    Replicas,
    SqliteReader,
};

/// The connections bulk reads go through, one kind per engine: rows are
/// decoded straight from the engine's own buffers (sqlx's `Any` driver
/// copies every value first), and every statement runs under the read
/// timeout (SQLite's progress handler on its read threads, each server's
/// own statement timeout on its connections).
#[derive(Clone, Debug)]
pub enum Reads {
    /// SQLite, plain connections on their own threads.
    Sqlite(SqliteReader),
    /// PostgreSQL, on `tokio-postgres`: the primary's reads, and the
    /// replicas they are spread over when there are some.
    Postgres(PgReads, Option<Arc<Replicas>>),
    /// MySQL or MariaDB, on `mysql_async`.
    MySql(MySqlReads),
}

/// What the configuration asks of the bulk readers (`odata.*`): their
/// limits, and the PostgreSQL standbys their reads are spread over with
/// the lag each may have.
#[derive(Clone, Copy, Debug)]
pub struct Wanted<'a> {
    /// The limits every reader is held to.
    pub limits: ReadLimits,
    /// The standbys' URLs (`odata.replicas`).
    pub replicas: &'a [String],
    /// How far behind the primary a standby may be and still be read.
    pub max_replica_lag: Duration,
}

/// The OData bulk readers of one database, and the dialect their
/// statements are written in; cheap to clone, every clone shares the
/// connections.
#[derive(Clone, Debug)]
pub struct Readers {
    dialect: Dialect,
    /// `None` for an in-memory SQLite database, which no other connection
    /// can open.
    reads: Option<Reads>,
}

impl Readers {
    /// Readers of the database `db` connects to, held to `limits`, on the
    /// primary alone: a SQLite file gets its read threads, a server engine
    /// a pool of its own.
    pub fn open(db: &DbPool, limits: ReadLimits) -> Result<Readers, DbError> {
        let url = db.url();
        let refused = |e: ReadError| sqlx::Error::Configuration(e.to_string().into());
        let reads = match db.dialect() {
            Dialect::Sqlite => SqliteReader::for_url(url, limits).map(Reads::Sqlite),
            Dialect::Postgres => Some(Reads::Postgres(
                PgReads::new(url, limits).map_err(refused)?,
                None,
            )),
            Dialect::MySql => Some(Reads::MySql(MySqlReads::new(url, limits).map_err(refused)?)),
        };
        Ok(Readers {
            dialect: db.dialect(),
            reads,
        })
    }

    /// The readers `wanted` over `db`'s database: held to its limits, and
    /// spread over its replicas (watched from now on; the start-up output
    /// says how each replica stands) when it names some. Replicas are
    /// refused on an engine other than PostgreSQL, and when one that
    /// answers is not a standby of the primary.
    pub(crate) async fn configured(db: &DbPool, wanted: &Wanted<'_>) -> Result<Readers, String> {
        let limits = wanted.limits;
        let readers = Readers::open(db, limits)
            .map_err(|e| format!("cannot open database `databases.main.url`: {e}"))?;
        if wanted.replicas.is_empty() {
            return Ok(readers);
        }
        if db.dialect() != Dialect::Postgres {
            return Err(format!(
                "`odata.replicas` is served on PostgreSQL only (`databases.main.url` names {:?}): remove `odata.replicas`",
                db.dialect()
            ));
        }
        let replicas = Replicas::new(wanted.replicas, limits, wanted.max_replica_lag)
            .map_err(|e| format!("cannot use `odata.replicas`: {e}"))?;
        replicas.check_standbys(db.url()).await?;
        let replicas = Arc::new(replicas);
        let watch = replicas.clone().watch(db.url().to_owned()).await;
        tracing::warn!("{}", replicas.describe());
        tokio::spawn(watch);
        Ok(readers.spread_over(Some(replicas)))
    }

    /// The same readers on the primary alone.
    pub(crate) fn on_primary(&self) -> Readers {
        self.spread_over(None)
    }

    /// The same readers with their PostgreSQL reads spread over
    /// `replicas`, or on the primary alone with `None`; other engines'
    /// reads are unchanged.
    fn spread_over(&self, replicas: Option<Arc<Replicas>>) -> Readers {
        let reads = match &self.reads {
            Some(Reads::Postgres(reads, _)) => Some(Reads::Postgres(reads.clone(), replicas)),
            other => other.clone(),
        };
        Readers {
            dialect: self.dialect,
            reads,
        }
    }

    /// The connections reads run on; `None` for an in-memory SQLite
    /// database, on which the OData service refuses to start.
    pub fn reads(&self) -> Option<&Reads> {
        self.reads.as_ref()
    }

    /// The SQL dialect of the database read.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// What the watcher last saw of each replica the reads are spread
    /// over; none without replicas.
    pub fn replica_states(&self) -> Vec<ReplicaState> {
        match &self.reads {
            Some(Reads::Postgres(_, Some(replicas))) => replicas.states(),
            _ => Vec::new(),
        }
    }
}

impl ReadError {
    /// What this failure means for the caller.
    pub fn failure(&self) -> ReadFailure {
        match self {
            ReadError::Timeout => ReadFailure::Timeout,
            ReadError::Sqlite(rusqlite::Error::SqliteFailure(failure, _))
                if failure.code == rusqlite::ErrorCode::OperationInterrupted =>
            {
                ReadFailure::Timeout
            }
            ReadError::Postgres(e) => super::postgres::failure(e),
            ReadError::PgPool(e) => super::postgres::pool_failure(e),
            ReadError::MySql(e) => super::mysql::failure(e),
            ReadError::Sqlite(_) | ReadError::Pool(_) => ReadFailure::Other,
        }
    }
}
