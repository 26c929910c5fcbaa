//! Mail as its recipient sees it: a per-test directory for the file transport,
//! polled until the background sender has written, every message parsed as
//! MIME (never by matching raw quoted-printable text).

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use mail_parser::{MessageParser, MimeHeaders, PartType};
use rocket::figment::Figment;
use rocket::http::{ContentType, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use serde_json::json;
use tempfile::TempDir;

use crate::helpers::{figment, spawn_app_with, TestApp};

/// How long a test waits for the background sender.
pub const MAIL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a test waits before concluding that no (further) mail comes.
pub const QUIET_WAIT: Duration = Duration::from_millis(1000);

/// The mail directory of one test (`mail.transport = "file"`).
pub struct Mailbox {
    dir: TempDir,
}

impl Mailbox {
    /// A new, empty mail directory.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("mail dir"),
        }
    }

    /// Where the `.eml` files land.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `figment` with the file transport writing into this mailbox.
    pub fn configure(&self, figment: Figment) -> Figment {
        figment
            .merge(("mail.transport", "file"))
            .merge(("mail.dir", self.path().display().to_string()))
    }

    /// Every complete message delivered so far, oldest first.
    pub fn mails(&self) -> Vec<Mail> {
        read_mails(self.path())
    }

    /// Waits until at least `n` messages are there; answers all of them.
    pub async fn wait_for(&self, n: usize) -> Vec<Mail> {
        wait_for_mails(self.path(), n).await
    }

    /// Waits for the message to `address` whose subject is `subject`.
    pub async fn wait_for_mail(&self, address: &str, subject: &str) -> Mail {
        let deadline = Instant::now() + MAIL_TIMEOUT;
        loop {
            if let Some(mail) = self
                .mails()
                .into_iter()
                .find(|m| m.to == address && m.subject == subject)
            {
                return mail;
            }
            assert!(
                Instant::now() < deadline,
                "no mail {subject:?} to {address} within {MAIL_TIMEOUT:?}; have: {:?}",
                summary(&self.mails())
            );
            rocket::tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Gives the background sender time, then answers what was delivered:
    /// for asserting that something was *not* sent.
    pub async fn after_quiet_wait(&self) -> Vec<Mail> {
        rocket::tokio::time::sleep(QUIET_WAIT).await;
        self.mails()
    }
}

/// Waits until `dir` holds at least `n` complete messages; answers them all.
pub async fn wait_for_mails(dir: &Path, n: usize) -> Vec<Mail> {
    let deadline = Instant::now() + MAIL_TIMEOUT;
    loop {
        let mails = read_mails(dir);
        if mails.len() >= n {
            return mails;
        }
        assert!(
            Instant::now() < deadline,
            "expected {n} mail(s) in {} within {MAIL_TIMEOUT:?}; have: {:?}",
            dir.display(),
            summary(&mails)
        );
        rocket::tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The complete messages among the files of `dir` (a file still being
/// written is skipped), oldest first.
pub fn read_mails(dir: &Path) -> Vec<Mail> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.path())
        .map(|p| {
            let modified = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (modified, p)
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|(_, p)| std::fs::read(&p).ok())
        .filter_map(|raw| Mail::parse(&raw))
        .collect()
}

fn summary(mails: &[Mail]) -> Vec<String> {
    mails
        .iter()
        .map(|m| format!("{} → {}", m.subject, m.to))
        .collect()
}

/// One delivered message, decoded.
#[derive(Debug, Clone)]
pub struct Mail {
    /// Sender address.
    pub from: String,
    /// Sender display name.
    pub from_name: Option<String>,
    /// Recipient address.
    pub to: String,
    /// Recipient display name.
    pub to_name: Option<String>,
    /// Decoded subject.
    pub subject: String,
    /// Content type of the whole message (`multipart/alternative`).
    pub content_type: String,
    /// Content types of the leaf parts, in order.
    pub part_types: Vec<String>,
    /// The decoded `text/plain` part.
    pub text: String,
    /// The decoded `text/html` part.
    pub html: String,
}

fn content_type_of(part: &impl MimeHeaders<'static>) -> String {
    part.content_type()
        .map(|ct| {
            format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or_default()).to_ascii_lowercase()
        })
        .unwrap_or_default()
}

impl Mail {
    /// Parses a message; `None` unless it is complete (both bodies present).
    pub fn parse(raw: &[u8]) -> Option<Self> {
        let message = MessageParser::default().parse(raw)?.into_owned();
        let content_type = content_type_of(message.root_part());
        let mut part_types = Vec::new();
        let (mut text, mut html) = (None, None);
        for part in &message.parts {
            match &part.body {
                PartType::Multipart(_) => continue,
                PartType::Text(t) => {
                    text.get_or_insert_with(|| t.to_string());
                }
                PartType::Html(h) => {
                    html.get_or_insert_with(|| h.to_string());
                }
                _ => {}
            }
            part_types.push(content_type_of(part));
        }
        let from = message.from()?.first()?;
        let to = message.to()?.first()?;
        Some(Self {
            from: from.address()?.to_owned(),
            from_name: from.name().map(str::to_owned),
            to: to.address()?.to_owned(),
            to_name: to.name().map(str::to_owned),
            subject: message.subject().unwrap_or_default().to_owned(),
            content_type,
            part_types,
            text: text?,
            html: html?,
        })
    }

    /// The absolute links in the plain-text part.
    pub fn text_links(&self) -> Vec<String> {
        self.text
            .split_whitespace()
            .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
            .map(|w| w.trim_end_matches(['.', ',', ')']).to_owned())
            .collect()
    }

    /// The `href` targets in the HTML part, entities decoded (as a mail
    /// client follows them).
    pub fn html_links(&self) -> Vec<String> {
        self.html
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| rest.split_once('"'))
            .map(|(href, _)| html_escape::decode_html_entities(href).into_owned())
            .collect()
    }

    /// The HTML part with its tags removed and entities decoded: the words a
    /// reader sees.
    pub fn html_words(&self) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in self.html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    out.push(' ');
                }
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        let decoded = html_escape::decode_html_entities(&out).into_owned();
        decoded.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The reset link of a reset-link mail (the same in both parts).
    pub fn reset_link(&self) -> ResetLink {
        let text = self
            .text_links()
            .into_iter()
            .find(|l| l.contains("/password/reset/"))
            .unwrap_or_else(|| panic!("no reset link in the text part:\n{}", self.text));
        assert!(
            self.html_links().contains(&text),
            "the HTML part links to {text}; it has {:?}",
            self.html_links()
        );
        ResetLink::parse(&text)
    }
}

/// A mailed reset link, taken apart.
#[derive(Debug, Clone)]
pub struct ResetLink {
    /// The link as mailed.
    pub url: String,
    /// Path and query, for the local client.
    pub path_and_query: String,
    /// The token (last path segment).
    pub token: String,
    /// The `email` query parameter, decoded.
    pub email: String,
}

impl ResetLink {
    /// Parses a mailed link.
    pub fn parse(link: &str) -> Self {
        let url = url::Url::parse(link).unwrap_or_else(|e| panic!("{link}: {e}"));
        let segments: Vec<&str> = url.path_segments().expect("path").collect();
        assert_eq!(segments.len(), 3, "{link}");
        assert_eq!(&segments[..2], ["password", "reset"], "{link}");
        let email = url
            .query_pairs()
            .find(|(k, _)| k == "email")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("no email in {link}"));
        Self {
            url: link.to_owned(),
            path_and_query: format!("{}?{}", url.path(), url.query().unwrap_or_default()),
            token: segments[2].to_owned(),
            email,
        }
    }
}

/// A reference host whose mail lands in a fresh mailbox.
pub async fn spawn_mail_app() -> (TestApp, Mailbox) {
    spawn_mail_app_with(|f| f).await
}

/// A reference host with extra configuration, mail in a fresh mailbox.
pub async fn spawn_mail_app_with(configure: impl FnOnce(Figment) -> Figment) -> (TestApp, Mailbox) {
    let mailbox = Mailbox::new();
    let app = spawn_app_with(|f| configure(mailbox.configure(f))).await;
    (app, mailbox)
}

/// Another reference host on `app`'s database with the same mailbox: a
/// second browser (its client keeps no cookies) behind a load balancer.
pub async fn second_instance(app: &TestApp, mailbox: &Mailbox) -> Client {
    Client::untracked(gatehouse_host::rocket(
        mailbox.configure(figment(&app.database_url)),
    ))
    .await
    .expect("second instance ignites")
}

/// `POST /auth/forgot-password` (JSON).
pub async fn forgot<'c>(client: &'c Client, email: &str) -> LocalResponse<'c> {
    client
        .post("/auth/forgot-password")
        .header(ContentType::JSON)
        .body(json!({ "email": email }).to_string())
        .dispatch()
        .await
}

/// `POST /auth/reset-password` (JSON) with a confirmed password.
pub async fn reset<'c>(
    client: &'c Client,
    token: &str,
    email: &str,
    password: &str,
) -> LocalResponse<'c> {
    reset_with_headers(client, token, email, password, &[]).await
}

/// [`reset`] with extra request headers.
pub async fn reset_with_headers<'c>(
    client: &'c Client,
    token: &str,
    email: &str,
    password: &str,
    headers: &[(&'static str, &'static str)],
) -> LocalResponse<'c> {
    let mut request = client
        .post("/auth/reset-password")
        .header(ContentType::JSON)
        .body(
            json!({
                "token": token,
                "email": email,
                "password": password,
                "password_confirmation": password,
            })
            .to_string(),
        );
    for (name, value) in headers {
        request = request.header(rocket::http::Header::new(*name, *value));
    }
    request.dispatch().await
}

/// The subject of the English reset-link mail.
pub const RESET_SUBJECT: &str = "Reset your password";
/// The subject of the English password-changed mail.
pub const CHANGED_SUBJECT: &str = "Your password was changed";

/// Asks for a reset link for `email` and answers the mailed link.
pub async fn request_link(app: &TestApp, mailbox: &Mailbox, email: &str) -> ResetLink {
    request_link_via(&app.client, mailbox, email).await
}

/// Asks for a reset link for `email` from a guest on `client`.
pub async fn request_link_via(client: &Client, mailbox: &Mailbox, email: &str) -> ResetLink {
    let before = mailbox
        .mails()
        .iter()
        .filter(|m| m.to == email && m.subject == RESET_SUBJECT)
        .count();
    assert_eq!(forgot(client, email).await.status(), Status::Ok);
    let deadline = Instant::now() + MAIL_TIMEOUT;
    loop {
        let mails: Vec<Mail> = mailbox
            .mails()
            .into_iter()
            .filter(|m| m.to == email && m.subject == RESET_SUBJECT)
            .collect();
        if mails.len() > before {
            return mails.last().expect("a mail").reset_link();
        }
        assert!(
            Instant::now() < deadline,
            "no reset link mailed to {email} within {MAIL_TIMEOUT:?}"
        );
        rocket::tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// An aiosmtpd server on loopback, delivering into a Maildir; stopped on drop.
pub struct SmtpServer {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
    maildir: tempfile::TempDir,
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SmtpServer {
    /// Starts `python3 -m aiosmtpd` with the Mailbox handler; `Err` says why not.
    pub fn start() -> Result<Self, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        Self::start_on(port)
    }

    /// Starts the server on a given loopback port.
    pub fn start_on(port: u16) -> Result<Self, String> {
        let probe = Command::new("python3")
            .args(["-c", "import aiosmtpd"])
            .output()
            .map_err(|e| format!("python3 cannot be run: {e}"))?;
        if !probe.status.success() {
            return Err(format!(
                "aiosmtpd is not installed (python3 -m pip install aiosmtpd): {}",
                String::from_utf8_lossy(&probe.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
            ));
        }
        let maildir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let log =
            std::fs::File::create(maildir.path().join("server.log")).map_err(|e| e.to_string())?;
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-d", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir.path().join("Maildir"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("python3 -m aiosmtpd cannot be started: {e}"))?;
        let mut server = Self {
            child,
            port,
            maildir,
        };
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("aiosmtpd exited ({status}): {}", server.log()));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "aiosmtpd did not listen on {address}: {}",
                    server.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for `n` delivered messages; on time-out, shows the server's log.
    pub async fn wait_for(&self, n: usize) -> Vec<Mail> {
        let deadline = Instant::now() + MAIL_TIMEOUT;
        loop {
            let mails = read_mails(&self.new_mail());
            if mails.len() >= n {
                return mails;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} mail(s) reached the SMTP server within {MAIL_TIMEOUT:?}; its log:\n{}",
                mails.len(),
                self.log()
            );
            rocket::tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// `figment` sending through this server (and `mail.from` set).
    pub fn configure(&self, figment: Figment) -> Figment {
        figment
            .merge(("mail.transport", "smtp"))
            .merge(("mail.host", "127.0.0.1"))
            .merge(("mail.port", self.port))
            .merge(("mail.tls", "none"))
            .merge(("mail.from", "Gatehouse <no-reply@gatehouse.test>"))
    }

    /// Every message delivered so far.
    pub fn mails(&self) -> Vec<Mail> {
        read_mails(&self.new_mail())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.maildir.path().join("server.log")).unwrap_or_default()
    }

    /// Where delivered messages appear.
    pub fn new_mail(&self) -> std::path::PathBuf {
        self.maildir.path().join("Maildir").join("new")
    }
}

/// Whether this run is CI, where every service must be there.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}
