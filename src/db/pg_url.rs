//! A PostgreSQL `databases.main.url` (or replica URL) as the clients other
//! than sqlx take it: `tokio-postgres`' settings, and the single-host URLs
//! of a URL naming several hosts
//! (`postgres://a:5432,b:5432/db?target_session_attrs=read-write`), which
//! sqlx's parser refuses.

use std::time::Duration;

use super::server_url::ServerUrl;
use super::ReadError;

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

/// The client's settings from sqlx's URL: where to connect, who as, and of
/// its parameters `host` (a socket directory), `options`,
/// `application_name`, `sslmode` and `connect_timeout`; sqlx's own ones are
/// left to sqlx. A URL naming several hosts connects to the one that
/// accepts writes.
pub(super) fn client_config(url: &str) -> Result<tokio_postgres::Config, ReadError> {
    let Some(hosts) = Hosts::parse(url) else {
        return single_host(url);
    };
    let mut config = single_host(hosts.url(0))?;
    for i in 1..hosts.len() {
        let other = single_host(hosts.url(i))?;
        if let (Some(host), Some(port)) = (other.get_hosts().first(), other.get_ports().first()) {
            match host {
                tokio_postgres::config::Host::Tcp(name) => config.host(name),
                tokio_postgres::config::Host::Unix(path) => config.host_path(path),
            };
            config.port(*port);
        }
    }
    config.target_session_attrs(tokio_postgres::config::TargetSessionAttrs::ReadWrite);
    Ok(config)
}

fn single_host(url: &str) -> Result<tokio_postgres::Config, ReadError> {
    use tokio_postgres::config::SslMode;
    let url = ServerUrl::parse(url).ok_or_else(|| ReadError::Pool("not a URL".into()))?;
    let mut config = tokio_postgres::Config::new();
    config.host(url.param("host").unwrap_or(if url.host.is_empty() {
        "localhost"
    } else {
        &url.host
    }));
    config.port(
        url.param("port")
            .and_then(|p| p.parse().ok())
            .or(url.port)
            .unwrap_or(5432),
    );
    if let Some(user) = url.param("user").map(str::to_owned).or(url.user.clone()) {
        config.user(user);
    }
    if let Some(password) = url
        .param("password")
        .map(str::to_owned)
        .or(url.password.clone())
    {
        config.password(password);
    }
    if let Some(database) = url
        .param("dbname")
        .map(str::to_owned)
        .or(url.database.clone())
    {
        config.dbname(database);
    }
    if let Some(options) = url.param("options") {
        config.options(options);
    }
    if let Some(name) = url.param("application_name") {
        config.application_name(name);
    }
    if let Some(secs) = url.param("connect_timeout").and_then(|s| s.parse().ok()) {
        config.connect_timeout(Duration::from_secs(secs));
    }
    config.ssl_mode(match url.param("sslmode") {
        Some("disable" | "allow") => SslMode::Disable,
        Some("prefer") | None => SslMode::Prefer,
        Some(_) => SslMode::Require,
    });
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::{client_config, Hosts};

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

    #[test]
    fn a_url_with_several_hosts_connects_where_writes_are_accepted() {
        use tokio_postgres::config::{Host, TargetSessionAttrs};
        let config = client_config(
            "postgres://app:secret@db-a:5432,db-b:5433/gate?target_session_attrs=read-write",
        )
        .expect("several hosts");
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        assert_eq!(hosts, ["db-a", "db-b"]);
        assert_eq!(config.get_ports(), [5432, 5433]);
        assert_eq!(config.get_dbname(), Some("gate"));
        assert_eq!(
            config.get_target_session_attrs(),
            TargetSessionAttrs::ReadWrite
        );
    }
}
