//! `gatehouse_remember`: one row per remember-me cookie (per device). The
//! row is found by the cookie's selector; only the SHA-256 of its validator
//! is stored, so a leaked table signs nobody in. Each row names the session
//! the cookie last signed in, so ending that session voids the cookie.

use sqlx::Row;

use crate::db::{Db, DbError, TextColumn};

/// A stored remember record, as the check needs it.
pub struct Remembered {
    /// The user it signs in.
    pub user_id: i64,
    /// SHA-256 hex of the cookie's validator.
    pub validator_hash: String,
    /// Unix seconds it was issued.
    pub created_at: i64,
}

/// A new record for `user_id`, issued with the session stored under
/// `session_id`.
pub async fn insert(
    db: &Db,
    selector: &str,
    validator_hash: &str,
    user_id: i64,
    session_id: &str,
    now: i64,
) -> Result<(), DbError> {
    db.execute(
        db.query(
            "INSERT INTO gatehouse_remember \
             (selector, validator_hash, user_id, session_id, created_at, last_used_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(selector.to_owned())
        .bind(validator_hash.to_owned())
        .bind(user_id)
        .bind(session_id.to_owned())
        .bind(now)
        .bind(now),
    )
    .await?;
    Ok(())
}

/// The record of `selector`.
pub async fn find(db: &Db, selector: &str) -> Result<Option<Remembered>, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT user_id, validator_hash, created_at FROM gatehouse_remember \
                 WHERE selector = $1",
            )
            .bind(selector.to_owned()),
        )
        .await?;
    row.map(|row| {
        Ok(Remembered {
            user_id: row.try_get("user_id")?,
            validator_hash: row.text("validator_hash")?.unwrap_or_default(),
            created_at: row.try_get("created_at")?,
        })
    })
    .transpose()
}

/// The cookie of `selector` signed in (or stayed with) the session stored
/// under `session_id`. `false` when the record is gone (voided meanwhile).
pub async fn link(db: &Db, selector: &str, session_id: &str, now: i64) -> Result<bool, DbError> {
    let updated = db
        .execute(
            db.query(
                "UPDATE gatehouse_remember SET session_id = $1, last_used_at = $2 \
                 WHERE selector = $3",
            )
            .bind(session_id.to_owned())
            .bind(now)
            .bind(selector.to_owned()),
        )
        .await?;
    Ok(updated > 0)
}

/// Voids the cookie of `selector`.
pub async fn delete(db: &Db, selector: &str) -> Result<(), DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE selector = $1")
            .bind(selector.to_owned()),
    )
    .await?;
    Ok(())
}

/// Voids the cookie that signed in the session stored under `session_id`.
pub async fn delete_for_session(db: &Db, session_id: &str) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE session_id = $1")
            .bind(session_id.to_owned()),
    )
    .await
}

/// Voids every cookie of `user_id`.
pub async fn delete_for_user(db: &Db, user_id: i64) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE user_id = $1")
            .bind(user_id),
    )
    .await
}

/// Voids every cookie of `user_id` but the one of `keep`.
pub async fn delete_others(db: &Db, user_id: i64, keep: &str) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE user_id = $1 AND selector <> $2")
            .bind(user_id)
            .bind(keep.to_owned()),
    )
    .await
}

/// Removes records issued before `issued_before` (Unix seconds): their
/// cookies have expired.
pub async fn sweep(db: &Db, issued_before: i64) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE created_at < $1")
            .bind(issued_before),
    )
    .await
}
