//! Outgoing mail: notifications rendered from Tera templates with Fluent
//! wording, handed to a background sender so no request ever waits for a mail
//! server. Mail that cannot be sent is retried with exponential back-off and
//! logged at every failure; it is never silently dropped.

mod notifications;
mod transport;

pub use notifications::{Composer, Notification};
pub use transport::Transport;

use std::time::Duration;

use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::Message;
use tokio::sync::mpsc;

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
    queue: mpsc::UnboundedSender<Message>,
    from: Mailbox,
}

impl Mailer {
    /// Starts the sender task for the configured transport. Must be called
    /// inside the Tokio runtime.
    pub fn start(settings: &MailSettings) -> Result<Self, String> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e| format!("invalid configuration `mail.from`: {e}"))?;
        let transport = Transport::from_settings(settings)?;
        let (queue, mut incoming) = mpsc::unbounded_channel::<Message>();
        tokio::spawn(async move {
            while let Some(message) = incoming.recv().await {
                let transport = transport.clone();
                tokio::spawn(async move { deliver(&transport, message).await });
            }
        });
        Ok(Self { queue, from })
    }

    /// Queues `notification` for `to`; returns at once.
    pub fn send(&self, to: Mailbox, notification: Notification) {
        let message = Message::builder()
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
            );
        match message {
            Ok(message) => {
                if self.queue.send(message).is_err() {
                    tracing::error!("mail sender has stopped; a message was not queued");
                }
            }
            Err(e) => tracing::error!(error = %e, "mail could not be built"),
        }
    }
}

async fn deliver(transport: &Transport, message: Message) {
    let mut attempt = 0;
    loop {
        match transport.send(&message).await {
            Ok(()) => return,
            Err(e) if attempt < BACKOFF.len() => {
                tracing::warn!(error = %e, attempt = attempt + 1, "mail not sent; retrying");
                tokio::time::sleep(BACKOFF[attempt]).await;
                attempt += 1;
            }
            Err(e) => {
                tracing::error!(error = %e, attempts = attempt + 1, "mail could not be sent; giving up");
                return;
            }
        }
    }
}
