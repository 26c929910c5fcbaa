//! `[ops]` and `[log]`: what an operator's tooling is given (metrics and
//! who may read them) and how the reference host writes its log.

use rocket::figment::Figment;
use serde::Deserialize;

use super::{extract_or, ConfigError};

/// `[ops]` keys: what an operator's tooling is given.
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct OpsSettings {
    /// Count and serve `/metrics` (default on).
    pub metrics: bool,
    /// Networks (CIDRs) whose callers may read `/metrics`, besides loopback.
    pub metrics_allow: Vec<ipnet::IpNet>,
    /// A bearer token that opens `/metrics` to any caller.
    pub metrics_token: Option<secrecy::SecretString>,
    /// A listener of its own serving `/metrics` alone (`0.0.0.0:9464`),
    /// to whoever reaches it.
    pub metrics_address: Option<std::net::SocketAddr>,
    /// Where the reference host exports traces over OTLP/HTTP (protobuf),
    /// as `http://collector:4318`; none: no exporter runs.
    pub otlp_endpoint: Option<String>,
}

impl Default for OpsSettings {
    fn default() -> Self {
        Self {
            metrics: true,
            metrics_allow: Vec::new(),
            metrics_token: None,
            metrics_address: None,
            otlp_endpoint: None,
        }
    }
}

impl std::fmt::Debug for OpsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpsSettings")
            .field("metrics", &self.metrics)
            .field("metrics_allow", &self.metrics_allow)
            .field("metrics_token", &self.metrics_token.as_ref().map(|_| "…"))
            .field("metrics_address", &self.metrics_address)
            .field("otlp_endpoint", &self.otlp_endpoint)
            .finish()
    }
}

/// How the reference host writes its log (`log.format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LogFormat {
    /// One line of text an event (the default).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// `[log]` keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct LogSettings {
    /// `text` or `json`.
    pub format: LogFormat,
}

impl LogSettings {
    /// The `[log]` keys of `figment`.
    pub fn from_figment(figment: &Figment) -> Result<Self, ConfigError> {
        extract_or(figment, "log", LogSettings::default())
    }
}
