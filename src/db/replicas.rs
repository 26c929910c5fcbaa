//! OData reads from PostgreSQL streaming replicas (`odata.replicas`).
//!
//! Each replica has a read pool of its own, with the limits and statement
//! timeout of the primary's. A watcher asks, every second, the primary for
//! its WAL position and each replica for the position it has replayed; a
//! replica that does not answer, or whose replay has stayed behind a
//! position the primary reached more than `odata.max_replica_lag_ms` ago,
//! is skipped until it catches up (an idle replica that replayed
//! everything is never behind). Reads go to the healthy replicas in turn,
//! and to the primary when none is healthy; a read a replica fails to
//! reach runs on the primary and the replica is skipped until the watcher
//! sees it well again. Each change is logged. At start, a replica that
//! answers but is not a standby of the primary is refused.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pg_asker::Asker;
use super::postgres::{PgReads, PgRows};
use super::{Bind, ReadFailure};
use super::server_url::ServerUrl;
use super::{ReadError, ReadLimits};

/// How often the primary and the replicas are asked for their positions.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The replicas OData reads are spread over.
pub struct Replicas {
    nodes: Vec<Replica>,
    next: AtomicUsize,
    max_lag: Duration,
}

/// One replica: where it is, its reads, whether it is used.
struct Replica {
    label: String,
    url: String,
    reads: PgReads,
    healthy: AtomicBool,
    /// How far its replay was behind the primary when last asked, in
    /// milliseconds; `u64::MAX` when it did not answer.
    behind_ms: AtomicU64,
}

/// What the watcher last saw of one replica.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaState {
    /// Reads go to it.
    pub in_use: bool,
    /// How far its replay was behind the primary; `None` when it did not
    /// answer.
    pub behind: Option<Duration>,
}

impl std::fmt::Debug for Replicas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Replicas {
    /// A read pool per URL of `urls`, each held to `limits`; a replica is
    /// used once the watcher has seen it replaying within `max_lag`.
    pub fn new(urls: &[String], limits: ReadLimits, max_lag: Duration) -> Result<Replicas, ReadError> {
        let nodes = urls
            .iter()
            .map(|url| {
                let label = ServerUrl::parse(url)
                    .map(|u| format!("{}:{}", u.host, u.port.unwrap_or(5432)))
                    .unwrap_or_else(|| "replica".to_owned());
                Ok(Replica {
                    label,
                    url: url.clone(),
                    reads: PgReads::new(url, limits)?,
                    healthy: AtomicBool::new(false),
                    behind_ms: AtomicU64::new(u64::MAX),
                })
            })
            .collect::<Result<Vec<_>, ReadError>>()?;
        Ok(Replicas {
            nodes,
            next: AtomicUsize::new(0),
            max_lag,
        })
    }

    /// The reads of the next healthy replica, with its index; `None` when
    /// none is healthy.
    pub(super) fn pick(&self) -> Option<(usize, &PgReads)> {
        let n = self.nodes.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| self.nodes[i].healthy.load(Ordering::Relaxed))
            .map(|i| (i, &self.nodes[i].reads))
    }

    /// Stops using replica `i` until the watcher sees it well again.
    pub(super) fn skip(&self, i: usize, why: &ReadError) {
        let replica = &self.nodes[i];
        if replica.healthy.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                "OData replica {} skipped: a read could not reach it ({why}); the primary serves",
                replica.label
            );
        }
    }

    /// What the watcher last saw of each replica, in the order of
    /// `odata.replicas`.
    pub fn states(&self) -> Vec<ReplicaState> {
        self.nodes
            .iter()
            .map(|r| ReplicaState {
                in_use: r.healthy.load(Ordering::Relaxed),
                behind: match r.behind_ms.load(Ordering::Relaxed) {
                    u64::MAX => None,
                    ms => Some(Duration::from_millis(ms)),
                },
            })
            .collect()
    }

    /// One line per replica and its state, for start-up output.
    pub fn describe(&self) -> String {
        let states: Vec<String> = self
            .nodes
            .iter()
            .map(|r| {
                let state = match r.healthy.load(Ordering::Relaxed) {
                    true => "in use",
                    false => "not in use yet",
                };
                format!("{} ({state})", r.label)
            })
            .collect();
        format!(
            "OData reads on {} replica(s): {}; at most {} ms behind the primary",
            self.nodes.len(),
            states.join(", "),
            self.max_lag.as_millis()
        )
    }

    /// Refuses replicas that answer but are no standby of the primary at
    /// `primary`: one not in recovery (a primary of its own, or the primary
    /// itself), or one whose `system_identifier` is not the primary's (a
    /// standby of another server). A replica that does not answer is let
    /// through, as at any other time: the watcher skips it until it does.
    /// The message names `odata.replicas` and the replica's host and port.
    pub async fn check_standbys(&self, primary: &str) -> Result<(), String> {
        const SYSTEM: &str = "SELECT system_identifier::text FROM pg_control_system()";
        let primary_system = Asker::new(primary).ask(SYSTEM).await.flatten();
        for replica in &self.nodes {
            let mut asker = Asker::new(&replica.url);
            let Some(in_recovery) = asker.ask("SELECT pg_is_in_recovery()::text").await else {
                continue;
            };
            if in_recovery.as_deref() != Some("true") {
                return Err(format!(
                    "`odata.replicas` names {}, which is not a standby (it is not in recovery): \
                     name streaming standbys of the primary",
                    replica.label
                ));
            }
            let Some(system) = asker.ask(SYSTEM).await else {
                continue;
            };
            if primary_system.is_some() && system != primary_system {
                return Err(format!(
                    "`odata.replicas` names {}, a standby of another server (its system \
                     identifier is not the primary's): name streaming standbys of the primary",
                    replica.label
                ));
            }
        }
        Ok(())
    }

    /// Asks the primary at `primary` and every replica for their
    /// positions once now; answers the watch that asks again every second,
    /// for as long as it runs.
    pub async fn watch(self: Arc<Self>, primary: String) -> impl Future<Output = ()> + Send {
        let mut watch = Watch {
            primary: Asker::new(&primary),
            positions: VecDeque::new(),
            replicas: self.nodes.iter().map(|r| Asker::new(&r.url)).collect(),
        };
        watch.round(&self).await;
        async move {
            loop {
                tokio::time::sleep(WATCH_EVERY).await;
                watch.round(&self).await;
            }
        }
    }
}

/// What the watcher keeps between two rounds.
struct Watch {
    primary: Asker,
    /// The primary's WAL positions, and when they were seen.
    positions: VecDeque<(Instant, u64)>,
    /// One per replica, in order.
    replicas: Vec<Asker>,
}

impl Watch {
    /// Asks every server once and marks each replica used or skipped.
    async fn round(&mut self, replicas: &Replicas) {
        let asked = wal_position(&mut self.primary, "pg_current_wal_lsn()").await;
        if let Some(lsn) = asked {
            self.positions.push_back((Instant::now(), lsn));
            while self.positions.len() > 2
                && self.positions[1].0.elapsed() > replicas.max_lag + WATCH_EVERY * 4
            {
                self.positions.pop_front();
            }
        }
        for (i, replica) in replicas.nodes.iter().enumerate() {
            let replayed = wal_position(&mut self.replicas[i], "pg_last_wal_replay_lsn()").await;
            let behind = replayed.map(|at| behind_for(&self.positions, at));
            let healthy = behind.is_some_and(|b| b <= replicas.max_lag);
            let ms = behind.map_or(u64::MAX, |b| u64::try_from(b.as_millis()).unwrap_or(u64::MAX - 1));
            replica.behind_ms.store(ms, Ordering::Relaxed);
            if replica.healthy.swap(healthy, Ordering::Relaxed) == healthy {
                continue;
            }
            match behind {
                _ if healthy => tracing::warn!("OData replica {} in use", replica.label),
                None => tracing::warn!("OData replica {} skipped: it does not answer", replica.label),
                Some(b) => tracing::warn!(
                    "OData replica {} skipped: its replay is {} ms behind the primary",
                    replica.label,
                    b.as_millis()
                ),
            }
        }
    }
}

/// Runs `text` bound to `binds` on a healthy one of `replicas` when there
/// is one, else on `primary`; a replica that cannot be reached is skipped
/// and the statement runs on the primary.
pub(super) async fn spread(
    primary: &PgReads,
    replicas: Option<&Replicas>,
    text: &str,
    binds: &[Bind],
) -> Result<PgRows, ReadError> {
    if let Some((i, replica)) = replicas.and_then(Replicas::pick) {
        match replica.query(text, binds).await {
            Err(e) if e.failure() == ReadFailure::Unavailable => {
                if let Some(replicas) = replicas {
                    replicas.skip(i, &e);
                }
            }
            answered => return answered,
        }
    }
    primary.query(text, binds).await
}

/// How long the replay position `at` has been behind: since the earliest
/// recorded primary position past it (zero when it reached the latest).
fn behind_for(positions: &VecDeque<(Instant, u64)>, at: u64) -> Duration {
    positions
        .iter()
        .find(|(_, lsn)| *lsn > at)
        .map_or(Duration::ZERO, |(when, _)| when.elapsed())
}

/// The WAL position `function` gives on `asker`'s server; `None` when it
/// did not answer. A server that is not a standby has no replay position:
/// it counts as caught up.
async fn wal_position(asker: &mut Asker, function: &str) -> Option<u64> {
    match asker.ask(&format!("SELECT {function}::text")).await? {
        Some(text) => parse_lsn(&text),
        None => Some(u64::MAX),
    }
}

/// A WAL position as PostgreSQL writes it (`16/B374D848`).
fn parse_lsn(text: &str) -> Option<u64> {
    let (high, low) = text.split_once('/')?;
    let high = u64::from_str_radix(high, 16).ok()?;
    let low = u64::from_str_radix(low, 16).ok()?;
    Some(high << 32 | low)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::time::{Duration, Instant};

    use super::{behind_for, parse_lsn, Replicas};
    use crate::db::ReadLimits;

    #[test]
    fn wal_positions_read_as_numbers() {
        assert_eq!(parse_lsn("0/16B3748"), Some(0x16B3748));
        assert_eq!(parse_lsn("16/B374D848"), Some(0x16 << 32 | 0xB374D848));
        assert_eq!(parse_lsn("nonsense"), None);
    }

    #[test]
    fn a_replay_is_behind_since_the_primary_first_passed_it() {
        let now = Instant::now();
        let positions: VecDeque<(Instant, u64)> = [
            (now - Duration::from_secs(5), 100),
            (now - Duration::from_secs(3), 200),
            (now - Duration::from_secs(1), 300),
        ]
        .into();
        assert_eq!(behind_for(&positions, 300), Duration::ZERO);
        assert_eq!(behind_for(&positions, u64::MAX), Duration::ZERO);
        let behind = behind_for(&positions, 150);
        assert!(behind >= Duration::from_secs(3) && behind < Duration::from_secs(4));
        assert!(behind_for(&positions, 50) >= Duration::from_secs(5));
    }

    #[tokio::test]
    async fn reads_go_to_the_healthy_replicas_in_turn() {
        let urls: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|h| format!("postgres://app@{h}.example:5432/gate"))
            .collect();
        let replicas = Replicas::new(&urls, ReadLimits::default(), Duration::from_secs(2))
            .expect("pools open on demand");
        assert!(replicas.pick().is_none(), "none is used before it is seen");
        for i in [0, 2] {
            replicas.nodes[i]
                .healthy
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let picked: Vec<usize> = (0..4).filter_map(|_| replicas.pick().map(|(i, _)| i)).collect();
        assert_eq!(picked.len(), 4);
        assert!(picked.iter().all(|i| *i != 1), "{picked:?}");
        assert!(picked.contains(&0) && picked.contains(&2), "{picked:?}");
        assert!(replicas.describe().contains("b.example:5432 (not in use yet)"));
    }
}
