//! The security activity log (`gatehouse_security_events`): one row per
//! event, kept for `auth.security_events_days`.

use super::{AuthEvent, Origin};
use sqlx::Row;

use crate::clock::rfc3339;
use crate::db::{Db, DbError, TextColumn};

/// Stores `event` as it came from `origin`, at the current UTC time.
pub async fn insert(db: &Db, event: &AuthEvent, origin: &Origin) -> Result<(), DbError> {
    let dialect = db.dialect();
    let sql = format!(
        "INSERT INTO gatehouse_security_events \
         (occurred_at, event, user_id, ip_address, user_agent, detail) \
         VALUES ({}, $1, $2, $3, $4, $5)",
        dialect.now_utc()
    );
    db.execute(
        sqlx::query(&dialect.placeholders(&sql))
            .bind(event.code())
            .bind(event.user_id())
            .bind(origin.ip().map(|ip| ip.to_string()))
            .bind(origin.user_agent().map(str::to_owned))
            .bind(detail(event, origin)),
    )
    .await?;
    Ok(())
}

/// One stored event as its user sees it on the account screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// When it happened, RFC 3339 in UTC.
    pub occurred_at: String,
    /// The stored name (`login`, `failed`, …).
    pub event: String,
    /// The client address, when a request caused it.
    pub ip_address: Option<String>,
}

/// The latest `limit` events of `user_id`, newest first.
pub async fn latest(db: &Db, user_id: i64, limit: i64) -> Result<Vec<StoredEvent>, DbError> {
    let dialect = db.dialect();
    let sql = format!(
        "SELECT {} AS at, event, ip_address FROM gatehouse_security_events \
         WHERE user_id = $1 ORDER BY occurred_at DESC, id DESC LIMIT $2",
        dialect.epoch_of("occurred_at")
    );
    let rows = db
        .fetch_all(sqlx::query(&dialect.placeholders(&sql)).bind(user_id).bind(limit))
        .await?;
    rows.iter()
        .map(|row| {
            let at: Option<i64> = row.try_get("at")?;
            Ok(StoredEvent {
                occurred_at: rfc3339(at.unwrap_or_default()),
                event: row.text("event")?.unwrap_or_default(),
                ip_address: row.text("ip_address")?,
            })
        })
        .collect()
}

/// The event's own detail, marked when an operator's command caused it.
fn detail(event: &AuthEvent, origin: &Origin) -> Option<String> {
    match (event.detail(), origin) {
        (detail, Origin::Request { .. }) => detail,
        (Some(detail), Origin::CommandLine) => Some(format!("{detail}, command line")),
        (None, Origin::CommandLine) => Some("command line".to_owned()),
    }
}

/// Deletes the events older than `days` days before `now` (Unix seconds).
pub async fn sweep(db: &Db, now: i64, days: u32) -> Result<u64, DbError> {
    let dialect = db.dialect();
    let sql = format!(
        "DELETE FROM gatehouse_security_events WHERE occurred_at < {}",
        dialect.utc_timestamp_at("$1")
    );
    db.execute(sqlx::query(&dialect.placeholders(&sql)).bind(now - i64::from(days) * 86_400))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_says_so_in_the_detail() {
        let ended = AuthEvent::SessionEnded {
            user_id: 1,
            ended: 3,
        };
        assert_eq!(
            detail(&ended, &Origin::CommandLine).as_deref(),
            Some("3 ended, command line")
        );
        let changed = AuthEvent::PasswordChanged { user_id: 1 };
        assert_eq!(
            detail(&changed, &Origin::CommandLine).as_deref(),
            Some("command line")
        );
        let from_request = Origin::Request {
            ip: "192.0.2.1".parse().expect("an address"),
            user_agent: None,
        };
        assert_eq!(detail(&changed, &from_request), None);
    }
}
