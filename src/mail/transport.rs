//! The configured way out: SMTP (pooled), `.eml` files, or the log.

use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncFileTransport, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::ExposeSecret;

use crate::config::{MailSettings, MailTls, MailTransport};

/// A mail transport built from `[mail]`.
#[derive(Clone)]
pub enum Transport {
    /// SMTP relay with a connection pool.
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// One `.eml` file per message.
    File(AsyncFileTransport<Tokio1Executor>),
    /// The log only.
    Log,
}

impl Transport {
    /// Builds the transport; errors name the key at fault.
    pub fn from_settings(settings: &MailSettings) -> Result<Self, String> {
        match settings.transport {
            MailTransport::Log => Ok(Self::Log),
            MailTransport::File => {
                std::fs::create_dir_all(&settings.dir).map_err(|e| {
                    format!(
                        "invalid configuration `mail.dir`: cannot create {}: {e}",
                        settings.dir.display()
                    )
                })?;
                Ok(Self::File(AsyncFileTransport::new(&settings.dir)))
            }
            MailTransport::Smtp => {
                let host = settings.host.as_str();
                let invalid = |e: lettre::transport::smtp::Error| {
                    format!("invalid configuration `mail.host`: {e}")
                };
                let mut builder = match settings.tls {
                    MailTls::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host)
                        .map_err(invalid)?,
                    MailTls::Tls => {
                        AsyncSmtpTransport::<Tokio1Executor>::relay(host).map_err(invalid)?
                    }
                    MailTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host),
                };
                if let Some(port) = settings.port {
                    builder = builder.port(port);
                }
                if let (Some(user), Some(password)) = (&settings.username, &settings.password) {
                    builder = builder.credentials(Credentials::new(
                        user.clone(),
                        password.expose_secret().to_owned(),
                    ));
                }
                Ok(Self::Smtp(builder.build()))
            }
        }
    }

    /// Sends one message.
    pub async fn send(&self, message: &Message) -> Result<(), String> {
        match self {
            Self::Smtp(smtp) => smtp
                .send(message.clone())
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Self::File(file) => file
                .send(message.clone())
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Self::Log => {
                let to: Vec<String> = message
                    .envelope()
                    .to()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                tracing::info!(to = ?to, "mail (log transport):\n{}", String::from_utf8_lossy(&message.formatted()));
                Ok(())
            }
        }
    }
}
