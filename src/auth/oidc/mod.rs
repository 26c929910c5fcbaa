//! Sign-in with OpenID providers (`[auth.oidc.NAME]`), through
//! `openidconnect`: each provider discovered in the background
//! (`provider.rs`) and the links between a provider's accounts and users
//! (`links.rs`). A flow's secrets are kept in the session by
//! `routes/oidc_flow.rs`; whose account a verified identity signs in is
//! decided in `routes/oidc.rs`, by the order DESIGN.md gives.

mod links;
mod provider;

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use links::{Link, LinkError, Links};
pub(crate) use provider::{Callback, Provider, FLOW_SECONDS};

use openidconnect::core::CoreIdTokenClaims;

use crate::config::Settings;

/// Why a flow did not end in a verified identity.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OidcError {
    /// The provider's discovery document is not there yet (it cannot be
    /// reached); tried again at most once a minute.
    #[error("the provider cannot be reached")]
    Unavailable,
    /// The provider's answer, or its ID token, was refused (the detail is
    /// logged, never shown).
    #[error("{0}")]
    Refused(String),
}

/// Who a provider says signed in, from a verified ID token: made only by
/// [`Provider::finish`] (its fields are private), so no other code can
/// name an account by a provider's word that was not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    issuer: String,
    subject: String,
    email: Option<String>,
    email_verified: bool,
    name: Option<String>,
    auth_time: Option<i64>,
}

impl Identity {
    /// `iss`.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// `sub`.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// `email`, when given.
    pub fn email(&self) -> Option<&str> {
        self.email.as_deref()
    }

    /// Whether `email_verified` is true.
    pub fn email_verified(&self) -> bool {
        self.email_verified
    }

    /// `name`, when given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// `auth_time`, Unix seconds, when given.
    pub fn auth_time(&self) -> Option<i64> {
        self.auth_time
    }

    fn of(claims: &CoreIdTokenClaims) -> Self {
        Self {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified() == Some(true),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.to_string()),
            auth_time: claims.auth_time().map(|t| t.timestamp()),
        }
    }
}

/// The configured providers, by name.
#[derive(Clone, Default)]
pub struct Oidc {
    providers: BTreeMap<String, Arc<Provider>>,
}

impl Oidc {
    /// The providers of `settings`; nothing is fetched yet.
    pub fn new(settings: &Settings) -> Result<Self, String> {
        let mut providers = BTreeMap::new();
        for (name, provider) in &settings.auth.oidc {
            let callback = settings.absolute(&format!("/auth/oidc/{name}/callback"));
            let provider = Provider::new(name, provider, callback)
                .map_err(|e| format!("`auth.oidc.{name}`: {e}"))?;
            providers.insert(name.clone(), Arc::new(provider));
        }
        Ok(Self { providers })
    }

    /// The provider called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Provider>> {
        self.providers.get(name)
    }

    /// Every provider, by name.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<Provider>> {
        self.providers.values()
    }

    /// The origins a browser is sent to for a sign-in: each provider's
    /// issuer and, once discovered, its authorization endpoint.
    pub fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = self.providers.values().flat_map(|p| p.origins()).collect();
        origins.sort();
        origins.dedup();
        origins
    }

    /// Discovers every provider in the background: start-up never waits on
    /// one, and one that cannot be reached is logged and tried again.
    pub fn discover_in_background(&self) {
        for provider in self.providers.values() {
            let provider = Arc::clone(provider);
            tokio::spawn(async move {
                while provider.discover().await.is_err() {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                }
            });
        }
    }
}
