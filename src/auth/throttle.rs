//! Attempt counters kept in the database, so every instance sharing it counts
//! together. Each attempt increments its counter atomically *before* the
//! password is checked: concurrent guesses cannot slip past the limit, and
//! once it is exceeded even a correct password is refused until the window
//! ends. A successful sign-in clears the counter.

use sqlx::Row;

use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, Email};

/// Outcome of counting one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Within the limit.
    Allowed,
    /// Over the limit; `first` is true for the attempt that crossed it.
    Refused {
        /// Seconds until the window ends.
        retry_after: u64,
        /// This attempt is the first one refused in the window.
        first: bool,
    },
}

/// Counters of one kind (sign-in, reset requests), each per address + client IP.
#[derive(Clone, Debug)]
pub struct Throttle {
    db: Db,
    scope: &'static str,
    limit: u32,
    window_seconds: u32,
}

impl Throttle {
    /// `limit` attempts per `window_seconds` for keys of `scope`.
    pub fn new(db: Db, scope: &'static str, limit: u32, window_seconds: u32) -> Self {
        Self {
            db,
            scope,
            limit,
            window_seconds,
        }
    }

    /// The stored key: a digest of scope, lower-cased address and client IP.
    pub fn key(&self, email: &Email, ip: &str) -> String {
        sha256_hex(&format!("{}|{}|{}", self.scope, email.as_str(), ip))
    }

    /// Counts an attempt for `key` and says whether it may proceed.
    pub async fn hit(&self, key: &str) -> Result<Attempt, DbError> {
        let now = unix_now();
        let window_end = now + i64::from(self.window_seconds);
        let d = self.db.dialect();
        let upsert = format!(
            "INSERT INTO gatehouse_throttle (throttle_key, hits, expires_at) VALUES ($1, 1, $2) \
             {} hits = CASE WHEN gatehouse_throttle.expires_at <= $3 \
                 THEN 1 ELSE gatehouse_throttle.hits + 1 END, \
             expires_at = CASE WHEN gatehouse_throttle.expires_at <= $4 \
                 THEN {} ELSE gatehouse_throttle.expires_at END",
            d.upsert("throttle_key"),
            d.excluded("expires_at"),
        );
        let returning = format!("{upsert} RETURNING hits, expires_at");
        let counted = |sql| {
            sqlx::query(sql)
                .bind(key.to_owned())
                .bind(window_end)
                .bind(now)
                .bind(now)
        };
        let row = if d.has_returning() {
            counted(d.placeholders(&returning))
                .fetch_one(self.db.pool())
                .await?
        } else {
            // The upsert locks the row until commit, so the read sees this
            // attempt's count and no other instance's in between.
            let mut tx = self.db.pool().begin().await?;
            counted(d.placeholders(&upsert)).execute(&mut *tx).await?;
            let row = sqlx::query(d.placeholders(
                "SELECT hits, expires_at FROM gatehouse_throttle WHERE throttle_key = $1",
            ))
            .bind(key.to_owned())
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            row
        };
        let hits: i64 = row.try_get("hits")?;
        let expires_at: i64 = row.try_get("expires_at")?;
        let limit = i64::from(self.limit);
        if hits <= limit {
            return Ok(Attempt::Allowed);
        }
        Ok(Attempt::Refused {
            retry_after: (expires_at - now).max(1) as u64,
            first: hits == limit + 1,
        })
    }

    /// Forgets the counter of `key` (after a successful sign-in).
    pub async fn clear(&self, key: &str) -> Result<(), DbError> {
        self.db
            .execute(
                self.db
                    .query("DELETE FROM gatehouse_throttle WHERE throttle_key = $1")
                    .bind(key.to_owned()),
            )
            .await?;
        Ok(())
    }

    /// Removes counters whose window has ended.
    pub async fn sweep(&self) -> Result<u64, DbError> {
        self.db
            .execute(
                self.db
                    .query("DELETE FROM gatehouse_throttle WHERE expires_at <= $1")
                    .bind(unix_now()),
            )
            .await
    }
}
