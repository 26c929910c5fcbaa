//! Typed configuration read from Rocket's figment (`Rocket.toml`, `ROCKET_*`).
//!
//! Every key of DESIGN.md's configuration section lives here with its default.
//! [`Settings::from_figment`] is the only way in: it rejects a bad value with a
//! message naming the key, so start-up stops before anything is served.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use rocket::figment::Figment;
use serde::Deserialize;
use url::Url;

mod oidc;
mod ops;
mod tokens;
pub use oidc::OidcSettings;
pub use ops::{LogFormat, LogSettings, OpsSettings};
pub use tokens::TokensSettings;

/// `base_url` when none is configured, in the debug profile.
pub const DEBUG_BASE_URL: &str = "http://localhost:8000";
/// `base_url` when none is configured, in any other profile.
pub const RELEASE_BASE_URL: &str = "http://127.0.0.1:8000";

/// The whole Gatehouse configuration, validated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// Absolute origin used for links in mail, OData context and next links.
    pub base_url: Url,
    /// The host's public files (logo lookup).
    pub public_dir: PathBuf,
    /// Replacement screen set, when the host ships its own.
    pub templates_dir: Option<PathBuf>,
    /// Connection URL of the `main` database.
    pub database_url: String,
    /// Session cookie and lifetime settings.
    pub session: SessionSettings,
    /// Sign-in, throttle and password rules.
    pub auth: AuthSettings,
    /// Outgoing mail.
    pub mail: MailSettings,
    /// OData paging and the sets declared in configuration.
    pub odata: ODataSettings,
    /// `[ops]` settings.
    pub ops: OpsSettings,
    /// `[tokens]` settings.
    pub tokens: TokensSettings,
    /// Whether Rocket runs its debug profile (demo account, relaxed secrets).
    pub debug_profile: bool,
}

/// `[session]` keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct SessionSettings {
    /// Cookie name; prefixed with `__Host-` when `base_url` is https.
    pub cookie_name: String,
    /// Idle lifetime of a session.
    pub idle_minutes: u32,
    /// Absolute lifetime of a session, however active.
    pub absolute_hours: u32,
    /// Lifetime of the remember-me cookie.
    pub remember_days: u32,
    /// How long after a recall rotated a remember-me cookie the replaced
    /// validator still signs in, from the same client and device only (a
    /// browser's own parallel requests); later it is taken for a copy.
    pub remember_grace_seconds: u32,
    /// How long a re-authentication (a sign-in by password, passkey or
    /// provider, or `POST /auth/confirm`) lets the account's sensitive
    /// changes go without the password ("sudo mode").
    pub reauth_minutes: u32,
    /// Whether sign-ins offer device-bound sessions (DBSC): the
    /// registration header on every sign-in answer. `false` sends none and
    /// binds nothing.
    pub device_binding: bool,
    /// How long a bound session's bound cookie lives before the browser
    /// proves its key again.
    pub bound_cookie_minutes: u32,
}

impl Default for SessionSettings {
    fn default() -> Self {
        Self {
            cookie_name: "gatehouse_session".into(),
            idle_minutes: 120,
            absolute_hours: 12,
            remember_days: 30,
            remember_grace_seconds: 30,
            reauth_minutes: 10,
            device_binding: true,
            bound_cookie_minutes: 10,
        }
    }
}

/// Password hashing algorithm for new hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum HashAlgorithm {
    /// Argon2id with OWASP parameters (default).
    Argon2id,
    /// bcrypt `$2y$`, for a `users` table shared with a PHP application.
    Bcrypt,
}

/// `[auth]` keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct AuthSettings {
    /// Failures allowed per email + client IP within the window.
    pub throttle_attempts: u32,
    /// Length of the throttle window.
    pub throttle_window_seconds: u32,
    /// Shortest accepted password.
    pub password_min_length: usize,
    /// Lifetime of a password-reset token.
    pub reset_token_minutes: u32,
    /// Quiet period between two reset mails to one address.
    pub reset_throttle_seconds: u32,
    /// Algorithm for new password hashes.
    pub hash: HashAlgorithm,
    /// Proxies whose `X-Forwarded-For` header names the client.
    pub trusted_proxies: Vec<IpAddr>,
    /// Failed sign-ins (and reset requests) per client IP within the
    /// window, over all addresses; 0 turns the budget off.
    pub ip_throttle_attempts: u32,
    /// Sign-ins that may wait for a password hash at once; 0 = unbounded.
    pub hash_queue: u32,
    /// How long the security activity log keeps an event.
    pub security_events_days: u32,
    /// The product's name: passkeys' relying party, mail signatures.
    /// Default: `mail.from`'s display name, else `base_url`'s host.
    pub app_name: Option<String>,
    /// The breached-password filter file: where `gatehouse breached
    /// import` writes and `check` and `verify` read when given no path.
    pub breached_passwords: Option<PathBuf>,
    /// The OpenID providers a user may sign in with, by name
    /// (`[auth.oidc.NAME]`).
    pub oidc: BTreeMap<String, OidcSettings>,
    /// The clients that may ask for a device code (RFC 8628), by
    /// `client_id`, each with the label the `/device` screen shows
    /// (`{ cli = "Command line" }`); none by default.
    pub device_clients: BTreeMap<String, String>,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            throttle_attempts: 5,
            throttle_window_seconds: 60,
            password_min_length: 12,
            reset_token_minutes: 60,
            reset_throttle_seconds: 60,
            hash: HashAlgorithm::Argon2id,
            trusted_proxies: Vec::new(),
            ip_throttle_attempts: 100,
            hash_queue: 64,
            security_events_days: 90,
            app_name: None,
            breached_passwords: None,
            oidc: BTreeMap::new(),
            device_clients: BTreeMap::new(),
        }
    }
}

/// How mail leaves the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MailTransport {
    /// An SMTP relay (`mail.host`, `mail.port`, credentials, `mail.tls`).
    Smtp,
    /// One `.eml` file per message in `mail.dir`.
    File,
    /// Written to the log only.
    Log,
}

/// Transport security towards the SMTP relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MailTls {
    /// Plain connection upgraded with STARTTLS (required).
    Starttls,
    /// TLS from the first byte (SMTPS).
    Tls,
    /// No encryption (a relay on loopback).
    None,
}

/// `[mail]` keys.
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MailSettings {
    /// `smtp`, `file` or `log`.
    pub transport: MailTransport,
    /// Directory of the file transport.
    pub dir: PathBuf,
    /// Sender, as `Name <address>`.
    pub from: String,
    /// SMTP relay host.
    pub host: String,
    /// SMTP relay port (default by `tls`: 587, 465 or 25).
    pub port: Option<u16>,
    /// SMTP user name.
    pub username: Option<String>,
    /// SMTP password.
    pub password: Option<secrecy::SecretString>,
    /// SMTP transport security.
    pub tls: MailTls,
}

impl std::fmt::Debug for MailSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSettings")
            .field("transport", &self.transport)
            .field("dir", &self.dir)
            .field("from", &self.from)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl Default for MailSettings {
    fn default() -> Self {
        Self {
            transport: MailTransport::File,
            dir: PathBuf::from("storage/mail"),
            from: "Gatehouse <no-reply@localhost>".into(),
            host: "localhost".into(),
            port: None,
            username: None,
            password: None,
            tls: MailTls::Starttls,
        }
    }
}

/// The page size when neither the client nor `odata.pagination.default`
/// states one.
pub const DEFAULT_PAGE_SIZE: u64 = 200;

/// `[odata.sets.<Name>]`: one table exposed as an entity set.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SetConfig {
    /// The backing table.
    pub table: String,
    /// The key column (default `id`).
    #[serde(default = "default_key")]
    pub key: String,
    /// Whether guests may read the set.
    #[serde(default)]
    pub public: bool,
    /// Columns `$search` matches against.
    #[serde(default)]
    pub searchable: Vec<String>,
    /// Columns never exposed (nor selected).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// EDM type overrides per column (`price = "Edm.Decimal"`).
    #[serde(default)]
    pub types: BTreeMap<String, String>,
    /// Navigation properties by name.
    #[serde(default)]
    pub navigation: BTreeMap<String, NavigationConfig>,
    /// The recursive hierarchy over the set (UI5's tree tables), if any.
    #[serde(default)]
    pub hierarchy: Option<HierarchyConfig>,
}

/// `hierarchy = { qualifier = "OrgChart", parent = "manager" }`: a
/// recursive hierarchy whose parent is a to-one navigation of the set to
/// itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HierarchyConfig {
    /// The qualifier of its annotations, which `$apply` names.
    pub qualifier: String,
    /// The navigation to each node's parent.
    pub parent: String,
    /// Which nodes are roots (`roots = "null_parent"`); by default
    /// [`Roots::MissingParent`].
    #[serde(default)]
    pub roots: Roots,
}

/// Which nodes of a hierarchy are its roots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Roots {
    /// A node whose parent is NULL, absent, or out of the caller's scope
    /// (an orphan is a root): finding them reads every node in scope.
    #[default]
    MissingParent,
    /// A node whose parent is NULL, and only such a node (an orphan and
    /// its subtree are not shown): found through the parent column's index.
    NullParent,
}

/// One configured navigation: to-one through `column` on this table, or
/// to-many through `remote_column` on the target's table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct NavigationConfig {
    /// The set the navigation leads to.
    pub target: String,
    /// To-one: the foreign-key column on this set's table.
    pub column: Option<String>,
    /// To-many: the column on the target's table holding this set's key.
    pub remote_column: Option<String>,
}

fn default_key() -> String {
    "id".to_owned()
}

/// `[odata]` keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ODataSettings {
    /// Page sizes.
    pub pagination: PaginationSettings,
    /// Tables exposed as entity sets, by set name.
    pub sets: BTreeMap<String, SetConfig>,
    /// An OData statement running longer than this is cancelled (503
    /// `query_timeout`).
    pub statement_timeout_ms: u32,
    /// Database connections OData reads may hold at once; sign-in and
    /// sessions keep the rest of the pool.
    pub max_connections: u32,
    /// Requests one `$batch` may carry; more are refused (400).
    pub batch_max: usize,
    /// PostgreSQL streaming replicas OData reads of host sets are spread
    /// over (URLs as `databases.main.url`); none: the primary serves.
    pub replicas: Vec<String>,
    /// A replica whose replay is further behind the primary than this is
    /// skipped (milliseconds).
    pub max_replica_lag_ms: u64,
}

impl ODataSettings {
    /// What these settings ask of the OData bulk readers.
    pub(crate) fn readers(&self) -> crate::db::ReadersWanted<'_> {
        crate::db::ReadersWanted {
            limits: crate::db::ReadLimits {
                statement_timeout_ms: self.statement_timeout_ms,
                max_connections: self.max_connections,
            },
            replicas: &self.replicas,
            max_replica_lag: std::time::Duration::from_millis(self.max_replica_lag_ms),
        }
    }
}

impl Default for ODataSettings {
    fn default() -> Self {
        Self {
            pagination: PaginationSettings::default(),
            sets: Default::default(),
            statement_timeout_ms: 5000,
            max_connections: 8,
            batch_max: 100,
            replicas: Vec::new(),
            max_replica_lag_ms: 2000,
        }
    }
}

/// `[odata.pagination]` keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct PaginationSettings {
    /// Page size when the client states no preference.
    pub default: u64,
    /// Largest page size served; `None` means no ceiling.
    pub max: Option<u64>,
}

impl Default for PaginationSettings {
    fn default() -> Self {
        Self {
            default: DEFAULT_PAGE_SIZE,
            max: None,
        }
    }
}

/// A configuration value that cannot be used, with the key that holds it.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration `{key}`: {reason}")]
#[non_exhaustive]
pub struct ConfigError {
    /// Dotted key, as written in Rocket.toml.
    pub key: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ConfigError {
    pub(crate) fn new(key: &str, reason: impl Into<String>) -> Self {
        Self {
            key: key.to_owned(),
            reason: reason.into(),
        }
    }
}

impl Settings {
    /// Reads and validates every Gatehouse key from `figment`.
    ///
    /// ```
    /// let figment = rocket::Config::figment()
    ///     .merge(("databases.main.url", "sqlite::memory:"));
    /// let settings = gatehouse::Settings::from_figment(&figment).unwrap();
    /// assert_eq!(settings.auth.throttle_attempts, 5);
    /// ```
    pub fn from_figment(figment: &Figment) -> Result<Self, ConfigError> {
        let debug_profile = figment.profile() == rocket::Config::DEBUG_PROFILE;
        // `localhost` in the debug profile: WebAuthn refuses an IP address,
        // and `cargo run` offers passkeys.
        let default_base_url = if debug_profile {
            DEBUG_BASE_URL
        } else {
            RELEASE_BASE_URL
        };
        let base_url: String = extract_or(figment, "base_url", default_base_url.into())?;
        let base_url = parse_base_url(&base_url)?;
        let public_dir: PathBuf = extract_or(figment, "public_dir", PathBuf::from("public"))?;
        let templates_dir: Option<PathBuf> = extract_or(figment, "templates_dir", None)?;
        let database_url: String = extract_or(
            figment,
            "databases.main.url",
            "sqlite://gatehouse.db?mode=rwc".into(),
        )?;
        let session: SessionSettings = extract_or(figment, "session", SessionSettings::default())?;
        let auth: AuthSettings = extract_or(figment, "auth", AuthSettings::default())?;
        let mail: MailSettings = extract_or(figment, "mail", MailSettings::default())?;
        let odata: ODataSettings = extract_or(figment, "odata", ODataSettings::default())?;
        let ops: OpsSettings = extract_or(figment, "ops", OpsSettings::default())?;
        let tokens: TokensSettings = extract_or(figment, "tokens", TokensSettings::default())?;
        let settings = Self {
            base_url,
            public_dir,
            templates_dir,
            database_url,
            session,
            auth,
            mail,
            odata,
            ops,
            tokens,
            debug_profile,
        };
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("session.idle_minutes", self.session.idle_minutes),
            ("session.absolute_hours", self.session.absolute_hours),
            ("session.remember_days", self.session.remember_days),
            ("session.reauth_minutes", self.session.reauth_minutes),
            (
                "session.bound_cookie_minutes",
                self.session.bound_cookie_minutes,
            ),
            ("auth.throttle_attempts", self.auth.throttle_attempts),
            (
                "auth.throttle_window_seconds",
                self.auth.throttle_window_seconds,
            ),
            ("auth.reset_token_minutes", self.auth.reset_token_minutes),
            ("auth.security_events_days", self.auth.security_events_days),
            (
                "odata.statement_timeout_ms",
                self.odata.statement_timeout_ms,
            ),
            ("odata.max_connections", self.odata.max_connections),
        ];
        for (key, value) in positive {
            if value == 0 {
                return Err(ConfigError::new(key, "must be greater than zero"));
            }
        }
        if self.odata.batch_max == 0 {
            return Err(ConfigError::new(
                "odata.batch_max",
                "must be greater than zero",
            ));
        }
        if self.odata.pagination.default == 0 {
            return Err(ConfigError::new(
                "odata.pagination.default",
                "must be greater than zero",
            ));
        }
        if self.odata.pagination.max == Some(0) {
            return Err(ConfigError::new(
                "odata.pagination.max",
                "must be greater than zero",
            ));
        }
        if !(1..=128).contains(&self.auth.password_min_length) {
            return Err(ConfigError::new(
                "auth.password_min_length",
                "must be between 1 and 128",
            ));
        }
        let name = &self.session.cookie_name;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ConfigError::new(
                "session.cookie_name",
                "must be letters, digits, '_' or '-'",
            ));
        }
        for (name, provider) in &self.auth.oidc {
            provider.validate(name)?;
        }
        for (client_id, label) in &self.auth.device_clients {
            let id_ok = (1..=64).contains(&client_id.len())
                && client_id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !id_ok || label.trim().is_empty() || label.chars().count() > 64 {
                return Err(ConfigError::new(
                    "auth.device_clients",
                    "each client_id must be 1-64 letters, digits, '.', '_' or '-', each label 1-64 characters",
                ));
            }
        }
        if self.mail.from.parse::<lettre::message::Mailbox>().is_err() {
            return Err(ConfigError::new(
                "mail.from",
                "must be an address like `Name <user@example.org>`",
            ));
        }
        if self.mail.transport == MailTransport::Smtp && self.mail.host.trim().is_empty() {
            return Err(ConfigError::new(
                "mail.host",
                "is required for the smtp transport",
            ));
        }
        crate::db::Dialect::from_url(&self.database_url)
            .map_err(|reason| ConfigError::new("databases.main.url", reason))?;
        Ok(())
    }

    /// Whether cookies must carry `Secure` and the `__Host-` prefix.
    pub fn is_https(&self) -> bool {
        self.base_url.scheme() == "https"
    }

    /// `base_url` without a trailing slash, for joining paths.
    pub fn origin(&self) -> &str {
        self.base_url.as_str().trim_end_matches('/')
    }

    /// `auth.app_name`, else [`Self::mail_sender_name`]: signs mails and
    /// names the passkeys' relying party.
    pub fn app_name(&self) -> String {
        self.auth
            .app_name
            .clone()
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| self.mail_sender_name())
    }

    /// The display name of `mail.from` (used to sign mails), else the host name.
    pub fn mail_sender_name(&self) -> String {
        self.mail
            .from
            .parse::<lettre::message::Mailbox>()
            .ok()
            .and_then(|m| m.name)
            .unwrap_or_else(|| self.base_url.host_str().unwrap_or("Gatehouse").to_owned())
    }

    /// `base_url` joined with an absolute path (`/login`).
    pub fn absolute(&self, path: &str) -> String {
        format!("{}{}", self.origin(), path)
    }
}

fn extract_or<T: serde::de::DeserializeOwned>(
    figment: &Figment,
    key: &str,
    default: T,
) -> Result<T, ConfigError> {
    if !figment.contains(key) {
        return Ok(default);
    }
    figment.extract_inner(key).map_err(|e| {
        let inner = e.path.join(".");
        let full = if inner.is_empty() {
            key.to_owned()
        } else if inner.starts_with(key) {
            inner
        } else {
            format!("{key}.{inner}")
        };
        ConfigError::new(&full, e.kind.to_string())
    })
}

fn parse_base_url(raw: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(raw).map_err(|e| ConfigError::new("base_url", e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(ConfigError::new("base_url", "must be an http or https URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::new(
            "base_url",
            "must not carry a query or fragment",
        ));
    }
    Ok(url)
}
