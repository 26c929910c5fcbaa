//! One connection of a watcher's own to a PostgreSQL server, for the short
//! questions that tell whether it accepts writes and where its WAL stands.

use std::time::Duration;

use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use super::pg_url::client_config;

/// How long connecting, and then one question, may take.
const ASK_WITHIN: Duration = Duration::from_secs(1);

/// Asks one server questions over a connection opened when missing and
/// dropped when it fails.
pub(super) struct Asker {
    url: String,
    client: Option<Client>,
}

impl Asker {
    /// An asker of the server at `url`; nothing is opened yet.
    pub(super) fn new(url: &str) -> Asker {
        Asker {
            url: url.to_owned(),
            client: None,
        }
    }

    /// The first column of the first row `question` answers (`Some(None)`
    /// for SQL null); `None` when the server could not be reached or did
    /// not answer within a second.
    pub(super) async fn ask(&mut self, question: &str) -> Option<Option<String>> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.client = connect(&self.url).await;
        }
        let asked = self.client.as_ref()?.simple_query(question);
        let answer = tokio::time::timeout(ASK_WITHIN, asked).await.ok().and_then(Result::ok);
        let Some(messages) = answer else {
            self.client = None;
            return None;
        };
        messages.iter().find_map(|message| match message {
            SimpleQueryMessage::Row(row) => Some(row.get(0).map(str::to_owned)),
            _ => None,
        })
    }

    /// Whether the server accepts writes (is not in recovery); `None` when
    /// it did not answer.
    pub(super) async fn accepts_writes(&mut self) -> Option<bool> {
        let answer = self.ask("SELECT pg_is_in_recovery()::text").await?;
        Some(answer.as_deref() == Some("false"))
    }
}

async fn connect(url: &str) -> Option<Client> {
    let mut config = client_config(url).ok()?;
    config.connect_timeout(ASK_WITHIN);
    let connected = tokio::time::timeout(ASK_WITHIN * 2, config.connect(NoTls)).await;
    let (client, connection) = connected.ok()?.ok()?;
    tokio::spawn(connection);
    Some(client)
}
