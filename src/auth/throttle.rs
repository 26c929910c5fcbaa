//! Attempt counters kept in the database, so every instance sharing it counts
//! together.
//!
//! A counter row holds, for one key and window, the `hits` counted so far,
//! the checks still `pending` and whether a refusal was already reported.
//! Two ways of counting use it:
//!
//! - [`Throttle::begin`] for sign-in checks: a check takes a slot before the
//!   password is verified, and only while `hits + pending` is below the
//!   limit, so concurrent guesses can never get more checks than the limit.
//!   A check that fails becomes a hit; one that succeeds clears the counter.
//!   An attempt that finds the last slots taken by checks in progress waits
//!   for their outcome instead of being refused: right passwords sent at
//!   once all succeed.
//! - [`Throttle::hit`] where every request counts (reset-link requests) and
//!   [`Throttle::record`] / [`Throttle::exhausted`] for budgets that count
//!   failures reported after the fact (the per-IP budget).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Row;

use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, Email};
use crate::metrics::Metrics;
use crate::security::ClientBlock;

/// How long an attempt waits for checks in progress before it is refused.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// How often a waiting attempt looks again.
const POLL: Duration = Duration::from_millis(25);

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

/// Counters of one kind (sign-in, reset requests, per-IP budgets).
#[derive(Clone, Debug)]
pub struct Throttle {
    db: Db,
    scope: &'static str,
    limit: u32,
    window_seconds: u32,
    /// Keys this instance found spent, until their window ends: a flood
    /// from a refused address is answered without asking the database.
    spent: Arc<Mutex<HashMap<String, i64>>>,
    /// Where its refusals are counted.
    metrics: Metrics,
}

/// Spent keys remembered at most; past this, ended windows are forgotten.
const SPENT_REMEMBERED: usize = 4096;

/// A check that holds a slot of its counter until its outcome is known.
///
/// Report it with [`Check::failed`] or [`Check::succeeded`]; a check dropped
/// unreported (the request went away) counts as a failure, so abandoning
/// requests cannot be used to guess for free.
pub struct Check {
    slot: Option<(Throttle, String)>,
}

impl Check {
    /// The password was wrong: the slot becomes a counted failure.
    pub async fn failed(mut self) -> Result<(), DbError> {
        match self.slot.take() {
            Some((throttle, key)) => throttle.release(&key, true).await,
            None => Ok(()),
        }
    }

    /// The sign-in succeeded: the counter is cleared.
    pub async fn succeeded(mut self) -> Result<(), DbError> {
        match self.slot.take() {
            Some((throttle, key)) => throttle.clear(&key).await,
            None => Ok(()),
        }
    }
}

impl Drop for Check {
    fn drop(&mut self) {
        if let Some((throttle, key)) = self.slot.take() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(e) = throttle.release(&key, true).await {
                        tracing::warn!(error = %e, "abandoned sign-in check not counted");
                    }
                });
            }
        }
    }
}

/// The answer of [`Throttle::begin`].
pub enum Begun {
    /// The check may run; report its outcome.
    Check(Check),
    /// The limit is reached.
    Refused {
        /// Seconds until the window ends.
        retry_after: u64,
        /// This attempt is the first one refused in the window.
        first: bool,
    },
}

impl Throttle {
    /// `limit` attempts per `window_seconds` for keys of `scope`.
    pub fn new(db: Db, scope: &'static str, limit: u32, window_seconds: u32) -> Self {
        Self {
            db,
            scope,
            limit,
            window_seconds,
            spent: Arc::default(),
            metrics: Metrics::off(),
        }
    }

    /// This throttle, its refusals counted in `metrics`.
    pub fn counted_in(mut self, metrics: &Metrics) -> Self {
        self.metrics = metrics.clone();
        self
    }

    /// Whether this throttle counts at all: a limit of 0 (a per-IP budget
    /// configured off) lets everything through and stores nothing.
    fn is_off(&self) -> bool {
        self.limit == 0
    }

    /// The stored key: a digest of scope, lower-cased address and client IP
    /// (an IPv6 client by its /64, as for [`Self::ip_key`]).
    pub fn key(&self, email: &Email, ip: &str) -> String {
        sha256_hex(&format!(
            "{}|{}|{}",
            self.scope,
            email.as_str(),
            budget_subject(ip)
        ))
    }

    /// The stored key of a budget per client IP, whatever the address. An
    /// IPv6 client counts by its /64 ([`ClientBlock`]).
    pub fn ip_key(&self, ip: &str) -> String {
        sha256_hex(&format!("{}|{}", self.scope, budget_subject(ip)))
    }

    /// The stored key of anything else this counter counts (a passkey
    /// challenge).
    pub fn subject_key(&self, subject: &str) -> String {
        sha256_hex(&format!("{}|{subject}", self.scope))
    }

    /// The stored key of a budget per user, wherever they sign in from.
    pub fn user_key(&self, user_id: i64) -> String {
        sha256_hex(&format!("{}|user:{user_id}", self.scope))
    }

    /// Starts the window of `key` if none is running (or the last one ended).
    async fn open_window(&self, key: &str, now: i64) -> Result<(), DbError> {
        let d = self.db.dialect();
        // MySQL assigns left to right, each assignment seeing the ones
        // before it: `expires_at`, which the others test, goes last. (Each
        // placeholder is used once: MySQL's are positional.)
        let ended = |n: u8| format!("gatehouse_throttle.expires_at <= ${n}");
        let sql = format!(
            "INSERT INTO gatehouse_throttle (throttle_key, hits, pending, refused, expires_at) \
             VALUES ($1, 0, 0, 0, $2) {} \
             hits = CASE WHEN {} THEN 0 ELSE gatehouse_throttle.hits END, \
             pending = CASE WHEN {} THEN 0 ELSE gatehouse_throttle.pending END, \
             refused = CASE WHEN {} THEN 0 ELSE gatehouse_throttle.refused END, \
             expires_at = CASE WHEN {} THEN $7 ELSE gatehouse_throttle.expires_at END",
            d.upsert("throttle_key"),
            ended(3),
            ended(4),
            ended(5),
            ended(6),
        );
        let end = now + i64::from(self.window_seconds);
        let sql = d.placeholders(&sql);
        self.db
            .execute(
                sqlx::query(&sql)
                    .bind(key.to_owned())
                    .bind(end)
                    .bind(now)
                    .bind(now)
                    .bind(now)
                    .bind(now)
                    .bind(end),
            )
            .await?;
        Ok(())
    }

    /// Takes a slot for a check of `key`, waiting while checks in progress
    /// hold the last ones.
    pub async fn begin(&self, key: &str) -> Result<Begun, DbError> {
        self.take_slot(key, MAX_WAIT).await
    }

    /// Takes a slot for a check of `key` if one is free now; refused at once
    /// while failures and checks in progress fill the limit. Nothing waits
    /// or polls, so a flood of attempts costs the database a fixed handful
    /// of statements each (open the window, try the slot, read the counter,
    /// mark the refusal).
    pub async fn try_begin(&self, key: &str) -> Result<Begun, DbError> {
        self.take_slot(key, Duration::ZERO).await
    }

    async fn take_slot(&self, key: &str, max_wait: Duration) -> Result<Begun, DbError> {
        let waited = Instant::now();
        loop {
            let now = unix_now();
            self.open_window(key, now).await?;
            let taken = self
                .db
                .execute(
                    self.db
                        .query(
                            "UPDATE gatehouse_throttle SET pending = pending + 1 \
                             WHERE throttle_key = $1 AND hits + pending < $2",
                        )
                        .bind(key.to_owned())
                        .bind(i64::from(self.limit)),
                )
                .await?;
            if taken == 1 {
                return Ok(Begun::Check(Check {
                    slot: Some((self.clone(), key.to_owned())),
                }));
            }
            let (hits, pending, expires_at) = self.read(key).await?;
            let spent = hits >= i64::from(self.limit) && pending == 0;
            if !spent && waited.elapsed() < max_wait {
                // Checks in progress may yet free their slots; a counter
                // cleared or ended meanwhile has room again.
                if pending > 0 {
                    tokio::time::sleep(POLL).await;
                }
                continue;
            }
            return Ok(Begun::Refused {
                retry_after: (expires_at - now).max(1) as u64,
                first: self.report_refusal(key).await?,
            });
        }
    }

    /// Marks the window as refused; true for the first refusal.
    async fn report_refusal(&self, key: &str) -> Result<bool, DbError> {
        self.count_refusal();
        let marked = self
            .db
            .execute(
                self.db
                    .query(
                        "UPDATE gatehouse_throttle SET refused = 1 \
                         WHERE throttle_key = $1 AND refused = 0",
                    )
                    .bind(key.to_owned()),
            )
            .await?;
        Ok(marked == 1)
    }

    /// Gives back a slot; a failure stays counted as a hit.
    async fn release(&self, key: &str, failed: bool) -> Result<(), DbError> {
        self.db
            .execute(
                self.db
                    .query(
                        "UPDATE gatehouse_throttle SET hits = hits + $1, \
                         pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END \
                         WHERE throttle_key = $2",
                    )
                    .bind(i64::from(failed))
                    .bind(key.to_owned()),
            )
            .await?;
        Ok(())
    }

    /// `hits`, `pending` and `expires_at` of `key` (zeros when there is no row).
    async fn read(&self, key: &str) -> Result<(i64, i64, i64), DbError> {
        let row = self
            .db
            .fetch_optional(
                self.db
                    .query(
                        "SELECT hits, pending, expires_at FROM gatehouse_throttle \
                         WHERE throttle_key = $1",
                    )
                    .bind(key.to_owned()),
            )
            .await?;
        match row {
            Some(row) => Ok((
                row.try_get::<i64, _>("hits")?,
                row.try_get::<i64, _>("pending")?,
                row.try_get::<i64, _>("expires_at")?,
            )),
            None => Ok((0, 0, 0)),
        }
    }

    /// Counts an attempt for `key` (every attempt counts) and says whether it
    /// may proceed.
    pub async fn hit(&self, key: &str) -> Result<Attempt, DbError> {
        if self.is_off() {
            return Ok(Attempt::Allowed);
        }
        let now = unix_now();
        self.record(key).await?;
        let (hits, _, expires_at) = self.read(key).await?;
        let limit = i64::from(self.limit);
        if hits <= limit {
            return Ok(Attempt::Allowed);
        }
        Ok(Attempt::Refused {
            retry_after: (expires_at - now).max(1) as u64,
            first: self.report_refusal(key).await?,
        })
    }

    /// Counts one failure against `key` (a budget checked by [`Self::exhausted`]).
    pub async fn record(&self, key: &str) -> Result<(), DbError> {
        if self.is_off() {
            return Ok(());
        }
        self.open_window(key, unix_now()).await?;
        self.db
            .execute(
                self.db
                    .query("UPDATE gatehouse_throttle SET hits = hits + 1 WHERE throttle_key = $1")
                    .bind(key.to_owned()),
            )
            .await?;
        Ok(())
    }

    /// Seconds until the window of `key` ends when this instance already
    /// found its budget spent; asks nothing of the database.
    pub fn known_spent(&self, key: &str) -> Option<u64> {
        let now = unix_now();
        let spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        let until = *spent.get(key)?;
        (until > now).then(|| (until - now) as u64)
    }

    /// Seconds until the window of `key` ends when its budget is spent
    /// (`limit` failures counted), else `None`.
    pub async fn exhausted(&self, key: &str) -> Result<Option<u64>, DbError> {
        if self.is_off() {
            return Ok(None);
        }
        if let Some(retry_after) = self.known_spent(key) {
            return Ok(Some(retry_after));
        }
        let now = unix_now();
        let (hits, _, expires_at) = self.read(key).await?;
        if expires_at <= now || hits < i64::from(self.limit) {
            return Ok(None);
        }
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        if spent.len() >= SPENT_REMEMBERED {
            spent.retain(|_, until| *until > now);
        }
        spent.insert(key.to_owned(), expires_at);
        Ok(Some((expires_at - now).max(1) as u64))
    }

    /// [`Self::known_spent`] as the answer to an attempt: a refusal,
    /// counted in `throttle_refusals_total`.
    pub fn refuses_from_memory(&self, key: &str) -> Option<u64> {
        self.counted(self.known_spent(key))
    }

    /// [`Self::exhausted`] as the answer to an attempt: a refusal, counted
    /// in `throttle_refusals_total`.
    pub async fn refuses(&self, key: &str) -> Result<Option<u64>, DbError> {
        Ok(self.counted(self.exhausted(key).await?))
    }

    /// `spent`, counted as a refusal when it is one.
    fn counted(&self, spent: Option<u64>) -> Option<u64> {
        if spent.is_some() {
            self.count_refusal();
        }
        spent
    }

    /// Counts a refusal of this throttle's kind that its own counter did
    /// not decide (a second step closed by failures in a row).
    pub fn count_refusal(&self) {
        self.metrics.throttle_refusal(self.scope);
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

/// Who a per-client counter counts: the client's [`ClientBlock`]. Text
/// that is no address at all is its own subject.
fn budget_subject(ip: &str) -> String {
    match ip.parse::<IpAddr>() {
        Ok(ip) => ClientBlock::from(ip).to_string(),
        Err(_) => ip.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::budget_subject;

    #[test]
    fn ipv6_clients_are_counted_by_their_slash_64() {
        let a = budget_subject("2001:db8:1:2:aaaa::1");
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(budget_subject("2001:db8:1:2:ffff:ffff:ffff:ffff"), a);
        assert_ne!(budget_subject("2001:db8:1:3::1"), a, "the next /64 is another client");
        assert_eq!(budget_subject("203.0.113.9"), "203.0.113.9");
        assert_eq!(budget_subject("::ffff:203.0.113.9"), "203.0.113.9");
        assert_ne!(budget_subject("203.0.113.9"), budget_subject("203.0.113.10"));
        assert_eq!(budget_subject("unknown"), "unknown");
    }
}
