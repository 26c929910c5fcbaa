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

use openidconnect::core::{CoreIdTokenClaims, CoreUserInfoClaims};

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

/// How many characters of a provider's `name` claim are kept (the width of
/// `users.name`).
pub const NAME_CHARS: usize = 255;

/// Who a provider says signed in, from a verified ID token and, for the
/// claims it leaves out, the provider's UserInfo answer about the same
/// `sub`: made only by [`Provider::finish`] (its fields are private), so no
/// other code can name an account by a provider's word that was not
/// checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    issuer: String,
    subject: String,
    email: Option<String>,
    email_verified: Option<bool>,
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
        self.email_verified == Some(true)
    }

    /// `name`, when given: at most [`NAME_CHARS`] characters.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// `auth_time`, Unix seconds, when given.
    pub fn auth_time(&self) -> Option<i64> {
        self.auth_time
    }

    /// The identity a verified ID token's `claims` state.
    pub fn of(claims: &CoreIdTokenClaims) -> Self {
        Self {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified(),
            name: claims.name().and_then(|n| n.get(None)).map(|n| cut(n)),
            auth_time: claims.auth_time().map(|t| t.timestamp()),
        }
    }

    /// Whether the ID token left out a claim an account is made from
    /// (`email`, `email_verified`, `name`).
    pub fn lacks_profile(&self) -> bool {
        self.email.is_none() || self.email_verified.is_none() || self.name.is_none()
    }

    /// Fills what the ID token left out from the provider's UserInfo
    /// answer about the same `sub` (`openidconnect` compared it). An
    /// address and whether it is verified come together: `email_verified`
    /// is taken from UserInfo only for the address it states.
    pub fn fill_from(&mut self, user_info: &CoreUserInfoClaims) {
        let stated = user_info.email().map(|e| e.to_string());
        match (&self.email, stated) {
            (None, Some(email)) => {
                self.email = Some(email);
                self.email_verified = user_info.email_verified();
            }
            (Some(ours), Some(email)) if *ours == email && self.email_verified.is_none() => {
                self.email_verified = user_info.email_verified();
            }
            _ => {}
        }
        if self.name.is_none() {
            self.name = user_info.name().and_then(|n| n.get(None)).map(|n| cut(n));
        }
    }
}

/// `name` cut to [`NAME_CHARS`] characters.
fn cut(name: &str) -> String {
    name.chars().take(NAME_CHARS).collect()
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

    /// Discovers every provider now, each within `within`: by name, `Ok`
    /// or why not.
    pub async fn discover_now(
        &self,
        within: std::time::Duration,
    ) -> Vec<(String, Result<(), String>)> {
        let mut found = Vec::with_capacity(self.providers.len());
        for (name, provider) in &self.providers {
            let answer = match tokio::time::timeout(within, provider.discover()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", within.as_secs())),
            };
            found.push((name.clone(), answer));
        }
        found
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn id_token(extra: Value) -> CoreIdTokenClaims {
        let mut claims = json!({"iss": "https://id.example", "sub": "s-1", "aud": ["gh"],
                                "exp": 2_000_000_000, "iat": 1_900_000_000});
        claims.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(claims).expect("claims")
    }

    fn user_info(claims: Value) -> CoreUserInfoClaims {
        CoreUserInfoClaims::from_json::<std::io::Error>(claims.to_string().as_bytes(), None)
            .expect("UserInfo claims")
    }

    #[test]
    fn a_thin_id_token_is_filled_from_user_info() {
        let mut identity = Identity::of(&id_token(json!({})));
        assert!(identity.lacks_profile());
        identity.fill_from(&user_info(json!({"sub": "s-1", "email": "ada@acme.example",
                                             "email_verified": true, "name": "Ada"})));
        assert_eq!(identity.email(), Some("ada@acme.example"));
        assert!(identity.email_verified());
        assert_eq!(identity.name(), Some("Ada"));
        assert!(!identity.lacks_profile());
    }

    #[test]
    fn the_id_tokens_own_claims_win_and_verification_goes_with_its_address() {
        let claims = json!({"email": "ada@acme.example", "name": "Ada"});
        let mut identity = Identity::of(&id_token(claims));
        identity.fill_from(&user_info(json!({"sub": "s-1", "email": "eve@acme.example",
                                             "email_verified": true, "name": "Eve"})));
        assert_eq!(identity.email(), Some("ada@acme.example"));
        assert!(!identity.email_verified(), "verified for another address");
        assert_eq!(identity.name(), Some("Ada"));
    }

    #[test]
    fn a_name_is_cut_to_the_column() {
        let long = "n".repeat(5_000);
        let identity = Identity::of(&id_token(json!({"name": long})));
        assert_eq!(identity.name().map(|n| n.chars().count()), Some(NAME_CHARS));
        let mut thin = Identity::of(&id_token(json!({})));
        thin.fill_from(&user_info(json!({"sub": "s-1", "name": "ü".repeat(300)})));
        assert_eq!(thin.name().map(|n| n.chars().count()), Some(NAME_CHARS));
    }
}
