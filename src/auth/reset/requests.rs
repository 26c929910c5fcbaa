//! Answered forgot-password requests, kept in `gatehouse_reset_requests`
//! until their work is done.
//!
//! The route stores the request and answers; a worker on every instance
//! then looks the account up, issues the token and sends the mail, and only
//! deletes the request once the mail is out (or there is nothing to send).
//! A crash after the 200 therefore loses nothing: the next instance, or the
//! restarted one, finds the request and finishes it. Known and unknown
//! addresses cost the request the same single insert.

use std::sync::Arc;
use std::time::Duration;

use sqlx::Row;
use tokio::sync::Notify;

use super::broker;
use crate::mail::mailbox;
use crate::auth::users;
use crate::clock::unix_now;
use crate::config::Settings;
use crate::db::{Db, DbError, TextColumn};
use crate::domain::Email;
use crate::i18n::Language;
use crate::mail::{Composer, Mailer};

/// A claimed request is left to its worker this long (seconds), more than a
/// mail's whole back-off; after that another worker may take it over.
const LEASE_SECONDS: i64 = 90;
/// How often a worker looks for requests another instance left behind.
const POLL: Duration = Duration::from_secs(5);
/// Tries before a request whose mail never leaves is given up (and logged).
const MAX_ATTEMPTS: i64 = 5;
/// Requests claimed per look.
const BATCH: i64 = 32;

/// The queue of reset requests: stores them and works them off.
#[derive(Clone)]
pub struct ResetRequests {
    db: Db,
    settings: Arc<Settings>,
    mailer: Mailer,
    composer: Arc<Composer>,
    wake: Arc<Notify>,
}

/// One stored request, as claimed.
struct Request {
    id: i64,
    email: String,
    language: String,
    /// Tries before this one.
    attempts: i64,
}

impl ResetRequests {
    /// The queue over `db`, mailing with `mailer`.
    pub fn new(db: Db, settings: Arc<Settings>, mailer: Mailer, composer: Arc<Composer>) -> Self {
        Self {
            db,
            settings,
            mailer,
            composer,
            wake: Arc::new(Notify::new()),
        }
    }

    /// Stores a request for `email`; once this returns, the request is kept
    /// whatever happens to the process.
    pub async fn enqueue(&self, email: &Email, language: Language) -> Result<(), DbError> {
        let now = unix_now();
        self.db
            .execute(
                self.db
                    .query(
                        "INSERT INTO gatehouse_reset_requests \
                         (email, language, requested_at, attempts, run_after) \
                         VALUES ($1, $2, $3, 0, $4)",
                    )
                    .bind(email.as_str().to_owned())
                    .bind(language.tag())
                    .bind(now)
                    .bind(now),
            )
            .await?;
        self.wake.notify_one();
        Ok(())
    }

    /// Works requests off until the process ends: at once when this
    /// instance stored one, and every few seconds for those another
    /// instance left.
    pub async fn run(self) {
        loop {
            match self.claim_due().await {
                Ok(claimed) => {
                    let full = claimed.len() as i64 == BATCH;
                    for request in claimed {
                        let queue = self.clone();
                        tokio::spawn(async move { queue.finish(request).await });
                    }
                    if full {
                        continue;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reset requests could not be read"),
            }
            let _ = tokio::time::timeout(POLL, self.wake.notified()).await;
        }
    }

    /// Claims the requests that are due: each one by one conditional update,
    /// so of several instances exactly one takes it.
    async fn claim_due(&self) -> Result<Vec<Request>, DbError> {
        let now = unix_now();
        let limit = format!(
            "SELECT id, email, language, attempts FROM gatehouse_reset_requests \
             WHERE run_after <= $1 ORDER BY id LIMIT {BATCH}"
        );
        let limit = self.db.dialect().placeholders(&limit);
        let rows = self.db.fetch_all(sqlx::query(&limit).bind(now)).await?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let request = Request {
                id: row.try_get("id")?,
                email: row.text("email")?.unwrap_or_default(),
                language: row.text("language")?.unwrap_or_default(),
                attempts: row.try_get::<i64, _>("attempts")?,
            };
            let taken = self
                .db
                .execute(
                    self.db
                        .query(
                            "UPDATE gatehouse_reset_requests \
                             SET attempts = attempts + 1, run_after = $1 \
                             WHERE id = $2 AND run_after <= $3",
                        )
                        .bind(now + LEASE_SECONDS)
                        .bind(request.id)
                        .bind(now),
                )
                .await?;
            if taken == 1 {
                claimed.push(request);
            }
        }
        Ok(claimed)
    }

    /// Does a claimed request's work; deletes it when done or hopeless.
    async fn finish(&self, request: Request) {
        let done = match self.work(&request).await {
            Ok(()) => true,
            Err(e) if request.attempts + 1 >= MAX_ATTEMPTS => {
                tracing::error!(error = %e, attempts = request.attempts + 1, "reset link could not be sent; giving up");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "reset link not sent yet; it will be tried again");
                false
            }
        };
        if done {
            let deleted = self
                .db
                .execute(
                    self.db
                        .query("DELETE FROM gatehouse_reset_requests WHERE id = $1")
                        .bind(request.id),
                )
                .await;
            if let Err(e) = deleted {
                tracing::warn!(error = %e, "a finished reset request was not deleted");
            }
        }
    }

    async fn work(&self, request: &Request) -> Result<(), String> {
        let Some(email) = Email::parse(&request.email) else {
            return Ok(());
        };
        let language = Language::from_tag(&request.language).unwrap_or(Language::En);
        let Some(user) = users::find_by_email(&self.db, &email)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok(());
        };
        let auth = &self.settings.auth;
        // A retry is the same request: its first try may have issued a token
        // whose mail never left, which the quiet period must not keep back.
        let quiet = match request.attempts {
            0 => auth.reset_throttle_seconds,
            _ => 0,
        };
        let Some(token) = broker::issue(&self.db, &email, quiet)
            .await
            .map_err(|e| e.to_string())?
        else {
            tracing::info!("reset link requested again within the quiet period; no mail sent");
            return Ok(());
        };
        let link = format!(
            "{}?email={}",
            self.settings
                .absolute(&format!("/password/reset/{}", token.expose())),
            percent_encoding::utf8_percent_encode(
                email.as_str(),
                percent_encoding::NON_ALPHANUMERIC
            )
        );
        let mail =
            self.composer
                .reset_link(language, &user.name, &link, auth.reset_token_minutes)?;
        self.mailer
            .deliver(mailbox(&user.name, &user.email)?, mail)
            .await
    }
}
