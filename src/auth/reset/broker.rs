//! Reset tokens in `password_reset_tokens` (Laravel's shape): at most one live
//! token per address, 256 random bits, only the SHA-256 stored, single use,
//! valid for `auth.reset_token_minutes`.

use sqlx::Row;
use subtle::ConstantTimeEq;

use crate::clock::unix_now;
use crate::db::{Db, DbError, Tx};
use crate::domain::{sha256_hex, Email, SecretToken};

/// Issues a new token for `email`, unless one was issued less than
/// `quiet_seconds` ago (then `None`: no new mail).
///
/// Atomic: of two overlapping requests for one address, only one issues a
/// token, so a double submit neither sends two mails nor voids the first
/// link. A quiet period of 0 lets every request replace the token.
pub async fn issue(
    db: &Db,
    email: &Email,
    quiet_seconds: u32,
) -> Result<Option<SecretToken>, DbError> {
    let d = db.dialect();
    let token = SecretToken::generate();
    let mut tx = db.begin().await?;
    // Only a token past the quiet period makes way for a new one.
    let stale = format!(
        "DELETE FROM password_reset_tokens WHERE email = $1 \
         AND (created_at IS NULL OR {} <= $2)",
        d.epoch_of("created_at")
    );
    // PostgreSQL rounds `created_at` to the second, possibly up: with no quiet
    // period, any token goes.
    let cutoff = match quiet_seconds {
        0 => i64::MAX,
        quiet => unix_now() - i64::from(quiet),
    };
    sqlx::query(&d.placeholders(&stale))
        .bind(email.as_str().to_owned())
        .bind(cutoff)
        .execute(&mut *tx)
        .await?;
    // A live token still there (or inserted meanwhile) wins: nothing inserted.
    let insert = d.insert_unless_present(
        "password_reset_tokens",
        "email, token, created_at",
        &format!("$1, $2, {}", d.now_utc()),
        "email",
    );
    let inserted = sqlx::query(&d.placeholders(&insert))
        .bind(email.as_str().to_owned())
        .bind(token.digest())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok((inserted == 1).then_some(token))
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
        .fetch_optional(sqlx::query(&d.placeholders(&sql)).bind(email.as_str().to_owned()))
        .await?
    else {
        return Ok(false);
    };
    let stored: String = row.try_get("token")?;
    // A row without `created_at` (possible in a Laravel database) never counts as live.
    let issued: Option<i64> = row.try_get("issued")?;
    let fresh = issued.is_some_and(|issued| unix_now() - issued < i64::from(lifetime_minutes) * 60);
    let matches = bool::from(stored.as_bytes().ct_eq(sha256_hex(token).as_bytes()));
    Ok(fresh && matches)
}

/// Deletes the token of `email`, in `tx`; answers whether one was there, so
/// two concurrent resets with the same token cannot both succeed.
pub async fn consume_in(tx: &mut Tx, email: &Email, token: &str) -> Result<bool, DbError> {
    let deleted = tx
        .execute(
            tx.query("DELETE FROM password_reset_tokens WHERE email = $1 AND token = $2")
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
        "DELETE FROM password_reset_tokens WHERE created_at IS NULL OR {} < $1",
        d.epoch_of("created_at")
    );
    db.execute(
        sqlx::query(&d.placeholders(&sql)).bind(unix_now() - i64::from(lifetime_minutes) * 60),
    )
    .await
}
