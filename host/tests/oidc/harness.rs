//! An OpenID provider for the sign-in tests: `tests/oidc/provider.mjs`, the
//! certified npm package `oidc-provider` (pinned in `tests/oidc/package.json`)
//! run by Node on a loopback port, with the clients and accounts a test
//! names ([`Provider::start`]).
//!
//! Besides the provider's own endpoints it offers what tests need: a stable
//! sign-in page that [`Provider::authorize`] fills in as a browser would,
//! consent granted without a page, ID tokens made wrong on purpose
//! ([`Provider::tamper`]), and a count of the requests it answered
//! ([`Provider::requests`]).
//!
//! Include it with `#[path = "../oidc/harness.rs"] mod oidc_provider;` (from
//! `tests/api/`) or `#[path = "oidc/harness.rs"] mod oidc_provider;` (from
//! `tests/*.rs`), under `#[allow(dead_code)]` where a test crate uses only
//! part of it. The packages are installed by
//! `npm ci --prefix tests/oidc` (`.ci/run` does it); without them, or
//! without `node`, [`Provider::start`] answers `None` after saying why, and
//! fails when `CI` is set.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::LOCATION;
use reqwest::redirect::Policy;
use reqwest::{Response, StatusCode};
use serde_json::{json, Value};
use url::Url;

/// How long the provider may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How many times a provider that does not start listening in time is
/// started again (on a fresh port) before the test fails.
const START_ATTEMPTS: usize = 3;

/// How many redirects [`UserAgent::authorize`] follows before giving up.
const MAX_HOPS: usize = 20;

/// The password [`UserAgent::authorize`] types: the provider takes any.
const PASSWORD: &str = "any password";

/// A relying party registered at the provider: it authenticates at the token
/// endpoint with `client_secret_basic` and uses the authorization code flow
/// with PKCE (S256); its ID tokens are signed RS256.
#[derive(Debug, Clone)]
pub struct OidcClient {
    pub client_id: String,
    pub client_secret: String,
    pub redirect_uris: Vec<String>,
}

/// An account at the provider. It signs in with its `sub` or its `email`
/// and any non-empty password; its ID tokens carry these claims for the
/// scopes `openid email profile`.
#[derive(Debug, Clone)]
pub struct OidcAccount {
    pub sub: String,
    pub email: String,
    pub email_verified: bool,
    pub name: String,
}

/// How the provider makes the `id_token` of the token responses that follow
/// ([`Provider::tamper`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// As the provider signed it (the default).
    None,
    /// Header `{"alg":"none"}`, the same payload, an empty signature.
    AlgNone,
    /// RS256 with the published key's `kid`, signed by a key not published.
    WrongKey,
    /// Signed by the published key, under a `kid` the JWKS does not hold.
    UnknownKid,
    /// Signed properly, but `iat` an hour ago and `exp` half an hour ago.
    Expired,
    /// Signed properly, but `iss` is `http://127.0.0.1:1/other`.
    OtherIssuer,
    /// HS256 with the client's secret as the key, no `kid`.
    Hs256,
    /// Signed properly, but `aud` is another client.
    OtherAudience,
    /// Signed properly, `aud` holds ours and another client, and `azp`
    /// names the other one.
    TwoAudiences,
    /// Signed properly, but `nonce` is not the one the flow sent.
    WrongNonce,
    /// A new RSA key (new `kid`) is published in the JWKS from now on, and
    /// signs the tokens. Each call adds one more key.
    Rotate,
    /// The ID token is left alone, but UserInfo answers about another
    /// `sub` (and another address).
    UserInfoOtherSub,
}

impl Tamper {
    /// The mode's name at `POST /__test/tamper`.
    fn mode(self) -> &'static str {
        match self {
            Tamper::None => "none",
            Tamper::AlgNone => "alg_none",
            Tamper::WrongKey => "wrong_key",
            Tamper::UnknownKid => "unknown_kid",
            Tamper::Expired => "expired",
            Tamper::OtherIssuer => "other_issuer",
            Tamper::Hs256 => "hs256",
            Tamper::OtherAudience => "other_audience",
            Tamper::TwoAudiences => "two_audiences",
            Tamper::WrongNonce => "wrong_nonce",
            Tamper::Rotate => "rotate",
            Tamper::UserInfoOtherSub => "userinfo_other_sub",
        }
    }
}

/// A running provider; `Drop` kills it.
pub struct Provider {
    child: Option<Child>,
    port: u16,
    issuer: String,
    /// Gets the `ready` line once; taken by [`Provider::wait_ready`].
    ready: Option<tokio::sync::oneshot::Receiver<String>>,
    /// The provider's standard error so far, shown when a test fails.
    stderr: Arc<Mutex<String>>,
    http: reqwest::Client,
}

/// Whether `CI` asks for every test to run.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The folder holding `provider.mjs` and its `node_modules`
/// (`GATEHOUSE_OIDC_PROVIDER_DIR`, or `tests/oidc`).
fn provider_dir() -> PathBuf {
    std::env::var_os("GATEHOUSE_OIDC_PROVIDER_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oidc"),
        PathBuf::from,
    )
}

/// The Node executable (`GATEHOUSE_NODE`, or `node` on the `PATH`).
fn node() -> PathBuf {
    std::env::var_os("GATEHOUSE_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from)
}

/// Why the provider cannot run here (Node or the packages missing), if so.
fn missing_tools(dir: &std::path::Path) -> Option<String> {
    let node = node();
    let works = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        return Some(format!(
            "{} does not run (install Node, or point GATEHOUSE_NODE at it)",
            node.display()
        ));
    }
    let package = dir.join("node_modules/oidc-provider/package.json");
    (!package.is_file()).then(|| {
        format!(
            "oidc-provider is not installed at {} (run `npm ci --prefix tests/oidc`)",
            package.display()
        )
    })
}

/// `None` after saying why the calling test is skipped; fails under `CI`.
fn skip(why: &str) -> Option<Provider> {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(unnamed)");
    assert!(
        !in_ci(),
        "test {test} cannot run under CI without its OpenID provider: {why}"
    );
    eprintln!("skipping test {test}: {why}");
    None
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Reads the child's standard output on a thread; the receiver gets the
/// `ready` line, or is closed when the output ends without one.
fn watch_ready(stdout: ChildStdout) -> tokio::sync::oneshot::Receiver<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("ready ") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(line);
                }
            }
        }
    });
    rx
}

/// Collects the child's standard error on a thread.
fn collect_stderr(mut stderr: ChildStderr) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&text);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            let chunk = String::from_utf8_lossy(&buf[..n]);
            sink.lock().expect("the stderr buffer").push_str(&chunk);
        }
    });
    text
}

/// The JSON the provider reads from `OIDC_CLIENTS`.
fn clients_json(clients: &[OidcClient]) -> String {
    let clients: Vec<Value> = clients
        .iter()
        .map(|c| {
            json!({
                "client_id": c.client_id,
                "client_secret": c.client_secret,
                "redirect_uris": c.redirect_uris,
            })
        })
        .collect();
    Value::from(clients).to_string()
}

/// The JSON the provider reads from `OIDC_ACCOUNTS`.
fn accounts_json(accounts: &[OidcAccount]) -> String {
    let accounts: Vec<Value> = accounts
        .iter()
        .map(|a| {
            json!({
                "sub": a.sub,
                "email": a.email,
                "email_verified": a.email_verified,
                "name": a.name,
            })
        })
        .collect();
    Value::from(accounts).to_string()
}

impl Provider {
    /// Starts a provider on a free loopback port for `clients` and
    /// `accounts`, and waits until it listens. `None` (with the reason
    /// printed) when Node or the npm packages are missing and `CI` is unset;
    /// under `CI` that fails the test, and so does a provider that does not
    /// start.
    ///
    /// The provider runs in oidc-provider's default configuration: the ID
    /// token carries `sub` and the sign-in's times, and the scopes' claims
    /// (`email`, `email_verified`, `name`) come from UserInfo.
    pub async fn start(clients: &[OidcClient], accounts: &[OidcAccount]) -> Option<Provider> {
        Self::start_with(clients, accounts, false).await
    }

    /// [`Provider::start`], with the scopes' claims put into the ID token
    /// too (as providers configured for "fat" ID tokens do).
    pub async fn start_with_id_token_claims(
        clients: &[OidcClient],
        accounts: &[OidcAccount],
    ) -> Option<Provider> {
        Self::start_with(clients, accounts, true).await
    }

    async fn start_with(
        clients: &[OidcClient],
        accounts: &[OidcAccount],
        id_token_claims: bool,
    ) -> Option<Provider> {
        let dir = provider_dir();
        if let Some(why) = missing_tools(&dir) {
            return skip(&why);
        }
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let mut provider = Self::spawn(&dir, clients, accounts, id_token_claims);
            match provider.wait_ready().await {
                Ok(()) => return Some(provider),
                Err(why) => {
                    let stderr = provider.stop_and_take_stderr().await;
                    eprintln!(
                        "the OpenID provider on port {} did not start: {why}; its stderr:\n{stderr}",
                        provider.port
                    );
                    failures.push(format!(
                        "port {}: {why}; its stderr:\n{stderr}",
                        provider.port
                    ));
                }
            }
        }
        panic!(
            "the OpenID provider did not start in {START_ATTEMPTS} attempts:\n{}",
            failures.join("\n")
        );
    }

    /// Runs `provider.mjs` on a free port, reading its output on threads.
    fn spawn(
        dir: &std::path::Path,
        clients: &[OidcClient],
        accounts: &[OidcAccount],
        id_token_claims: bool,
    ) -> Provider {
        let port = free_port();
        let mut child = Command::new(node())
            .arg(dir.join("provider.mjs"))
            .current_dir(dir)
            .env("PORT", port.to_string())
            .env("OIDC_CLIENTS", clients_json(clients))
            .env("OIDC_ACCOUNTS", accounts_json(accounts))
            .env(
                "OIDC_ID_TOKEN_CLAIMS",
                if id_token_claims { "1" } else { "0" },
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting node tests/oidc/provider.mjs");
        let ready = watch_ready(child.stdout.take().expect("the provider's stdout"));
        let stderr = collect_stderr(child.stderr.take().expect("the provider's stderr"));
        Provider {
            child: Some(child),
            port,
            issuer: format!("http://127.0.0.1:{port}"),
            ready: Some(ready),
            stderr,
            http: reqwest::Client::new(),
        }
    }

    /// Waits for the `ready <issuer>` line; says why when it does not come.
    async fn wait_ready(&mut self) -> Result<(), String> {
        let ready = self.ready.take().expect("a provider waited for once");
        match tokio::time::timeout(START_TIMEOUT, ready).await {
            Ok(Ok(line)) if line == format!("ready {}", self.issuer) => Ok(()),
            Ok(Ok(line)) => Err(format!("it said {line:?}")),
            Ok(Err(_)) => Err("it ended without saying it was ready".to_owned()),
            Err(_) => {
                let address = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
                let listening =
                    std::net::TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok();
                Err(format!(
                    "it was not ready within {START_TIMEOUT:?} (its port {})",
                    if listening {
                        "accepted a connection"
                    } else {
                        "refused connections"
                    }
                ))
            }
        }
    }

    /// Stops the process and answers what it wrote to standard error.
    async fn stop_and_take_stderr(&mut self) -> String {
        self.stop();
        // the stderr thread reads to the end once the process is gone
        tokio::time::sleep(Duration::from_millis(200)).await;
        std::mem::take(&mut *self.stderr.lock().expect("the stderr buffer"))
    }

    /// The issuer: `http://127.0.0.1:<port>`, with no trailing slash.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The provider's standard error so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("the stderr buffer").clone()
    }

    /// Sets how the next token responses' `id_token` is made, until the
    /// next call (`Tamper::None` returns to tokens as the provider made
    /// them; keys added by `Tamper::Rotate` stay published).
    pub async fn tamper(&self, mode: Tamper) {
        let url = format!("{}/__test/tamper", self.issuer);
        let response = self
            .http
            .post(&url)
            .json(&json!({ "mode": mode.mode() }))
            .send()
            .await
            .expect("POST /__test/tamper");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "POST /__test/tamper: {status} {body}");
    }

    /// How many requests the provider answered at `path` (such as `/jwks`,
    /// `/token` or `/.well-known/openid-configuration`) since it started.
    pub async fn requests(&self, path: &str) -> u64 {
        let url = format!("{}/__test/requests", self.issuer);
        let counts: Value = self
            .http
            .get(&url)
            .send()
            .await
            .and_then(Response::error_for_status)
            .expect("GET /__test/requests")
            .json()
            .await
            .expect("the request counts as JSON");
        counts.get(path).and_then(Value::as_u64).unwrap_or(0)
    }

    /// A user agent of its own (a browser with an empty cookie jar) whose
    /// sign-ins at the provider last across its
    /// [`UserAgent::authorize`] calls.
    pub fn user_agent(&self) -> UserAgent {
        UserAgent::new(&self.issuer)
    }

    /// Follows `authorization_url` (made by the relying party) as a new
    /// browser would, with its own cookie jar and without following
    /// redirects by itself; signs in at the login page as `login` (an
    /// account's `sub` or email) and answers the URL the provider finally
    /// redirects to: the relying party's redirect_uri with `code`, `state`
    /// and `iss`, or with `error` (`access_denied` for an unknown login).
    /// That URL is not requested.
    pub async fn authorize(&self, authorization_url: &str, login: &str) -> String {
        self.user_agent().authorize(authorization_url, login).await
    }

    /// Stops the provider process (to test a provider that is down); `Drop`
    /// also kills it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() && !self.stderr().is_empty() {
            eprintln!(
                "the OpenID provider's stderr (issuer {}):\n{}",
                self.issuer,
                self.stderr()
            );
        }
    }
}

/// A browser at the provider: a cookie jar of its own, kept across
/// [`UserAgent::authorize`] calls, so that the provider's session lasts
/// (a second authorization shows the login page only when the relying party
/// asks with `prompt=login` or an exceeded `max_age`).
pub struct UserAgent {
    http: reqwest::Client,
    issuer: Url,
    logins: AtomicU32,
}

impl UserAgent {
    /// A user agent with an empty cookie jar for the provider at `issuer`.
    fn new(issuer: &str) -> UserAgent {
        UserAgent {
            http: reqwest::Client::builder()
                .cookie_store(true)
                .redirect(Policy::none())
                .build()
                .expect("an HTTP client with a cookie jar"),
            issuer: Url::parse(issuer).expect("the issuer as a URL"),
            logins: AtomicU32::new(0),
        }
    }

    /// How many times this user agent submitted the login page.
    pub fn logins(&self) -> u32 {
        self.logins.load(Ordering::SeqCst)
    }

    /// As [`Provider::authorize`], with this user agent's cookies: the login
    /// page is filled in as `login` only when the provider shows it.
    pub async fn authorize(&self, authorization_url: &str, login: &str) -> String {
        let mut url = Url::parse(authorization_url).expect("the authorization URL");
        for _ in 0..MAX_HOPS {
            if url.origin() != self.issuer.origin() {
                return url.into();
            }
            let response = self
                .http
                .get(url.clone())
                .send()
                .await
                .unwrap_or_else(|e| panic!("GET {url}: {e}"));
            url = match redirect_target(&url, &response) {
                Some(next) => next,
                None => self.sign_in(&url, response, login).await,
            };
        }
        panic!("the provider redirected more than {MAX_HOPS} times from {authorization_url}");
    }

    /// Submits the login page `response` (at `page`) as `login`; answers
    /// where the provider redirects then.
    async fn sign_in(&self, page: &Url, response: Response, login: &str) -> Url {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        let action = login_action(&body).unwrap_or_else(|| {
            panic!("{page} answered {status} without a redirect or the login form:\n{body}")
        });
        let target = page.join(&action).expect("the login form's action");
        let response = self
            .http
            .post(target.clone())
            .form(&[("login", login), ("password", PASSWORD)])
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {target}: {e}"));
        self.logins.fetch_add(1, Ordering::SeqCst);
        redirect_target(&target, &response).unwrap_or_else(|| {
            panic!(
                "POST {target} answered {} instead of a redirect",
                response.status()
            )
        })
    }
}

/// Where `response` (to a request for `url`) redirects, if it does.
fn redirect_target(url: &Url, response: &Response) -> Option<Url> {
    if !response.status().is_redirection() || response.status() == StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = response.headers().get(LOCATION)?.to_str().ok()?;
    Some(
        url.join(location)
            .unwrap_or_else(|e| panic!("the redirect {location:?} from {url}: {e}")),
    )
}

/// The `action` of the login form (`<form … action="/interaction/…/login">`)
/// in `page`, if it has one.
fn login_action(page: &str) -> Option<String> {
    if !page.contains(r#"id="login""#) {
        return None;
    }
    let start = page.find(r#"action=""#)? + r#"action=""#.len();
    let end = start + page[start..].find('"')?;
    Some(page[start..end].to_owned())
}
