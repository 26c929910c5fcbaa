//! The writable server among several PostgreSQL hosts
//! (`postgres://a:5432,b:5432/db?target_session_attrs=read-write`).
//!
//! sqlx takes one host, so Gatehouse finds the one that accepts writes and
//! hands sqlx its single-host URL. A watcher asks that server every half
//! second whether it still does (`pg_is_in_recovery()`); when it does not
//! answer, or answers that it is a standby, the primary is lost: every
//! statement waiting on the pool ends at once (503 with `Retry-After`, never
//! the pool's 10 s timeout), new ones are refused the same way, and the
//! hosts are asked in turn every quarter second until one accepts writes.
//! The pool then opens its connections there; no restart is needed.

use std::time::Duration;

use sqlx::any::AnyConnectOptions;
use sqlx::AnyPool;
use tokio::sync::{watch, Notify};
use tokio_postgres::NoTls;

use super::pg_url::{client_config, Hosts};

/// How often the primary is asked whether it still accepts writes.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How often the hosts are asked while none is known to accept writes.
const SEARCH_EVERY: Duration = Duration::from_millis(250);

/// How long one question to one host may take.
const ASK_WITHIN: Duration = Duration::from_secs(1);

/// The first of `hosts` that accepts writes, asked in order.
pub(crate) async fn find_writable(hosts: &Hosts) -> Option<usize> {
    for i in 0..hosts.len() {
        if accepts_writes(hosts.url(i)).await {
            return Some(i);
        }
    }
    None
}

/// Whether the server at `url` answers within a second that it is not a
/// standby.
async fn accepts_writes(url: &str) -> bool {
    let Ok(mut config) = client_config(url) else {
        return false;
    };
    config.connect_timeout(ASK_WITHIN);
    let asked = tokio::time::timeout(ASK_WITHIN * 2, async {
        let (client, connection) = config.connect(NoTls).await.ok()?;
        tokio::spawn(connection);
        is_primary(&client).await
    });
    asked.await.ok().flatten() == Some(true)
}

/// Whether `client`'s server is not in recovery; `None` when it did not
/// answer.
async fn is_primary(client: &tokio_postgres::Client) -> Option<bool> {
    let asked = client.simple_query("SELECT pg_is_in_recovery()::text");
    let rows = tokio::time::timeout(ASK_WITHIN, asked).await.ok()?.ok()?;
    rows.iter().find_map(|message| match message {
        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(|v| v == "false"),
        _ => None,
    })
}

/// Which host accepts writes, as the watcher last found.
pub(crate) struct Primary {
    hosts: Hosts,
    /// The host accepting writes; `None` while none is known.
    state: watch::Sender<Option<usize>>,
    /// Wakes the watcher when a statement saw the database unreachable.
    wake: Notify,
}

impl Primary {
    /// The hosts, with host `found` accepting writes.
    pub(crate) fn new(hosts: Hosts, found: usize) -> Primary {
        Primary {
            hosts,
            state: watch::Sender::new(Some(found)),
            wake: Notify::new(),
        }
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
        let mut client: Option<tokio_postgres::Client> = None;
        while !pool.is_closed() {
            let current = *self.state.borrow();
            let Some(at) = current else {
                match find_writable(&self.hosts).await {
                    Some(found) => {
                        if let Ok(options) = self.hosts.url(found).parse::<AnyConnectOptions>() {
                            pool.set_connect_options(options);
                            self.state.send_replace(Some(found));
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
            if client.as_ref().is_none_or(|c| c.is_closed()) {
                client = connect(self.hosts.url(at)).await;
            }
            let answered = match &client {
                Some(c) => is_primary(c).await,
                None => None,
            };
            if answered == Some(true) {
                tokio::select! {
                    _ = tokio::time::sleep(WATCH_EVERY) => {}
                    _ = self.wake.notified() => {}
                }
                continue;
            }
            client = None;
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

/// A connection for the watcher's questions.
async fn connect(url: &str) -> Option<tokio_postgres::Client> {
    let mut config = client_config(url).ok()?;
    config.connect_timeout(ASK_WITHIN);
    let (client, connection) = tokio::time::timeout(ASK_WITHIN * 2, config.connect(NoTls))
        .await
        .ok()?
        .ok()?;
    tokio::spawn(connection);
    Some(client)
}
