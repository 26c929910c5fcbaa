//! `gatehouse_remember`: one row per remember-me cookie (per device). The
//! row is found by the cookie's selector; only the SHA-256 of its validator
//! is stored, so a leaked table signs nobody in. A row names the session it
//! was issued with; sessions a recall signed in name the row
//! (`sessions.remember_selector`), so voiding the row can end them. Every
//! recall rotates the validator; the row keeps the hashes of the replaced
//! ones, so that a copy presented later is recognised as one.

use sqlx::Row;

use super::bound::{self, Binding};
use crate::db::{Db, DbError, TextColumn, Tx};

/// Replaced validators a row keeps (one per recall, oldest dropped first).
const REPLACED_KEPT: usize = 64;

/// A stored remember record, as the check needs it.
pub struct Remembered {
    /// The user it signs in.
    pub user_id: i64,
    /// SHA-256 hex of the cookie's current validator.
    pub validator_hash: String,
    /// SHA-256 hex of the validators it replaced, oldest first.
    pub replaced: Vec<String>,
    /// When it last rotated, with the client and device of that recall.
    pub rotation: Option<Rotation>,
    /// The session it was issued with.
    pub session_id: Option<String>,
    /// Unix seconds it was issued.
    pub created_at: i64,
    /// The device binding of the session it was issued in or recalled:
    /// it then recalls only through a refresh proven by that key.
    pub binding: Option<Binding>,
}

/// The recall that last rotated a record.
pub struct Rotation {
    /// Unix seconds.
    pub at: i64,
    /// Its client: an IPv4 address or an IPv6 /64.
    pub client: String,
    /// SHA-256 hex of its device cookie, empty without one.
    pub device: String,
}

/// A new record for `user_id`, issued with the session stored under
/// `session_id`, carrying that session's device binding if it has one.
pub async fn insert(
    db: &Db,
    selector: &str,
    validator_hash: &str,
    user_id: i64,
    session_id: &str,
    now: i64,
    binding: Option<&Binding>,
) -> Result<(), DbError> {
    db.execute(
        db.query(
            "INSERT INTO gatehouse_remember \
             (selector, validator_hash, user_id, session_id, created_at, last_used_at, \
             dbsc_id, dbsc_key, dbsc_thumbprint) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(selector.to_owned())
        .bind(validator_hash.to_owned())
        .bind(user_id)
        .bind(session_id.to_owned())
        .bind(now)
        .bind(now)
        .bind(binding.map(|b| b.id.clone()))
        .bind(binding.map(|b| b.key.jwk.clone()))
        .bind(binding.map(|b| b.key.thumbprint.clone())),
    )
    .await?;
    Ok(())
}

/// The record of `selector`.
pub async fn find(db: &Db, selector: &str) -> Result<Option<Remembered>, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT user_id, validator_hash, replaced_hashes, rotated_at, rotated_client, \
                 rotated_device, session_id, created_at, dbsc_id, dbsc_key, dbsc_thumbprint \
                 FROM gatehouse_remember \
                 WHERE selector = $1",
            )
            .bind(selector.to_owned()),
        )
        .await?;
    row.map(|row| {
        let rotated_at: Option<i64> = row.try_get("rotated_at")?;
        let rotation = match rotated_at {
            Some(at) => Some(Rotation {
                at,
                client: row.text("rotated_client")?.unwrap_or_default(),
                device: row.text("rotated_device")?.unwrap_or_default(),
            }),
            None => None,
        };
        Ok(Remembered {
            user_id: row.try_get("user_id")?,
            validator_hash: row.text("validator_hash")?.unwrap_or_default(),
            replaced: row
                .text("replaced_hashes")?
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            rotation,
            session_id: row.text("session_id")?,
            created_at: row.try_get("created_at")?,
            binding: bound::store::read(&row)?,
        })
    })
    .transpose()
}

/// Replaces the validator of `record` (found under `selector`) with
/// `new_hash`, by `rotation`'s recall — only if it still is the one that
/// recall presented: of two recalls at once, one rotates. `false` for the
/// other (or when the record is gone).
pub async fn rotate(
    db: &Db,
    selector: &str,
    record: &Remembered,
    new_hash: &str,
    rotation: &Rotation,
) -> Result<bool, DbError> {
    let mut replaced = record.replaced.clone();
    replaced.push(record.validator_hash.clone());
    let skip = replaced.len().saturating_sub(REPLACED_KEPT);
    let replaced = replaced[skip..].join(" ");
    let rotated = db
        .execute(
            db.query(
                "UPDATE gatehouse_remember SET validator_hash = $1, replaced_hashes = $2, \
                 rotated_at = $3, rotated_client = $4, rotated_device = $5, last_used_at = $6 \
                 WHERE selector = $7 AND validator_hash = $8",
            )
            .bind(new_hash.to_owned())
            .bind(replaced)
            .bind(rotation.at)
            .bind(rotation.client.clone())
            .bind(rotation.device.clone())
            .bind(rotation.at)
            .bind(selector.to_owned())
            .bind(record.validator_hash.clone()),
        )
        .await?;
    Ok(rotated == 1)
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

/// Voids the cookie of `selector`, in `tx`: `true` for the one caller that
/// found it there.
pub async fn delete_in(tx: &mut Tx, selector: &str) -> Result<bool, DbError> {
    let deleted = tx
        .execute(
            tx.query("DELETE FROM gatehouse_remember WHERE selector = $1")
                .bind(selector.to_owned()),
        )
        .await?;
    Ok(deleted == 1)
}

/// Voids the cookie the session stored under `session_id` was issued with
/// or recalled by (`recalled_by`): that session is being ended.
pub async fn delete_for_session(
    db: &Db,
    session_id: &str,
    recalled_by: Option<&str>,
) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_remember WHERE session_id = $1 OR selector = $2")
            .bind(session_id.to_owned())
            .bind(recalled_by.unwrap_or_default().to_owned()),
    )
    .await
}

/// Voids every cookie of `user_id`, in `tx`.
pub async fn delete_for_user_in(tx: &mut Tx, user_id: i64) -> Result<u64, DbError> {
    tx.execute(
        tx.query("DELETE FROM gatehouse_remember WHERE user_id = $1")
            .bind(user_id),
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
