//! A server engine's `databases.main.url` taken apart for the bulk-read
//! clients. The URL is written for sqlx (docs/databases.md, "Databases"), whose query
//! parameters the other clients do not all know; each takes from this only
//! what it needs, so a URL sqlx accepts never stops the reads from starting.

use percent_encoding::percent_decode_str;

/// The parts of `postgres://user:password@host:port/db?key=value…` or
/// `mysql://…`, percent-decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// The host name or address; empty when the URL names none.
    pub host: String,
    /// The port, when given.
    pub port: Option<u16>,
    /// The user, when given.
    pub user: Option<String>,
    /// The password, when given.
    pub password: Option<String>,
    /// The database, when given.
    pub database: Option<String>,
    /// The query parameters, in order.
    pub params: Vec<(String, String)>,
}

impl std::fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerUrl")
            .field("host", &self.host)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl ServerUrl {
    /// Takes `url` apart; `None` when it is not a URL.
    pub fn parse(url: &str) -> Option<ServerUrl> {
        let parsed = url::Url::parse(url).ok()?;
        let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
        let host = parsed.host_str().unwrap_or_default();
        // An IPv6 address comes bracketed.
        let host = host.trim_start_matches('[').trim_end_matches(']');
        Some(ServerUrl {
            host: decode(host),
            port: parsed.port(),
            user: Some(decode(parsed.username())).filter(|u| !u.is_empty()),
            password: parsed.password().map(decode),
            database: Some(decode(parsed.path().trim_start_matches('/'))).filter(|d| !d.is_empty()),
            params: parsed.query_pairs().into_owned().collect(),
        })
    }

    /// The value of query parameter `key` (the last, if repeated).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ServerUrl;

    #[test]
    fn a_url_comes_apart_decoded_with_its_parameters() {
        let url = ServerUrl::parse(
            "postgres://app%40x:p%2Fw@db.example:6432/gate%20house?options=-c%20search_path%3Ds&sslmode=prefer",
        )
        .expect("a URL");
        assert_eq!(url.host, "db.example");
        assert_eq!(url.port, Some(6432));
        assert_eq!(url.user.as_deref(), Some("app@x"));
        assert_eq!(url.password.as_deref(), Some("p/w"));
        assert_eq!(url.database.as_deref(), Some("gate house"));
        assert_eq!(url.param("options"), Some("-c search_path=s"));
        assert_eq!(url.param("sslmode"), Some("prefer"));
        assert_eq!(url.param("missing"), None);
    }

    #[test]
    fn a_url_without_user_port_or_database_has_none_of_them() {
        let url = ServerUrl::parse("mysql://localhost").expect("a URL");
        assert_eq!(url.host, "localhost");
        assert_eq!(
            (url.port, url.user, url.password, url.database),
            (None, None, None, None)
        );
        assert!(ServerUrl::parse("not a url").is_none());
    }

    #[test]
    fn its_debug_form_never_shows_the_password() {
        let url = ServerUrl::parse("mysql://root:hunter2@h/db").expect("a URL");
        assert!(!format!("{url:?}").contains("hunter2"));
    }
}
