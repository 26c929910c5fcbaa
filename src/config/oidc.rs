//! `[auth.oidc.NAME]`: the OpenID providers a user may sign in with.

use std::fmt;
use std::net::IpAddr;

use serde::Deserialize;
use url::Url;

use super::ConfigError;

/// One OpenID provider, `[auth.oidc.NAME]`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OidcSettings {
    /// The issuer: discovery reads `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    /// The client id registered at the provider.
    pub client_id: String,
    /// The client secret (sent with `client_secret_basic`).
    #[serde(default)]
    pub client_secret: String,
    /// The button's text ("Sign in with LABEL").
    pub label: String,
    /// An image shown on the button (a path or URL), optional.
    #[serde(default)]
    pub logo: Option<String>,
    /// Whether a first sign-in with a verified address in `email_domains`
    /// that no account holds makes an account.
    #[serde(default)]
    pub create_accounts: bool,
    /// The address domains this provider speaks for (required with
    /// `create_accounts`).
    #[serde(default)]
    pub email_domains: Vec<String>,
    /// The scopes asked for.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
}

fn default_scopes() -> Vec<String> {
    ["openid", "email", "profile"].map(str::to_owned).to_vec()
}

impl fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("label", &self.label)
            .field("create_accounts", &self.create_accounts)
            .field("email_domains", &self.email_domains)
            .finish_non_exhaustive()
    }
}

impl OidcSettings {
    /// Whether `email`'s domain is one this provider speaks for.
    pub fn speaks_for(&self, email: &str) -> bool {
        let Some((_, domain)) = email.rsplit_once('@') else {
            return false;
        };
        self.email_domains
            .iter()
            .any(|own| own.eq_ignore_ascii_case(domain))
    }

    /// Checks the provider `name`'s keys, naming the first that is wrong.
    pub(crate) fn validate(&self, name: &str) -> Result<(), ConfigError> {
        let key = |field: &str| format!("auth.oidc.{name}.{field}");
        let name_ok = (1..=32).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !name_ok || name == "links" {
            return Err(ConfigError::new(
                &format!("auth.oidc.{name}"),
                "a provider's name is 1 to 32 of a-z, 0-9, '_' and '-', and not `links`",
            ));
        }
        let issuer = Url::parse(&self.issuer)
            .map_err(|e| ConfigError::new(&key("issuer"), format!("is not a URL: {e}")))?;
        if !secure_enough(&issuer) {
            return Err(ConfigError::new(
                &key("issuer"),
                "must be https (http only on a loopback address)",
            ));
        }
        for (field, value) in [("client_id", &self.client_id), ("label", &self.label)] {
            if value.trim().is_empty() {
                return Err(ConfigError::new(&key(field), "is required"));
            }
        }
        if !self.scopes.iter().any(|s| s == "openid") {
            return Err(ConfigError::new(&key("scopes"), "must hold `openid`"));
        }
        if self.create_accounts && self.email_domains.is_empty() {
            return Err(ConfigError::new(
                &key("email_domains"),
                "is required with create_accounts: the domains this provider speaks for",
            ));
        }
        Ok(())
    }
}

/// An `https` URL, or `http` to a loopback address (a provider on the same
/// machine, as in tests).
fn secure_enough(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
            Some(url::Host::Domain(host)) => host == "localhost",
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acme() -> OidcSettings {
        OidcSettings {
            issuer: "https://id.acme.example".into(),
            client_id: "gatehouse".into(),
            client_secret: "s3cret".into(),
            label: "Acme ID".into(),
            logo: None,
            create_accounts: false,
            email_domains: vec![],
            scopes: default_scopes(),
        }
    }

    #[test]
    fn names_issuers_and_domains_are_checked() {
        assert!(acme().validate("acme").is_ok());
        assert_eq!(acme().validate("Acme").unwrap_err().key, "auth.oidc.Acme");
        assert!(acme().validate(&"a".repeat(33)).is_err());
        let plain = OidcSettings {
            issuer: "http://id.acme.example".into(),
            ..acme()
        };
        assert_eq!(
            plain.validate("acme").unwrap_err().key,
            "auth.oidc.acme.issuer"
        );
        for loopback in [
            "http://127.0.0.1:9000",
            "http://[::1]:9000",
            "http://localhost:9",
        ] {
            let local = OidcSettings {
                issuer: loopback.into(),
                ..acme()
            };
            assert!(local.validate("acme").is_ok(), "{loopback}");
        }
        let creating = OidcSettings {
            create_accounts: true,
            ..acme()
        };
        assert_eq!(
            creating.validate("acme").unwrap_err().key,
            "auth.oidc.acme.email_domains"
        );
    }

    #[test]
    fn the_secret_is_not_in_debug_output_and_domains_match_without_case() {
        assert!(!format!("{:?}", acme()).contains("s3cret"));
        let acme = OidcSettings {
            email_domains: vec!["acme.example".into()],
            ..acme()
        };
        assert!(acme.speaks_for("ada@ACME.example"));
        assert!(!acme.speaks_for("ada@acme.example.evil"));
        assert!(!acme.speaks_for("ada"));
    }
}
