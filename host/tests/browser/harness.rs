//! What the browser tests stand on: a real `gatehouse serve` process on a
//! loopback port with its own database, mail directory and public directory
//! ([`Site`]), and a headless chromium driven through its own chromedriver
//! ([`Browser`]). Both are torn down by `Drop`, whatever the test's outcome.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use mail_parser::MessageParser;
use reqwest::Method;
use serde_json::{json, Value};
use sha1::Digest;
use tempfile::TempDir;

use crate::common::{add_user, cli, gatehouse, TestDb};

/// How long a server or a chromedriver may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a page may take to reach the state a test waits for.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the background sender may take to write a mail.
const MAIL_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether the browser runs the screens' JavaScript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Js {
    On,
    Off,
}

/// The chromium and chromedriver executables.
#[derive(Debug, Clone)]
pub struct Tools {
    chromium: PathBuf,
    chromedriver: PathBuf,
}

/// Whether `CI` asks for every test to run.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The browser executables (`/usr/bin/chromium`, `/usr/bin/chromedriver`, or
/// `GATEHOUSE_CHROMIUM` / `GATEHOUSE_CHROMEDRIVER`). When one is missing the
/// test fails under `CI`, and is skipped with a message otherwise: the caller
/// returns on `None`.
pub fn tools() -> Option<Tools> {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(unnamed)");
    let path = |var: &str, default: &str| {
        PathBuf::from(std::env::var_os(var).unwrap_or_else(|| default.into()))
    };
    let tools = Tools {
        chromium: path("GATEHOUSE_CHROMIUM", "/usr/bin/chromium"),
        chromedriver: path("GATEHOUSE_CHROMEDRIVER", "/usr/bin/chromedriver"),
    };
    let missing: Vec<String> = [&tools.chromium, &tools.chromedriver]
        .into_iter()
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return Some(tools);
    }
    let why = format!(
        "{} not found (install with `apt-get install chromium chromium-driver`, \
         or point GATEHOUSE_CHROMIUM / GATEHOUSE_CHROMEDRIVER at them)",
        missing.join(" and ")
    );
    assert!(!in_ci(), "browser test {test} cannot run under CI: {why}");
    eprintln!("skipping browser test {test}: {why}");
    None
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A process killed (with its whole process group) and reaped when dropped.
struct Guarded {
    child: Child,
    /// The child leads its own process group (chromedriver and its browsers).
    group: bool,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if self.group {
            if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
                // SAFETY: signals the process group this guard's child leads.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `url` until it answers `200`, or fails naming `what` and its output.
async fn wait_until_up(url: &str, what: &str, process: &mut Guarded, logs: impl Fn() -> String) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(5))
        .build()
        .expect("HTTP client");
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = process.child.try_wait().expect("try_wait") {
            panic!(
                "{what} exited with {status} before it was ready\n{}",
                logs()
            );
        }
        let last = match http.get(url).send().await {
            Ok(response) if response.status() == reqwest::StatusCode::OK => return,
            Ok(response) => format!("status {}", response.status()),
            Err(e) => e.to_string(),
        };
        assert!(
            Instant::now() < deadline,
            "{what} not ready after {START_TIMEOUT:?} (last: {last})\n{}",
            logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Reads a log file for a failure message.
fn read_log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// What a [`Site`] is started with.
#[derive(Debug, Default, Clone)]
pub struct SiteOptions {
    /// Put a logo at `<public_dir>/assets/ci/logo-full.svg`.
    pub logo: bool,
    /// Serve as `http://localhost:<port>` (its `base_url`, and where the
    /// browser goes) instead of `http://127.0.0.1:<port>`: WebAuthn refuses
    /// an IP address, so only then are passkeys on.
    pub localhost: bool,
    /// A download of the Pwned Passwords corpus holding these passwords (and
    /// others), imported with `gatehouse breached import` and served as
    /// `auth.breached_passwords`.
    pub breached: Vec<&'static str>,
    /// The port to serve on (a free one when `None`): a test that registers
    /// the site's callback at an OpenID provider first chooses it.
    pub port: Option<u16>,
    /// `auth.oidc.acme`, verbatim (an inline TOML table: issuer, client,
    /// label, …).
    pub oidc_acme: Option<String>,
}

/// A running `gatehouse serve` on its own database.
pub struct Site {
    _server: Guarded,
    /// `http://127.0.0.1:<port>` (`http://localhost:<port>` with
    /// [`SiteOptions::localhost`]), also its `base_url`.
    pub base: String,
    mail: TempDir,
    public: TempDir,
    stderr_log: PathBuf,
    // Dropped after `server` is killed (fields drop in order).
    _db: TestDb,
}

/// A small SVG logo with an intrinsic size.
pub const LOGO_SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"160\" height=\"40\" \
    viewBox=\"0 0 160 40\"><rect width=\"160\" height=\"40\" rx=\"6\" fill=\"#1d4ed8\"/>\
    <text x=\"80\" y=\"26\" font-family=\"sans-serif\" font-size=\"16\" fill=\"#fff\" \
    text-anchor=\"middle\">Gatehouse</text></svg>\n";

/// A breached-password file made by `gatehouse breached import` from a
/// download (`SHA1HEX:COUNT` lines, CRLF) holding `passwords` among hashes
/// of nobody's.
fn breached_file(db: &TestDb, passwords: &[&str]) -> PathBuf {
    let line = |password: &str| {
        let hash = hex::encode_upper(sha1::Sha1::digest(password.as_bytes()));
        format!("{hash}:7\r\n")
    };
    let nobody = (0..500).map(|i| line(&format!("nobody's {i}")));
    let download: String = passwords.iter().map(|p| line(p)).chain(nobody).collect();
    let path = db.dir().join("pwnedpasswords.txt");
    std::fs::write(&path, download).expect("the download");
    let filter = db.dir().join("breached.bin");
    let (download, output) = (path.display().to_string(), filter.display().to_string());
    cli(
        db,
        &["breached", "import", &download, "--output", &output],
        None,
    )
    .assert_success();
    filter
}

impl Site {
    /// A migrated database holding `users` (`(email, name, password)`), and
    /// the server on it, ready.
    pub async fn start(users: &[(&str, &str, &str)], options: SiteOptions) -> Self {
        let db = TestDb::new().await;
        cli(&db, &["migrate"], None).assert_success();
        for (email, name, password) in users {
            add_user(&db, email, name, password);
        }
        let mail = tempfile::tempdir().expect("mail dir");
        let public = tempfile::tempdir().expect("public dir");
        if options.logo {
            let dir = public.path().join("assets/ci");
            std::fs::create_dir_all(&dir).expect("logo dir");
            std::fs::write(dir.join("logo-full.svg"), LOGO_SVG).expect("logo file");
        }
        let port = options.port.unwrap_or_else(free_port);
        let host = if options.localhost {
            "localhost"
        } else {
            "127.0.0.1"
        };
        let base = format!("http://{host}:{port}");
        let stdout_log = db.dir().join(format!("serve-{port}.stdout.log"));
        let stderr_log = db.dir().join(format!("serve-{port}.stderr.log"));
        let mut command = gatehouse(&db);
        let mut auth = Vec::new();
        if !options.breached.is_empty() {
            let filter = breached_file(&db, &options.breached);
            auth.push(format!("breached_passwords=\"{}\"", filter.display()));
        }
        if let Some(acme) = &options.oidc_acme {
            auth.push(format!("oidc={{acme={acme}}}"));
        }
        if !auth.is_empty() {
            command.env("ROCKET_AUTH", format!("{{{}}}", auth.join(",")));
        }
        command
            .arg("serve")
            .env("ROCKET_ADDRESS", "127.0.0.1")
            .env("ROCKET_PORT", port.to_string())
            .env("ROCKET_BASE_URL", &base)
            .env(
                "ROCKET_MAIL",
                format!("{{transport=\"file\",dir=\"{}\"}}", mail.path().display()),
            )
            .env("ROCKET_PUBLIC_DIR", public.path())
            .stdout(Stdio::from(File::create(&stdout_log).expect("stdout log")))
            .stderr(Stdio::from(File::create(&stderr_log).expect("stderr log")));
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `gatehouse serve`: {e}"));
        let mut server = Guarded {
            child,
            group: false,
        };
        // Polled on the address it listens on, whatever `localhost` resolves to.
        let login = format!("http://127.0.0.1:{port}/login");
        wait_until_up(&login, "`gatehouse serve`", &mut server, || {
            format!(
                "--- stderr\n{}\n--- stdout\n{}",
                read_log(&stderr_log),
                read_log(&stdout_log)
            )
        })
        .await;
        Self {
            _server: server,
            base,
            mail,
            public,
            stderr_log,
            _db: db,
        }
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The host's public directory (`public_dir`).
    pub fn public_dir(&self) -> &Path {
        self.public.path()
    }

    /// What the server wrote to standard error so far.
    pub fn server_log(&self) -> String {
        read_log(&self.stderr_log)
    }

    /// Waits for a mail to `address` whose plain-text part holds a link
    /// containing `needle`; answers that link.
    pub async fn wait_for_link(&self, address: &str, needle: &str) -> String {
        let deadline = Instant::now() + MAIL_TIMEOUT;
        loop {
            let mails = read_mails(self.mail.path());
            if let Some(link) = mails
                .iter()
                .filter(|m| m.to.eq_ignore_ascii_case(address))
                .flat_map(|m| m.links())
                .find(|l| l.contains(needle))
            {
                return link;
            }
            assert!(
                Instant::now() < deadline,
                "no mail to {address} with a link containing {needle:?} within {MAIL_TIMEOUT:?}; \
                 mails: {mails:#?}\n--- server stderr\n{}",
                self.server_log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Site {
    /// Signs `email` in from another device: an HTTP client keeping its own
    /// cookies, whose user agent `device` is what the sessions list shows.
    pub async fn sign_in_elsewhere(
        &self,
        email: &str,
        password: &str,
        device: &str,
    ) -> reqwest::Client {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .user_agent(device)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("HTTP client");
        let answer = client
            .post(self.url("/auth/login"))
            .json(&json!({ "email": email, "password": password }))
            .send()
            .await
            .expect("POST /auth/login");
        assert!(
            answer.status().is_success(),
            "{device} signs in: {}",
            answer.status()
        );
        client
    }

    /// Whether `client` (from [`Site::sign_in_elsewhere`]) is still signed in:
    /// `GET /dashboard` answers 200, not 401.
    pub async fn is_signed_in(&self, client: &reqwest::Client) -> bool {
        let answer = client
            .get(self.url("/dashboard"))
            .header("Accept", "application/json")
            .send()
            .await
            .expect("GET /dashboard");
        match answer.status() {
            reqwest::StatusCode::OK => true,
            reqwest::StatusCode::UNAUTHORIZED => false,
            other => panic!("GET /dashboard answered {other}"),
        }
    }
}

/// One delivered message, as much of it as the tests need.
#[derive(Debug)]
pub struct Mail {
    pub to: String,
    pub text: String,
}

impl Mail {
    /// The absolute links in the plain-text part.
    pub fn links(&self) -> Vec<String> {
        self.text
            .split_whitespace()
            .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
            .map(|w| w.trim_end_matches(['.', ',', ')', '>']).to_owned())
            .collect()
    }
}

/// Every complete `.eml` file in `dir`, parsed as MIME (a file still being
/// written is skipped).
fn read_mails(dir: &Path) -> Vec<Mail> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .filter_map(|p| std::fs::read(p).ok())
        .filter_map(|raw| {
            let message = MessageParser::default().parse(&raw)?;
            let to = message.to()?.first()?.address()?.to_owned();
            Some(Mail {
                to,
                text: message.body_text(0)?.into_owned(),
            })
        })
        .collect()
}

/// What a [`Browser`] is started with.
#[derive(Debug, Clone, Copy)]
pub struct BrowserOptions {
    pub js: Js,
    /// `Accept-Language` (and UI language) of the browser.
    pub lang: &'static str,
    pub width: u32,
    pub height: u32,
}

impl BrowserOptions {
    /// An English desktop browser, with or without JavaScript.
    pub fn new(js: Js) -> Self {
        Self {
            js,
            lang: "en",
            width: 1280,
            height: 900,
        }
    }

    /// The same, asking for `lang` first.
    pub fn lang(self, lang: &'static str) -> Self {
        Self { lang, ..self }
    }
}

/// A headless chromium on its own chromedriver, at one [`Site`].
pub struct Browser {
    client: Client,
    base: String,
    js: Js,
    session: Option<String>,
    driver_port: u16,
    _driver: Guarded,
    driver_log: PathBuf,
    // Chromium's profile; removed after the driver is gone.
    _profile: TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending the WebDriver session closes chromium cleanly (helpers
        // included); the process-group kill then catches whatever is left.
        if let Some(session) = &self.session {
            delete_session(self.driver_port, session);
        }
    }
}

/// `DELETE /session/<id>` on the chromedriver at `port`, blocking, best effort
/// (`Drop` may run while the test's runtime is panicking).
fn delete_session(port: u16, session: &str) {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(15)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let request = format!(
        "DELETE /session/{session} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_ok() {
        // chromedriver answers once chromium has quit; the first bytes of the
        // answer are enough (it may keep the connection open after them).
        let mut answer = [0u8; 512];
        let _ = stream.read(&mut answer);
    }
}

/// WebDriver capabilities for headless chromium with `options`.
fn capabilities(
    tools: &Tools,
    profile: &Path,
    options: BrowserOptions,
) -> serde_json::Map<String, Value> {
    let mut prefs = json!({
        "intl.accept_languages": options.lang,
        "credentials_enable_service": false,
        "profile.password_manager_enabled": false,
        "profile.password_manager_leak_detection": false,
    });
    if options.js == Js::Off {
        prefs["profile.managed_default_content_settings.javascript"] = json!(2);
    }
    let caps = json!({
        "browserName": "chrome",
        "pageLoadStrategy": "normal",
        "timeouts": {"pageLoad": 30_000, "script": 15_000, "implicit": 0},
        "goog:chromeOptions": {
            "binary": tools.chromium,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                format!("--window-size={},{}", options.width, options.height),
                format!("--lang={}", options.lang),
                format!("--user-data-dir={}", profile.display()),
            ],
            "prefs": prefs,
        },
    });
    match caps {
        Value::Object(map) => map,
        _ => unreachable!("capabilities are an object"),
    }
}

impl Browser {
    /// Starts chromedriver on a free port and a chromium session on it, for
    /// pages of `site`.
    pub async fn open(tools: &Tools, site: &Site, options: BrowserOptions) -> Self {
        Self::open_at(tools, &site.base, options).await
    }

    /// The same, for pages of the server at `base` (`http://127.0.0.1:<port>`).
    pub async fn open_at(tools: &Tools, base: &str, options: BrowserOptions) -> Self {
        let profile = tempfile::tempdir().expect("chromium profile dir");
        let driver_log = profile.path().join("chromedriver.log");
        let port = free_port();
        let mut command = Command::new(&tools.chromedriver);
        command
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", driver_log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", tools.chromedriver.display()));
        let mut driver = Guarded { child, group: true };
        let webdriver = format!("http://127.0.0.1:{port}");
        wait_until_up(
            &format!("{webdriver}/status"),
            "chromedriver",
            &mut driver,
            || read_log(&driver_log),
        )
        .await;
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities(tools, &profile.path().join("profile"), options))
            .connect(&webdriver)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "chromium did not start through chromedriver: {e}\n--- chromedriver log (tail)\n{}",
                    tail(&read_log(&driver_log), 4000)
                )
            });
        let session = client.session_id().await.ok().flatten();
        Self {
            client,
            base: base.to_owned(),
            js: options.js,
            session,
            driver_port: port,
            _driver: driver,
            driver_log,
            _profile: profile,
        }
    }

    /// Adds a virtual authenticator to the browser (WebDriver's WebAuthn
    /// extension): a platform authenticator with discoverable credentials
    /// and user verification, whose user always consents and is verified.
    /// Answers its id.
    pub async fn add_virtual_authenticator(&self) -> String {
        let command = AddVirtualAuthenticator {
            options: json!({
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": true,
                "hasUserVerification": true,
                "isUserVerified": true,
                "isUserConsenting": true,
            }),
        };
        let id = self.client.issue_cmd(command).await.unwrap_or_else(|e| {
            panic!(
                "no virtual authenticator: {e}\n--- chromedriver log (tail)\n{}",
                tail(&read_log(&self.driver_log), 4000)
            )
        });
        id.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("the authenticator's id, not {id}"))
    }

    /// Runs `script` in every page loaded from now on, before the page's
    /// own scripts (DevTools' `Page.addScriptToEvaluateOnNewDocument`): to
    /// make the browser look like one without some feature.
    pub async fn before_every_page(&self, script: &str) {
        let command = Cdp {
            cmd: "Page.addScriptToEvaluateOnNewDocument",
            params: json!({ "source": script }),
        };
        self.client
            .issue_cmd(command)
            .await
            .unwrap_or_else(|e| panic!("no script for new pages: {e}"));
    }

    /// Makes every page loaded from now on see a browser without passkey
    /// autofill (`PublicKeyCredential.isConditionalMediationAvailable()`
    /// answers false). Chromium's virtual authenticator answers a
    /// conditional request at once, as if the person had picked the passkey
    /// from the address field's suggestions; without this, the sign-in
    /// screen signs in by autofill before anything else can be tried.
    pub async fn without_passkey_autofill(&self) {
        self.before_every_page(
            "if (window.PublicKeyCredential) { \
                 PublicKeyCredential.isConditionalMediationAvailable = \
                     () => Promise.resolve(false); }",
        )
        .await;
    }

    /// The WebDriver client, for anything the helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Opens `path` (absolute URLs are taken as they are).
    pub async fn goto(&self, path: &str) {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        };
        self.client
            .goto(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot open {url}: {e}"));
    }

    /// The path of the page shown (without the query).
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.expect("current URL");
        url.path().to_owned()
    }

    /// Runs `script` in the page (also when the page's own JavaScript is off).
    pub async fn eval(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// What went wrong, for a failure message: where the browser is and what
    /// it shows.
    pub async fn describe(&self) -> String {
        let url = match self.client.current_url().await {
            Ok(url) => url.to_string(),
            Err(e) => format!("(no URL: {e})"),
        };
        let source = self.client.source().await.unwrap_or_default();
        format!(
            "at {url} (JavaScript {:?})\n--- page source\n{}\n--- chromedriver log (tail)\n{}",
            self.js,
            tail(&source, 6000),
            tail(&read_log(&self.driver_log), 2000)
        )
    }

    /// Waits until the page shown is `path` (ignoring the query).
    pub async fn wait_for_path(&self, path: &str) {
        self.wait_for_path_where(path, |p| p == path).await;
    }

    /// Waits until the path of the page shown satisfies `accept`.
    pub async fn wait_for_path_where(&self, what: &str, accept: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT_TIMEOUT;
        loop {
            if let Ok(url) = self.client.current_url().await {
                let ready = self
                    .client
                    .execute("return document.readyState", vec![])
                    .await
                    .is_ok_and(|state| state.as_str().is_some_and(|s| s != "loading"));
                if ready && accept(url.path()) {
                    return url.path().to_owned();
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "the browser did not reach {what} within {WAIT_TIMEOUT:?}; {}",
                    self.describe().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether an element matches `css`.
    pub async fn exists(&self, css: &str) -> bool {
        self.eval(
            "return document.querySelector(arguments[0]) !== null",
            vec![json!(css)],
        )
        .await
            == json!(true)
    }

    /// The rendered text of the first element matching `css`.
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element.text().await.unwrap_or_default(),
            Err(e) => panic!("no element {css}: {e}; {}", self.describe().await),
        }
    }

    /// An attribute of the first element matching `css`, as written.
    pub async fn attribute(&self, css: &str, name: &str) -> Option<String> {
        self.eval(
            "const e = document.querySelector(arguments[0]); \
             return e ? e.getAttribute(arguments[1]) : null",
            vec![json!(css), json!(name)],
        )
        .await
        .as_str()
        .map(str::to_owned)
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> usize {
        let count = self
            .eval(
                "return document.querySelectorAll(arguments[0]).length",
                vec![json!(css)],
            )
            .await;
        count
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or_default()
    }

    /// The rendered text of every element matching `css`, trimmed.
    pub async fn texts(&self, css: &str) -> Vec<String> {
        let texts = self
            .eval(
                "return [...document.querySelectorAll(arguments[0])] \
                 .map(e => e.innerText.trim())",
                vec![json!(css)],
            )
            .await;
        texts
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    }

    /// Waits until an element matching `css` is shown (it takes up room on
    /// the page).
    pub async fn wait_for_element(&self, css: &str) {
        let deadline = Instant::now() + WAIT_TIMEOUT;
        loop {
            let shown = self
                .client
                .execute(
                    "if (document.readyState === 'loading') return false; \
                     const e = document.querySelector(arguments[0]); \
                     if (!e) return false; \
                     const r = e.getBoundingClientRect(); \
                     return r.width > 0 && r.height > 0",
                    vec![json!(css)],
                )
                .await;
            if matches!(shown, Ok(Value::Bool(true))) {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "no {css} shown within {WAIT_TIMEOUT:?}; {}",
                    self.describe().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the first element matching `css`.
    pub async fn click(&self, css: &str) {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element
                .click()
                .await
                .unwrap_or_else(|e| panic!("click {css}: {e}")),
            Err(e) => panic!("no {css}: {e}; {}", self.describe().await),
        }
    }

    /// Opens the closed `<details>` around the first element matching
    /// `css`, as a person does: by clicking its summary (the account
    /// screen keeps each form behind its action).
    pub async fn reveal(&self, css: &str) {
        let closed = self
            .eval(
                "document.querySelectorAll('[data-test-reveal]') \
                   .forEach(d => d.removeAttribute('data-test-reveal')); \
                 const el = document.querySelector(arguments[0]); \
                 const out = []; \
                 for (let d = el && el.closest('details'); d; d = d.parentElement.closest('details')) \
                   { if (!d.open) out.unshift(d); } \
                 out.forEach((d, i) => d.setAttribute('data-test-reveal', i)); \
                 return out.length",
                vec![Value::from(css)],
            )
            .await
            .as_u64()
            .unwrap_or(0);
        for i in 0..closed {
            self.click(&format!("details[data-test-reveal=\"{i}\"] > summary"))
                .await;
        }
    }

    /// Types `value` into the field `#<id>`, replacing what it held (its
    /// `<details>` opened first).
    pub async fn fill(&self, id: &str, value: &str) {
        let css = format!("#{id}");
        self.reveal(&css).await;
        let field = match self.client.find(Locator::Css(&css)).await {
            Ok(field) => field,
            Err(e) => panic!("no field {css}: {e}; {}", self.describe().await),
        };
        field
            .clear()
            .await
            .unwrap_or_else(|e| panic!("clear {css}: {e}"));
        field
            .send_keys(value)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Chooses `value` for the field `#<id>`: an option of a select, or the
    /// radio button of that name and value.
    pub async fn choose(&self, id: &str, value: &str) {
        let css = format!("#{id}");
        if let Ok(element) = self.client.find(Locator::Css(&css)).await {
            let tag = element.tag_name().await.unwrap_or_default();
            if tag.eq_ignore_ascii_case("select") {
                element
                    .select_by_value(value)
                    .await
                    .unwrap_or_else(|e| panic!("choose {value:?} in {css}: {e}"));
                return;
            }
        }
        let radio = format!("input[name=\"{id}\"][value=\"{value}\"]");
        match self.client.find(Locator::Css(&radio)).await {
            Ok(button) => button
                .click()
                .await
                .unwrap_or_else(|e| panic!("click {radio}: {e}")),
            Err(e) => panic!(
                "no select {css} nor radio {radio}: {e}; {}",
                self.describe().await
            ),
        }
    }

    /// Clicks the submit button of the form posting to `action` (its
    /// `<details>` opened first).
    pub async fn submit(&self, action: &str) {
        let css = format!("form[action=\"{action}\"] button[type=submit]");
        self.reveal(&css).await;
        match self.client.find(Locator::Css(&css)).await {
            Ok(button) => button
                .click()
                .await
                .unwrap_or_else(|e| panic!("click {css}: {e}")),
            Err(e) => panic!("no {css}: {e}; {}", self.describe().await),
        }
    }

    /// Empties `#form-message` (if present) and marks the page, so that
    /// [`Browser::wait_for_message`] sees only the answer to what comes next
    /// and [`Browser::page_was_replaced`] tells whether a new page loaded.
    pub async fn mark_page(&self) {
        self.eval(
            "const m = document.getElementById('form-message'); \
             if (m) { m.textContent = ''; } \
             window.__gatehouseTestMark = true; return null",
            vec![],
        )
        .await;
    }

    /// Whether the page marked by [`Browser::mark_page`] was replaced by a
    /// newly loaded one.
    pub async fn page_was_replaced(&self) -> bool {
        self.eval("return window.__gatehouseTestMark !== true", vec![])
            .await
            == json!(true)
    }

    /// Waits until `#form-message` shows some text; answers it.
    pub async fn wait_for_message(&self) -> String {
        self.wait_for_text("#form-message").await
    }

    /// Waits until the first element matching `css` shows some text.
    pub async fn wait_for_text(&self, css: &str) -> String {
        let deadline = Instant::now() + WAIT_TIMEOUT;
        loop {
            let shown = self
                .client
                .execute(
                    "if (document.readyState === 'loading') return null; \
                     const e = document.querySelector(arguments[0]); \
                     return e ? e.innerText.trim() : null",
                    vec![json!(css)],
                )
                .await;
            if let Ok(Value::String(text)) = shown {
                if !text.is_empty() {
                    return text;
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "no text in {css} within {WAIT_TIMEOUT:?}; {}",
                    self.describe().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Signs in through the sign-in screen (does not wait for the answer).
    pub async fn sign_in(&self, email: &str, password: &str) {
        self.goto("/login").await;
        self.wait_for_path("/login").await;
        self.fill("email", email).await;
        self.fill("password", password).await;
        self.submit("/auth/login").await;
    }

    /// [`Browser::sign_in`] with "remember me" ticked.
    pub async fn sign_in_remembered(&self, email: &str, password: &str) {
        self.goto("/login").await;
        self.wait_for_path("/login").await;
        self.fill("email", email).await;
        self.fill("password", password).await;
        self.click("#remember").await;
        self.submit("/auth/login").await;
    }

    /// Drops the session cookie, as a browser does when it is closed; its
    /// remember-me cookie stays and signs it in again on the next page.
    pub async fn forget_session(&self) {
        self.client
            .delete_cookie("gatehouse_session")
            .await
            .unwrap_or_else(|e| panic!("delete the session cookie: {e}"));
    }

    /// Signs out through the confirm screen and waits for the home page.
    pub async fn sign_out(&self) {
        self.goto("/logout").await;
        self.wait_for_path("/logout").await;
        self.submit("/logout").await;
        self.wait_for_path("/").await;
    }

    /// Resizes the window so that its viewport is `width` wide and shows the
    /// whole document, then saves a PNG screenshot to `file`.
    pub async fn screenshot(&self, width: u32, file: &Path) {
        self.client
            .set_window_size(width, 900)
            .await
            .expect("resize window");
        let sizes = self
            .eval(
                "return [document.documentElement.scrollHeight, \
                 window.outerHeight - window.innerHeight]",
                vec![],
            )
            .await;
        let content = sizes[0].as_u64().unwrap_or(900);
        let chrome = sizes[1].as_u64().unwrap_or(0);
        let height = u32::try_from(content + chrome)
            .unwrap_or(900)
            .clamp(400, 4000);
        self.client
            .set_window_size(width, height)
            .await
            .expect("resize window");
        let png = self.client.screenshot().await.expect("screenshot");
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).expect("screenshot dir");
        }
        std::fs::write(file, png)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    }
}

/// `POST /session/{id}/webauthn/authenticator` (WebAuthn Level 2, "Add
/// Virtual Authenticator"), which fantoccini has no method for.
#[derive(Debug)]
struct AddVirtualAuthenticator {
    options: Value,
}

/// The URL of `path` under the session's endpoint.
fn session_endpoint(
    base_url: &url::Url,
    session_id: Option<&str>,
    path: &str,
) -> Result<url::Url, url::ParseError> {
    let session = session_id.unwrap_or_default();
    base_url.join(&format!("session/{session}/{path}"))
}

impl WebDriverCompatibleCommand for AddVirtualAuthenticator {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        session_endpoint(base_url, session_id, "webauthn/authenticator")
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (Method, Option<String>) {
        (Method::POST, Some(self.options.to_string()))
    }
}

/// `POST /session/{id}/goog/cdp/execute`: a Chrome DevTools Protocol
/// command, through chromedriver.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        session_endpoint(base_url, session_id, "goog/cdp/execute")
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (Method::POST, Some(body.to_string()))
    }
}

/// The last `n` bytes of `text` (at a character boundary).
fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
