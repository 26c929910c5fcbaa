//! Reset tokens in `password_reset_tokens` (Laravel's shape): at most one live
//! token per address, 256 random bits, only the SHA-256 stored, single use,
//! valid for `auth.reset_token_minutes`.

use sqlx::Row;
use subtle::ConstantTimeEq;

use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, Email, SecretToken};

/// Issues a new token for `email`, unless one was issued less than
/// `quiet_seconds` ago (then `None`: no new mail).
pub async fn issue(
    db: &Db,
    email: &Email,
    quiet_seconds: u32,
) -> Result<Option<SecretToken>, DbError> {
    let d = db.dialect();
    let sql = format!(
        "SELECT {} AS issued FROM password_reset_tokens WHERE email = $1",
        d.epoch_of("created_at")
    );
    let existing = db
        .fetch_optional(sqlx::query(d.placeholders(&sql)).bind(email.as_str().to_owned()))
        .await?;
    if let Some(row) = existing {
        let issued: i64 = row.try_get("issued")?;
        if unix_now() - issued < i64::from(quiet_seconds) {
            return Ok(None);
        }
    }
    let token = SecretToken::generate();
    let mut tx = db.pool().begin().await?;
    sqlx::query(d.placeholders("DELETE FROM password_reset_tokens WHERE email = $1"))
        .bind(email.as_str().to_owned())
        .execute(&mut *tx)
        .await?;
    let insert = format!(
        "INSERT INTO password_reset_tokens (email, token, created_at) VALUES ($1, $2, {})",
        d.now_utc()
    );
    sqlx::query(d.placeholders(&insert))
        .bind(email.as_str().to_owned())
        .bind(token.digest())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(token))
}

/// Whether `token` is the live token of `email`. Consumes nothing.
pub async fn is_live(
    db: &Db,
    email: &Email,
    token: &str,
    lifetime_minutes: u32,
) -> Result<bool, DbError> {
    let d = db.dialect();
    let sql = format!(
        "SELECT token, {} AS issued FROM password_reset_tokens WHERE email = $1",
        d.epoch_of("created_at")
    );
    let Some(row) = db
        .fetch_optional(sqlx::query(d.placeholders(&sql)).bind(email.as_str().to_owned()))
        .await?
    else {
        return Ok(false);
    };
    let stored: String = row.try_get("token")?;
    let issued: i64 = row.try_get("issued")?;
    let fresh = unix_now() - issued < i64::from(lifetime_minutes) * 60;
    let matches = bool::from(stored.as_bytes().ct_eq(sha256_hex(token).as_bytes()));
    Ok(fresh && matches)
}

/// Deletes the token of `email`; answers whether one was there, so two
/// concurrent resets with the same token cannot both succeed.
pub async fn consume(db: &Db, email: &Email, token: &str) -> Result<bool, DbError> {
    let deleted = db
        .execute(
            db.query("DELETE FROM password_reset_tokens WHERE email = $1 AND token = $2")
                .bind(email.as_str().to_owned())
                .bind(sha256_hex(token)),
        )
        .await?;
    Ok(deleted == 1)
}

/// Deletes tokens older than `lifetime_minutes`.
pub async fn sweep(db: &Db, lifetime_minutes: u32) -> Result<u64, DbError> {
    let d = db.dialect();
    let sql = format!(
        "DELETE FROM password_reset_tokens WHERE {} < $1",
        d.epoch_of("created_at")
    );
    db.execute(
        sqlx::query(d.placeholders(&sql)).bind(unix_now() - i64::from(lifetime_minutes) * 60),
    )
    .await
}
