//! The security activity log (`gatehouse_security_events`): one row per
//! event, kept for `auth.security_events_days`.

use super::{AuthEvent, Origin};
use crate::db::{Db, DbError};

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
        sqlx::query(dialect.placeholders(&sql))
            .bind(event.code())
            .bind(event.user_id())
            .bind(origin.ip().map(|ip| ip.to_string()))
            .bind(origin.user_agent().map(str::to_owned))
            .bind(detail(event, origin)),
    )
    .await?;
    Ok(())
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
    db.execute(sqlx::query(dialect.placeholders(&sql)).bind(now - i64::from(days) * 86_400))
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
