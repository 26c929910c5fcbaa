//! The writable server among several PostgreSQL hosts
//! (`postgres://a:5432,b:5432/db?target_session_attrs=read-write`).
//!
//! sqlx takes one host, so Gatehouse finds the one that accepts writes and
//! hands sqlx its single-host URL. A watcher asks that server every half
//! second whether it still does (`pg_is_in_recovery()`); when it does not
//! answer, or answers that it is a standby, the primary is lost: every
//! statement still waiting for a connection ends at once (503 with
//! `Retry-After`, never the pool's 10 s timeout), new ones are refused the
//! same way — one that holds its connection runs to its end, so a commit in
//! flight is never cut off — and the hosts are asked in turn every quarter
//! second until one accepts writes.
//! The pool then opens its connections there; no restart is needed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::any::AnyConnectOptions;
use sqlx::AnyPool;
use tokio::sync::{watch, Notify};

use super::pg_asker::Asker;
use super::pg_url::Hosts;

/// How often the primary is asked whether it still accepts writes.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How often the hosts are asked while none is known to accept writes.
const SEARCH_EVERY: Duration = Duration::from_millis(250);

/// The first of `hosts` that accepts writes, asked in order.
pub(crate) async fn find_writable(hosts: &Hosts) -> Option<usize> {
    for i in 0..hosts.len() {
        if Asker::new(hosts.url(i)).accepts_writes().await == Some(true) {
            return Some(i);
        }
    }
    None
}

/// Which host accepts writes, as the watcher last found.
pub(crate) struct Primary {
    hosts: Hosts,
    /// The host accepting writes; `None` while none is known.
    state: watch::Sender<Option<usize>>,
    /// Wakes the watcher when a statement saw the database unreachable.
    wake: Notify,
    /// How many times a host was found accepting writes after none was.
    failovers: AtomicU64,
}

impl Primary {
    /// The hosts, with host `found` accepting writes.
    pub(crate) fn new(hosts: Hosts, found: usize) -> Primary {
        Primary {
            hosts,
            state: watch::Sender::new(Some(found)),
            wake: Notify::new(),
            failovers: AtomicU64::new(0),
        }
    }

    /// How many times a host was found accepting writes after none was.
    pub(crate) fn failovers(&self) -> u64 {
        self.failovers.load(Ordering::Relaxed)
    }

    /// Whether a host is known to accept writes.
    pub(crate) fn is_known(&self) -> bool {
        self.state.borrow().is_some()
    }

    /// Resolves when no host is known to accept writes.
    pub(crate) async fn lost(&self) {
        let mut state = self.state.subscribe();
        let _ = state.wait_for(Option::is_none).await;
    }

    /// Asks the watcher to look at the primary now.
    pub(crate) fn suspect(&self) {
        self.wake.notify_one();
    }

    /// Watches the primary for as long as `pool` is open, pointing the
    /// pool at the host that accepts writes.
    pub(crate) async fn watch(self: std::sync::Arc<Self>, pool: AnyPool) {
        // Asks the host last found accepting writes.
        let mut asker: Option<Asker> = None;
        while !pool.is_closed() {
            let current = *self.state.borrow();
            let Some(at) = current else {
                match find_writable(&self.hosts).await {
                    Some(found) => {
                        if let Ok(options) = self.hosts.url(found).parse::<AnyConnectOptions>() {
                            pool.set_connect_options(options);
                            self.state.send_replace(Some(found));
                            self.failovers.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(
                                "database: {} accepts writes; it is the primary now",
                                self.hosts.label(found)
                            );
                        }
                    }
                    None => tokio::time::sleep(SEARCH_EVERY).await,
                }
                continue;
            };
            let answered = asker
                .get_or_insert_with(|| Asker::new(self.hosts.url(at)))
                .accepts_writes()
                .await;
            if answered == Some(true) {
                tokio::select! {
                    _ = tokio::time::sleep(WATCH_EVERY) => {}
                    _ = self.wake.notified() => {}
                }
                continue;
            }
            asker = None;
            self.state.send_replace(None);
            tracing::warn!(
                "database: the primary {} {}; requests answer 503 until a host accepts writes",
                self.hosts.label(at),
                match answered {
                    Some(_) => "is a standby now",
                    None => "does not answer",
                }
            );
        }
    }
}
