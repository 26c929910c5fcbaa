//! A transaction on the `main` pool: what a change made of several
//! statements (a new password and every session it ends, say) runs in, so
//! that either all of it commits or none of it does.
//!
//! ```ignore
//! let mut tx = Tx::begin(&db).await?;
//! tx.execute(tx.query("UPDATE users SET password = $1 WHERE id = $2").bind(hash).bind(id)).await?;
//! tx.execute(tx.query("DELETE FROM sessions WHERE user_id = $1").bind(id)).await?;
//! tx.commit().await?;
//! ```
//!
//! A `Tx` dropped without [`Tx::commit`] rolls back. While it is open, the
//! code holding it writes through it only: on SQLite a write on another
//! connection would wait for this one.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::Any;

use super::{Db, DbError, Dialect};

/// An open transaction and the dialect its statements are written in.
pub struct Tx {
    inner: sqlx::Transaction<'static, Any>,
    dialect: Dialect,
}

impl Tx {
    /// Begins a transaction on `db` (under the failover gate, as every
    /// statement of the pool).
    pub async fn begin(db: &Db) -> Result<Self, DbError> {
        Ok(Self {
            inner: db.begin().await?,
            dialect: db.dialect(),
        })
    }

    /// The engine's dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Prepares `sql` (written into the code, with `$n` placeholders) for
    /// this engine, as [`DbPool::query`](super::DbPool::query) does.
    pub fn query(&self, sql: &'static str) -> Query<'static, Any, AnyArguments<'static>> {
        sqlx::query(self.dialect.static_placeholders(sql))
    }

    /// Runs a statement in the transaction; answers how many rows it touched.
    pub async fn execute<'q>(
        &mut self,
        query: Query<'q, Any, AnyArguments<'q>>,
    ) -> Result<u64, DbError> {
        Ok(query.execute(&mut *self.inner).await?.rows_affected())
    }

    /// Commits every statement run in it.
    pub async fn commit(self) -> Result<(), DbError> {
        self.inner.commit().await
    }

    /// Undoes every statement run in it.
    pub async fn rollback(self) -> Result<(), DbError> {
        self.inner.rollback().await
    }
}
