//! Outgoing mail: notifications rendered from Tera templates with Fluent
//! wording, handed to a background sender so no request ever waits for a mail
//! server. Mail that cannot be sent is retried with exponential back-off and
//! logged at every failure; it is never silently dropped.

mod notifications;
mod transport;

pub use notifications::{Composer, Notice, Notification};
pub use transport::Transport;

use std::time::Duration;

use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::Message;
use tracing::Instrument;

use crate::metrics::Metrics;
use crate::config::MailSettings;

/// Delays before each retry of a message that could not be sent.
const BACKOFF: [Duration; 6] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
    Duration::from_secs(32),
];

/// A handle on the background sender; cheap to clone.
#[derive(Clone)]
pub struct Mailer {
    transport: Transport,
    from: Mailbox,
    metrics: Metrics,
}

impl Mailer {
    /// The sender for the configured transport.
    pub fn start(settings: &MailSettings) -> Result<Self, String> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e| format!("invalid configuration `mail.from`: {e}"))?;
        let transport = Transport::from_settings(settings)?;
        Ok(Self {
            transport,
            from,
            metrics: Metrics::off(),
        })
    }

    /// This sender, each mail counted in `metrics` by kind and result.
    pub fn counted_in(mut self, metrics: &Metrics) -> Self {
        self.metrics = metrics.clone();
        self
    }

    /// Queues `notification` for `to`; the request goes on at once.
    pub fn send(&self, to: Mailbox, notification: Notification) {
        let kind = notification.kind.clone();
        match self.message(to, notification) {
            Ok(message) => {
                let transport = self.transport.clone();
                let metrics = self.metrics.clone();
                let span = tracing::info_span!("mail.send", kind = kind.as_str());
                tokio::spawn(
                    async move {
                        let sent = deliver(&transport, message).await;
                        metrics.mail(&kind, sent);
                    }
                    .instrument(span),
                );
            }
            Err(e) => tracing::error!(error = %e, "mail could not be built"),
        }
    }

    /// Sends `notification` to `to` and waits until the relay took it,
    /// retrying with back-off; an error once every retry failed. For work
    /// that is kept until its mail is out (a reset link).
    pub async fn deliver(&self, to: Mailbox, notification: Notification) -> Result<(), String> {
        let kind = notification.kind.clone();
        let message = self.message(to, notification)?;
        let span = tracing::info_span!("mail.send", kind = kind.as_str());
        let sent = deliver(&self.transport, message).instrument(span).await;
        self.metrics.mail(&kind, sent);
        if sent {
            Ok(())
        } else {
            Err("the mail could not be sent".to_owned())
        }
    }

    fn message(&self, to: Mailbox, notification: Notification) -> Result<Message, String> {
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(notification.subject)
            .multipart(
                MultiPart::alternative()
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_PLAIN)
                            .body(notification.text),
                    )
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_HTML)
                            .body(notification.html),
                    ),
            )
            .map_err(|e| e.to_string())
    }
}

/// Sends `message`, retrying with back-off; whether it was sent.
async fn deliver(transport: &Transport, message: Message) -> bool {
    let mut attempt = 0;
    loop {
        match transport.send(&message).await {
            Ok(()) => return true,
            Err(e) if attempt < BACKOFF.len() => {
                tracing::warn!(error = %e, attempt = attempt + 1, "mail not sent; retrying");
                tokio::time::sleep(BACKOFF[attempt]).await;
                attempt += 1;
            }
            Err(e) => {
                tracing::error!(error = %e, attempts = attempt + 1, "mail could not be sent; giving up");
                return false;
            }
        }
    }
}

/// `Name <address>` for a user.
pub fn mailbox(name: &str, email: &str) -> Result<Mailbox, String> {
    let address = email
        .parse()
        .map_err(|e| format!("stored address {email:?} is not deliverable: {e}"))?;
    Ok(Mailbox::new(Some(name.to_owned()), address))
}
