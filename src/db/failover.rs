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

use super::postgres::client_config;

/// How often the primary is asked whether it still accepts writes.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How often the hosts are asked while none is known to accept writes.
const SEARCH_EVERY: Duration = Duration::from_millis(250);

/// How long one question to one host may take.
const ASK_WITHIN: Duration = Duration::from_secs(1);

/// The hosts of a URL naming several, each as a single-host URL.
#[derive(Clone)]
pub(crate) struct Hosts {
    /// The URL for each host, in the order given (never printed: it may
    /// hold a password).
    urls: Vec<String>,
    /// `host:port` of each, for logs.
    labels: Vec<String>,
}

impl Hosts {
    /// The hosts `url` names, when it names more than one.
    pub(crate) fn parse(url: &str) -> Option<Hosts> {
        let (scheme, rest) = url.split_once("://")?;
        if !scheme.starts_with("postgres") {
            return None;
        }
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (user, hosts) = match authority.rsplit_once('@') {
            Some((user, hosts)) => (format!("{user}@"), hosts),
            None => (String::new(), authority),
        };
        if !hosts.contains(',') {
            return None;
        }
        let tail = without_param(tail, "target_session_attrs");
        let labels: Vec<String> = hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
            .collect();
        let urls = labels
            .iter()
            .map(|host| format!("{scheme}://{user}{host}{tail}"))
            .collect();
        Some(Hosts { urls, labels })
    }

    /// How many hosts there are.
    pub(crate) fn len(&self) -> usize {
        self.urls.len()
    }

    /// The single-host URL of host `i`.
    pub(crate) fn url(&self, i: usize) -> &str {
        &self.urls[i]
    }

    /// `host:port` of host `i`.
    pub(crate) fn label(&self, i: usize) -> &str {
        &self.labels[i]
    }

    /// The first host that accepts writes, asked in order.
    pub(crate) async fn find_writable(&self) -> Option<usize> {
        for i in 0..self.len() {
            if accepts_writes(self.url(i)).await {
                return Some(i);
            }
        }
        None
    }
}

/// `tail` (`/db?a=1&b=2`) without query parameter `key`.
fn without_param(tail: &str, key: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| pair.split('=').next() != Some(key))
        .collect();
    match kept.is_empty() {
        true => path.to_owned(),
        false => format!("{path}?{}", kept.join("&")),
    }
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
                match self.hosts.find_writable().await {
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

#[cfg(test)]
mod tests {
    use super::Hosts;

    #[test]
    fn a_url_with_several_hosts_becomes_one_url_per_host() {
        let hosts = Hosts::parse(
            "postgres://app:pw@a.example:5432,b.example:5433/gate?target_session_attrs=read-write&sslmode=disable",
        )
        .expect("several hosts");
        assert_eq!(hosts.len(), 2);
        assert_eq!(hosts.url(0), "postgres://app:pw@a.example:5432/gate?sslmode=disable");
        assert_eq!(hosts.url(1), "postgres://app:pw@b.example:5433/gate?sslmode=disable");
        assert_eq!(hosts.label(1), "b.example:5433");
        let bare = Hosts::parse("postgres://a:1,b:2/db?target_session_attrs=read-write").expect("two");
        assert_eq!(bare.url(0), "postgres://a:1/db");
    }

    #[test]
    fn a_url_with_one_host_or_another_engine_is_left_alone() {
        assert!(Hosts::parse("postgres://app@a.example:5432/gate").is_none());
        assert!(Hosts::parse("mysql://root@a:3306,b:3306/db").is_none());
        assert!(Hosts::parse("sqlite://x.db").is_none());
    }
}
