//! One configured OpenID provider: its discovery document and keys, found
//! in the background and found again when a token names a key it does not
//! publish yet, and the checks `openidconnect` leaves to its caller.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreClaimName, CoreClaimType, CoreClient,
    CoreClientAuthMethod, CoreGrantType, CoreIdTokenClaims, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm, CoreJwsSigningAlgorithm,
    CoreResponseMode, CoreResponseType, CoreSubjectIdentifierType, CoreUserInfoClaims,
};
use openidconnect::{
    reqwest, AdditionalProviderMetadata, AuthenticationFlow, AuthorizationCode,
    ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, IssuerUrl, JsonWebKeySet, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, ProviderMetadata, RedirectUrl, Scope,
    OAuth2TokenResponse, SignatureVerificationError, TokenResponse,
};
use serde::{Deserialize, Serialize};

use super::{Identity, OidcError};
use crate::config::OidcSettings;

/// How long an outbound call to a provider may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The least time between two discoveries, or two key fetches, of one
/// provider.
const RETRY_AFTER: Duration = Duration::from_secs(60);
/// How long a flow waits for its callback: an ID token issued earlier than
/// that (and the skew) cannot be its answer.
pub const FLOW_SECONDS: i64 = 10 * 60;
/// How far a token's times may be from ours.
const SKEW_SECONDS: i64 = 5 * 60;

/// RFC 9207's field of the discovery document.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub(super) struct Rfc9207 {
    #[serde(default)]
    authorization_response_iss_parameter_supported: bool,
}

impl AdditionalProviderMetadata for Rfc9207 {}

/// A provider's discovery document, its keys included.
type Metadata = ProviderMetadata<
    Rfc9207,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

/// What discovery found, and when it or a key fetch last went out.
#[derive(Default)]
struct Found {
    metadata: Option<Arc<Metadata>>,
    discovered_at: Option<Instant>,
    /// When a token's unknown key id last made us fetch the keys again.
    keys_fetched_at: Option<Instant>,
}

/// A flow's secrets, made when it begins and kept in the session.
pub(crate) struct Begun {
    /// The provider's authorization URL to send the browser to.
    pub url: String,
    /// The `state` sent.
    pub state: String,
    /// The `nonce` sent.
    pub nonce: String,
    /// PKCE's verifier of the challenge sent.
    pub verifier: String,
}

/// What the provider's redirect back carried.
pub(crate) struct Callback<'a> {
    /// The authorization code.
    pub code: &'a str,
    /// RFC 9207's `iss`, when sent.
    pub iss: Option<&'a str>,
}

/// One configured provider.
pub(crate) struct Provider {
    /// The configuration's NAME.
    pub name: String,
    /// Its keys.
    pub settings: OidcSettings,
    issuer: IssuerUrl,
    redirect: RedirectUrl,
    http: reqwest::Client,
    found: RwLock<Found>,
    /// One discovery at a time.
    discovering: tokio::sync::Mutex<()>,
    /// One key fetch at a time.
    fetching: Mutex<()>,
}

impl Provider {
    /// The provider `name` of `settings`, answering at `callback` (an
    /// absolute URL); nothing is fetched yet.
    pub fn new(name: &str, settings: &OidcSettings, callback: String) -> Result<Self, String> {
        let issuer = IssuerUrl::new(settings.issuer.clone()).map_err(|e| e.to_string())?;
        let redirect = RedirectUrl::new(callback).map_err(|e| e.to_string())?;
        let http = reqwest::ClientBuilder::new()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            name: name.to_owned(),
            settings: settings.clone(),
            issuer,
            redirect,
            http,
            found: RwLock::default(),
            discovering: tokio::sync::Mutex::new(()),
            fetching: Mutex::new(()),
        })
    }

    /// Where a browser goes for this provider's sign-in: the issuer's
    /// origin and, once discovered, its authorization endpoint's.
    pub fn origins(&self) -> Vec<String> {
        let issuer = self.issuer.url().origin().ascii_serialization();
        let endpoint = self
            .metadata()
            .map(|m| m.authorization_endpoint().url().origin().ascii_serialization());
        std::iter::once(issuer).chain(endpoint).collect()
    }

    fn metadata(&self) -> Option<Arc<Metadata>> {
        self.found.read().ok()?.metadata.clone()
    }

    /// The discovery document, fetched now if it is missing and the last
    /// try is a minute old; `Unavailable` otherwise.
    async fn ready(&self) -> Result<Arc<Metadata>, OidcError> {
        if let Some(metadata) = self.metadata() {
            return Ok(metadata);
        }
        self.discover().await
    }

    /// Fetches the discovery document and keys (at most once a minute).
    pub(super) async fn discover(&self) -> Result<Arc<Metadata>, OidcError> {
        let _one = self.discovering.lock().await;
        if let Some(metadata) = self.metadata() {
            return Ok(metadata);
        }
        let recent = self
            .found
            .read()
            .ok()
            .and_then(|f| f.discovered_at)
            .is_some_and(|at| at.elapsed() < RETRY_AFTER);
        if recent {
            return Err(OidcError::Unavailable);
        }
        if let Ok(mut found) = self.found.write() {
            found.discovered_at = Some(Instant::now());
        }
        match Metadata::discover_async(self.issuer.clone(), &self.http).await {
            Ok(metadata) => {
                let metadata = Arc::new(metadata);
                if let Ok(mut found) = self.found.write() {
                    found.metadata = Some(metadata.clone());
                }
                tracing::info!(provider = %self.name, "OpenID provider discovered");
                Ok(metadata)
            }
            Err(e) => {
                tracing::warn!(provider = %self.name, error = %e, "OpenID provider not reachable; retried in a minute");
                Err(OidcError::Unavailable)
            }
        }
    }

    fn client(
        &self,
        metadata: &Metadata,
    ) -> CoreClient<
        openidconnect::EndpointSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointMaybeSet,
        openidconnect::EndpointMaybeSet,
    > {
        let secret = Some(ClientSecret::new(self.settings.client_secret.clone()))
            .filter(|s| !s.secret().is_empty());
        CoreClient::from_provider_metadata(
            metadata.clone(),
            ClientId::new(self.settings.client_id.clone()),
            secret,
        )
        .set_redirect_uri(self.redirect.clone())
    }

    /// A new flow: the authorization URL (code flow, PKCE S256, `state`,
    /// `nonce`, `response_mode=query`) and the secrets to keep. With
    /// `fresh`, the provider is asked to sign the person in again
    /// (`prompt=login`, `max_age=0`).
    pub async fn begin(&self, fresh: bool) -> Result<Begun, OidcError> {
        let metadata = self.ready().await?;
        let client = self.client(&metadata);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge)
            .add_extra_param("response_mode", "query");
        for scope in self.settings.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        if fresh {
            request = request
                .add_prompt(CoreAuthPrompt::Login)
                .set_max_age(Duration::ZERO);
        }
        let (url, state, nonce) = request.url();
        Ok(Begun {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges the code of `callback` (once) and checks its ID token:
    /// RFC 9207's `iss` first, then the signature (the provider's asymmetric
    /// algorithms only; the keys fetched again once on an unknown key id),
    /// `iss`, `aud`, `azp`, `exp`, `iat` and `nonce`. Claims the ID token
    /// leaves out (`email`, `email_verified`, `name`: for the code flow
    /// OpenID Connect Core 5.4 gives the scopes' claims at UserInfo) are
    /// read from the UserInfo endpoint with the access token, whose answer
    /// must name the same `sub`.
    pub async fn finish(
        &self,
        callback: Callback<'_>,
        nonce: &str,
        verifier: &str,
    ) -> Result<Identity, OidcError> {
        let metadata = self.ready().await?;
        let advertised = metadata
            .additional_metadata()
            .authorization_response_iss_parameter_supported;
        match callback.iss {
            Some(iss) if iss != metadata.issuer().as_str() => {
                return Err(OidcError::Refused("the iss response parameter names another issuer".into()))
            }
            None if advertised => {
                return Err(OidcError::Refused("the iss response parameter is missing".into()))
            }
            _ => {}
        }
        let client = self.client(&metadata);
        let response = client
            .exchange_code(AuthorizationCode::new(callback.code.to_owned()))
            .map_err(|e| OidcError::Refused(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
            .request_async(&self.http)
            .await
            .map_err(|e| OidcError::Refused(format!("the token request failed: {e}")))?;
        let token = response
            .id_token()
            .ok_or_else(|| OidcError::Refused("no ID token".into()))?;
        let nonce = Nonce::new(nonce.to_owned());
        let claims = match self.verified(&metadata, token, &nonce) {
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => {
                let metadata = self.fetch_keys(&metadata).await?;
                self.verified(&metadata, token, &nonce)
            }
            other => other,
        }
        .map_err(|e| OidcError::Refused(format!("the ID token was refused: {e}")))?;
        self.authorized_party(&claims)?;
        let mut identity = Identity::of(&claims);
        if identity.lacks_profile() {
            let access_token = response.access_token().clone();
            let client = self.client(&metadata);
            if let Ok(request) = client.user_info(access_token, Some(claims.subject().clone())) {
                let user_info: CoreUserInfoClaims = request
                    .request_async(&self.http)
                    .await
                    .map_err(|e| OidcError::Refused(format!("the UserInfo request failed: {e}")))?;
                identity.fill_from(&user_info);
            }
        }
        Ok(identity)
    }

    fn verified(
        &self,
        metadata: &Metadata,
        token: &openidconnect::core::CoreIdToken,
        nonce: &Nonce,
    ) -> Result<CoreIdTokenClaims, ClaimsVerificationError> {
        let client = self.client(metadata);
        let allowed: Vec<CoreJwsSigningAlgorithm> = metadata
            .id_token_signing_alg_values_supported()
            .iter()
            .filter(|alg| asymmetric(alg))
            .cloned()
            .collect();
        let verifier = client
            .id_token_verifier()
            .set_allowed_algs(allowed)
            .set_time_fn(|| chrono::Utc::now() - chrono::Duration::seconds(SKEW_SECONDS))
            .set_issue_time_verifier_fn(|iat| {
                let now = chrono::Utc::now();
                let skew = chrono::Duration::seconds(SKEW_SECONDS);
                if iat > now + skew {
                    return Err(format!("issued in the future ({iat})"));
                }
                if iat < now - skew - chrono::Duration::seconds(FLOW_SECONDS) {
                    return Err(format!("issued too long ago ({iat})"));
                }
                Ok(())
            });
        token.claims(&verifier, nonce).cloned()
    }

    /// The keys again, when a token names one not among them (at most once
    /// a minute).
    async fn fetch_keys(&self, metadata: &Metadata) -> Result<Arc<Metadata>, OidcError> {
        let recent = {
            let _one = self.fetching.lock();
            let mut found = self.found.write().map_err(|_| OidcError::Unavailable)?;
            let recent = found
                .keys_fetched_at
                .is_some_and(|at| at.elapsed() < RETRY_AFTER);
            if !recent {
                found.keys_fetched_at = Some(Instant::now());
            }
            recent
        };
        if recent {
            return Err(OidcError::Refused("the ID token names an unknown key".into()));
        }
        let keys = JsonWebKeySet::fetch_async(metadata.jwks_uri(), &self.http)
            .await
            .map_err(|e| OidcError::Refused(format!("the keys could not be fetched: {e}")))?;
        let metadata = Arc::new(metadata.clone().set_jwks(keys));
        if let Ok(mut found) = self.found.write() {
            found.metadata = Some(metadata.clone());
        }
        Ok(metadata)
    }

    /// `azp`, which `openidconnect` leaves unchecked: present when the
    /// token has several audiences, and our client id when present.
    fn authorized_party(&self, claims: &CoreIdTokenClaims) -> Result<(), OidcError> {
        let ours = self.settings.client_id.as_str();
        match claims.authorized_party() {
            Some(azp) if azp.as_str() != ours => Err(OidcError::Refused(
                "the ID token's azp is another client".into(),
            )),
            None if claims.audiences().len() > 1 => Err(OidcError::Refused(
                "the ID token has several audiences and no azp".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Whether `alg` is signed with a key pair (never `none` or an HMAC).
fn asymmetric(alg: &CoreJwsSigningAlgorithm) -> bool {
    use CoreJwsSigningAlgorithm::*;
    matches!(
        alg,
        RsaSsaPkcs1V15Sha256
            | RsaSsaPkcs1V15Sha384
            | RsaSsaPkcs1V15Sha512
            | EcdsaP256Sha256
            | EcdsaP384Sha384
            | EcdsaP521Sha512
            | RsaSsaPssSha256
            | RsaSsaPssSha384
            | RsaSsaPssSha512
            | EdDsa
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_key_pair_algorithms_are_allowed() {
        assert!(asymmetric(&CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256));
        assert!(asymmetric(&CoreJwsSigningAlgorithm::EcdsaP256Sha256));
        assert!(!asymmetric(&CoreJwsSigningAlgorithm::None));
        assert!(!asymmetric(&CoreJwsSigningAlgorithm::HmacSha256));
    }
}
