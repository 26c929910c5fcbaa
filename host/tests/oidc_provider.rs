//! The OpenID provider the sign-in tests start (`tests/oidc/harness.rs`),
//! driven by a minimal relying party written here by hand: discovery, the
//! authorization code flow with PKCE and the `iss` response parameter, the
//! ID token and its signature, each way of making it wrong, the request
//! counts and a provider that is down.
//!
//! Skipped with a message without Node or `npm ci --prefix tests/oidc`;
//! fails then when `CI` is set.

#[path = "oidc/harness.rs"]
#[allow(dead_code)] // the tamper modes the sign-in tests use too
mod harness;

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use harness::{OidcAccount, OidcClient, Provider, Tamper};
use ring::{hmac, signature};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use url::Url;

const CLIENT_ID: &str = "gatehouse-test";
const CLIENT_SECRET: &str = "a client secret of thirty-two bytes or more";
/// Never requested: the provider only redirects to it.
const REDIRECT_URI: &str = "http://127.0.0.1:9/auth/oidc/callback";

/// The relying party the tests act as.
fn clients() -> Vec<OidcClient> {
    vec![OidcClient {
        client_id: CLIENT_ID.to_owned(),
        client_secret: CLIENT_SECRET.to_owned(),
        redirect_uris: vec![REDIRECT_URI.to_owned()],
    }]
}

/// The provider's one account.
fn accounts() -> Vec<OidcAccount> {
    vec![OidcAccount {
        sub: "alice-sub".to_owned(),
        email: "alice@example.com".to_owned(),
        email_verified: true,
        name: "Alice Example".to_owned(),
    }]
}

/// A provider for [`clients`] and [`accounts`], or `None` when skipped.
async fn start() -> Option<Provider> {
    Provider::start_with_id_token_claims(&clients(), &accounts()).await
}

/// Seconds since the epoch.
fn now() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970");
    i64::try_from(since.as_secs()).expect("seconds fit i64")
}

/// `len` random bytes, base64url without padding.
fn random_token(len: usize) -> String {
    let bytes: Vec<u8> = (0..len).map(|_| rand::random::<u8>()).collect();
    URL_SAFE_NO_PAD.encode(bytes)
}

/// GET `url` as JSON.
async fn get_json(url: &str) -> Value {
    reqwest::get(url)
        .await
        .and_then(reqwest::Response::error_for_status)
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("GET {url} as JSON: {e}"))
}

/// The provider's discovery document.
async fn discovery(provider: &Provider) -> Value {
    get_json(&format!(
        "{}/.well-known/openid-configuration",
        provider.issuer()
    ))
    .await
}

/// The keys the provider publishes.
async fn jwks(provider: &Provider) -> Vec<Value> {
    let uri = discovery(provider).await["jwks_uri"]
        .as_str()
        .expect("jwks_uri")
        .to_owned();
    get_json(&uri).await["keys"]
        .as_array()
        .expect("the JWKS's keys")
        .clone()
}

/// One authorization request's secrets, kept by the relying party.
struct Request {
    state: String,
    nonce: String,
    verifier: String,
}

impl Request {
    /// Fresh state, nonce and PKCE code verifier.
    fn new() -> Request {
        Request {
            state: random_token(16),
            nonce: random_token(16),
            verifier: random_token(32),
        }
    }

    /// The PKCE S256 code challenge of the verifier.
    fn challenge(&self) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(self.verifier.as_bytes()))
    }

    /// The authorization URL at `provider`, with `extra` parameters.
    async fn url(&self, provider: &Provider, extra: &[(&str, &str)]) -> String {
        let endpoint = discovery(provider).await["authorization_endpoint"]
            .as_str()
            .expect("authorization_endpoint")
            .to_owned();
        let challenge = self.challenge();
        let mut url = Url::parse(&endpoint).expect("the authorization endpoint");
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("response_mode", "query")
            .append_pair("client_id", CLIENT_ID)
            .append_pair("redirect_uri", REDIRECT_URI)
            .append_pair("scope", "openid email profile")
            .append_pair("state", &self.state)
            .append_pair("nonce", &self.nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .extend_pairs(extra);
        url.into()
    }
}

/// The query parameter `name` of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    Url::parse(url)
        .expect("a URL")
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The token response for `code`, authenticated with client_secret_basic.
async fn exchange(provider: &Provider, code: &str, verifier: &str) -> Value {
    let endpoint = discovery(provider).await["token_endpoint"]
        .as_str()
        .expect("token_endpoint")
        .to_owned();
    let response = reqwest::Client::new()
        .post(&endpoint)
        .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", verifier),
        ])
        .send()
        .await
        .expect("POST to the token endpoint");
    let status = response.status();
    let body: Value = response.json().await.expect("the token response as JSON");
    assert!(status.is_success(), "the token endpoint: {status} {body}");
    body
}

/// A JWS in its parts.
struct Jwt {
    header: Value,
    payload: Value,
    signing_input: String,
    signature: Vec<u8>,
}

/// The decoded base64url `part`.
fn b64(part: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(part)
        .unwrap_or_else(|e| panic!("base64url {part:?}: {e}"))
}

/// `token` (compact JWS) taken apart.
fn decode(token: &str) -> Jwt {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "a compact JWS: {token}");
    let json = |part: &str| -> Value {
        serde_json::from_slice(&b64(part)).expect("a JSON part of the JWS")
    };
    Jwt {
        header: json(parts[0]),
        payload: json(parts[1]),
        signing_input: format!("{}.{}", parts[0], parts[1]),
        signature: b64(parts[2]),
    }
}

impl Jwt {
    /// Whether the RSA JWK `key` verifies the RS256 signature.
    fn verifies_with(&self, key: &Value) -> bool {
        let component = |name: &str| b64(key[name].as_str().expect("an RSA JWK member"));
        let public = signature::RsaPublicKeyComponents {
            n: component("n"),
            e: component("e"),
        };
        public
            .verify(
                &signature::RSA_PKCS1_2048_8192_SHA256,
                self.signing_input.as_bytes(),
                &self.signature,
            )
            .is_ok()
    }

    /// The header's `kid`.
    fn kid(&self) -> &str {
        self.header["kid"].as_str().expect("a kid in the header")
    }
}

/// The key `kid` of `keys`.
fn key<'k>(keys: &'k [Value], kid: &str) -> Option<&'k Value> {
    keys.iter().find(|k| k["kid"] == kid)
}

/// Signs in as `login` from a new browser and answers the callback URL.
async fn callback(provider: &Provider, request: &Request, login: &str) -> String {
    let url = request.url(provider, &[]).await;
    provider.authorize(&url, login).await
}

/// A whole sign-in as alice: the ID token the token endpoint answers.
async fn id_token(provider: &Provider) -> Jwt {
    let request = Request::new();
    let callback = callback(provider, &request, "alice@example.com").await;
    let code = param(&callback, "code").expect("a code in the callback");
    let tokens = exchange(provider, &code, &request.verifier).await;
    decode(tokens["id_token"].as_str().expect("an id_token"))
}

/// A normal ID token, then one made after `mode`, and the JWKS then.
async fn tampered(mode: Tamper) -> Option<(Jwt, Jwt, Vec<Value>)> {
    let provider = start().await?;
    let normal = id_token(&provider).await;
    provider.tamper(mode).await;
    let tampered = id_token(&provider).await;
    Some((normal, tampered, jwks(&provider).await))
}

/// The claims both tokens must share whatever the mode.
fn assert_same_account(normal: &Jwt, tampered: &Jwt) {
    for claim in ["sub", "email", "email_verified", "name", "aud"] {
        assert_eq!(normal.payload[claim], tampered.payload[claim], "{claim}");
    }
}

#[tokio::test]
async fn discovery_names_the_endpoints_and_the_iss_parameter() {
    let Some(provider) = start().await else {
        return;
    };
    let doc = discovery(&provider).await;
    assert_eq!(doc["issuer"], provider.issuer());
    for endpoint in ["authorization_endpoint", "token_endpoint", "jwks_uri"] {
        let url = doc[endpoint].as_str().expect(endpoint);
        assert!(url.starts_with(provider.issuer()), "{endpoint}: {url}");
    }
    assert_eq!(doc["authorization_response_iss_parameter_supported"], true);
    assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
    let algs = doc["id_token_signing_alg_values_supported"]
        .as_array()
        .expect("id_token_signing_alg_values_supported");
    assert!(algs.contains(&json!("RS256")), "{algs:?}");
}

#[tokio::test]
async fn the_code_flow_answers_a_signed_id_token_with_the_account() {
    let Some(provider) = start().await else {
        return;
    };
    let request = Request::new();
    let callback = callback(&provider, &request, "alice@example.com").await;
    assert!(callback.starts_with(REDIRECT_URI), "{callback}");
    assert_eq!(param(&callback, "state"), Some(request.state.clone()));
    assert_eq!(param(&callback, "iss").as_deref(), Some(provider.issuer()));
    let code = param(&callback, "code").expect("a code in the callback");
    let tokens = exchange(&provider, &code, &request.verifier).await;
    let token = decode(tokens["id_token"].as_str().expect("an id_token"));

    assert_eq!(token.header["alg"], "RS256");
    let keys = jwks(&provider).await;
    let key = key(&keys, token.kid()).expect("the token's kid in the JWKS");
    assert!(token.verifies_with(key), "the signature verifies");
    let claims = &token.payload;
    assert_eq!(claims["iss"], provider.issuer());
    assert_eq!(claims["aud"], CLIENT_ID);
    assert_eq!(claims["sub"], "alice-sub");
    assert_eq!(claims["email"], "alice@example.com");
    assert_eq!(claims["email_verified"], true);
    assert_eq!(claims["name"], "Alice Example");
    assert_eq!(claims["nonce"], request.nonce.as_str());
    let auth_time = claims["auth_time"].as_i64().expect("auth_time");
    assert!((now() - auth_time).abs() < 60, "auth_time {auth_time}");
    assert!(claims["exp"].as_i64().expect("exp") > now());
}

#[tokio::test]
async fn a_code_is_refused_without_the_right_verifier() {
    let Some(provider) = start().await else {
        return;
    };
    let request = Request::new();
    let callback = callback(&provider, &request, "alice-sub").await;
    let code = param(&callback, "code").expect("a code in the callback");
    let response = reqwest::Client::new()
        .post(format!("{}/token", provider.issuer()))
        .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", random_token(32).as_str()),
        ])
        .send()
        .await
        .expect("POST /token");
    assert_eq!(response.status(), reqwest::StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.expect("an error as JSON");
    assert_eq!(body["error"], "invalid_grant");
}

#[tokio::test]
async fn an_authorization_without_pkce_is_refused() {
    let Some(provider) = start().await else {
        return;
    };
    let request = Request::new();
    let url = request.url(&provider, &[]).await;
    let mut url = Url::parse(&url).expect("the authorization URL");
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !k.starts_with("code_challenge"))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    let callback = provider.authorize(url.as_str(), "alice-sub").await;
    assert!(callback.starts_with(REDIRECT_URI), "{callback}");
    assert_eq!(
        param(&callback, "error").as_deref(),
        Some("invalid_request")
    );
    assert_eq!(param(&callback, "code"), None);
}

#[tokio::test]
async fn an_unknown_login_is_denied() {
    let Some(provider) = start().await else {
        return;
    };
    let request = Request::new();
    let callback = callback(&provider, &request, "mallory@example.com").await;
    assert!(callback.starts_with(REDIRECT_URI), "{callback}");
    assert_eq!(param(&callback, "error").as_deref(), Some("access_denied"));
    assert_eq!(param(&callback, "state"), Some(request.state.clone()));
    assert_eq!(param(&callback, "code"), None);
}

#[tokio::test]
async fn a_user_agent_keeps_its_session_until_prompt_login_or_max_age() {
    let Some(provider) = start().await else {
        return;
    };
    let agent = provider.user_agent();
    let sign_in = |extra: &'static [(&'static str, &'static str)]| {
        let agent = &agent;
        let provider = &provider;
        async move {
            let request = Request::new();
            let url = request.url(provider, extra).await;
            let callback = agent.authorize(&url, "alice-sub").await;
            assert!(param(&callback, "code").is_some(), "{callback}");
        }
    };
    sign_in(&[]).await;
    assert_eq!(agent.logins(), 1);
    sign_in(&[]).await;
    assert_eq!(agent.logins(), 1, "the provider's session signs in again");
    sign_in(&[("prompt", "login")]).await;
    assert_eq!(agent.logins(), 2, "prompt=login shows the login page");
    sign_in(&[("max_age", "3600")]).await;
    assert_eq!(agent.logins(), 2, "a sign-in within max_age stands");
    // the provider counts whole seconds since the sign-in
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    sign_in(&[("max_age", "0")]).await;
    assert_eq!(agent.logins(), 3, "max_age=0 shows the login page");
}

#[tokio::test]
async fn alg_none_drops_the_signature() {
    let Some((normal, token, _)) = tampered(Tamper::AlgNone).await else {
        return;
    };
    assert_eq!(token.header, json!({ "alg": "none" }));
    assert!(token.signature.is_empty());
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn wrong_key_keeps_the_kid_but_not_the_key() {
    let Some((normal, token, keys)) = tampered(Tamper::WrongKey).await else {
        return;
    };
    assert_eq!(token.header, normal.header);
    let key = key(&keys, token.kid()).expect("the kid is the JWKS's");
    assert!(normal.verifies_with(key));
    assert!(!token.verifies_with(key), "signed by another key");
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn unknown_kid_names_a_key_the_jwks_lacks() {
    let Some((normal, token, keys)) = tampered(Tamper::UnknownKid).await else {
        return;
    };
    assert_eq!(token.header["alg"], "RS256");
    assert!(key(&keys, token.kid()).is_none(), "{}", token.kid());
    let real = key(&keys, normal.kid()).expect("the real key");
    assert!(token.verifies_with(real), "signed by the real key");
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn expired_is_signed_but_past_its_exp() {
    let Some((normal, token, keys)) = tampered(Tamper::Expired).await else {
        return;
    };
    assert_eq!(token.header, normal.header);
    assert!(token.verifies_with(key(&keys, token.kid()).expect("the key")));
    let exp = token.payload["exp"].as_i64().expect("exp");
    let iat = token.payload["iat"].as_i64().expect("iat");
    assert!((now() - 1800 - exp).abs() < 60, "exp {exp}");
    assert!((now() - 3600 - iat).abs() < 60, "iat {iat}");
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn other_issuer_is_signed_under_another_iss() {
    let Some((normal, token, keys)) = tampered(Tamper::OtherIssuer).await else {
        return;
    };
    assert_eq!(token.header, normal.header);
    assert!(token.verifies_with(key(&keys, token.kid()).expect("the key")));
    assert_eq!(token.payload["iss"], "http://127.0.0.1:1/other");
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn hs256_is_a_mac_under_the_client_secret() {
    let Some((normal, token, _)) = tampered(Tamper::Hs256).await else {
        return;
    };
    assert_eq!(token.header["alg"], "HS256");
    assert!(token.header.get("kid").is_none(), "{}", token.header);
    let key = hmac::Key::new(hmac::HMAC_SHA256, CLIENT_SECRET.as_bytes());
    hmac::verify(&key, token.signing_input.as_bytes(), &token.signature)
        .expect("an HMAC-SHA256 under the client secret");
    assert_same_account(&normal, &token);
}

#[tokio::test]
async fn rotate_publishes_and_signs_with_a_new_key() {
    let Some(provider) = start().await else {
        return;
    };
    let before = jwks(&provider).await;
    let normal = id_token(&provider).await;
    provider.tamper(Tamper::Rotate).await;
    let after = jwks(&provider).await;
    assert_eq!(after.len(), before.len() + 1);
    let token = id_token(&provider).await;
    assert!(key(&before, token.kid()).is_none(), "a new kid");
    let new_key = key(&after, token.kid()).expect("the new kid in the JWKS");
    assert!(token.verifies_with(new_key));
    assert_same_account(&normal, &token);

    provider.tamper(Tamper::None).await;
    let again = id_token(&provider).await;
    assert_eq!(again.header, normal.header, "signed as before");
    assert_eq!(
        jwks(&provider).await.len(),
        after.len(),
        "the new key stays"
    );
}

#[tokio::test]
async fn requests_are_counted_per_path() {
    let Some(provider) = start().await else {
        return;
    };
    assert_eq!(provider.requests("/jwks").await, 0);
    jwks(&provider).await;
    jwks(&provider).await;
    assert_eq!(provider.requests("/jwks").await, 2);
    let discoveries = provider.requests("/.well-known/openid-configuration").await;
    assert_eq!(discoveries, 2, "jwks() reads the discovery document");
    assert_eq!(provider.requests("/token").await, 0);
    id_token(&provider).await;
    assert_eq!(provider.requests("/token").await, 1);
}

#[tokio::test]
async fn a_stopped_provider_refuses_connections() {
    let Some(mut provider) = start().await else {
        return;
    };
    discovery(&provider).await;
    provider.stop();
    let url = format!("{}/.well-known/openid-configuration", provider.issuer());
    let error = reqwest::get(&url).await.expect_err("the provider is down");
    assert!(error.is_connect(), "{error}");
}
