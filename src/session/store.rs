//! The `sessions` table (Laravel's shape). Rows are keyed by the SHA-256 of the
//! cookie value, so a leaked table names no live session.

use sqlx::Row;

use super::bound::{self, Binding};
use crate::db::{Db, DbError, TextColumn, Tx};
use crate::domain::sha256_hex;

/// A stored session as read back.
#[derive(Debug, Clone)]
pub struct StoredSession {
    /// Signed-in user, if any.
    pub user_id: Option<i64>,
    /// JSON payload (`created_at`, `data`).
    pub payload: String,
    /// Unix seconds of the last request that touched it.
    pub last_activity: i64,
    /// Its device binding, once a browser bound it.
    pub binding: Option<Binding>,
}

/// One session row to write.
pub struct SessionRow<'a> {
    /// SHA-256 hex of the cookie value.
    pub id_hash: &'a str,
    /// Signed-in user, if any.
    pub user_id: Option<i64>,
    /// Client address.
    pub ip_address: &'a str,
    /// Client `User-Agent`.
    pub user_agent: Option<&'a str>,
    /// JSON payload.
    pub payload: &'a str,
    /// Unix seconds.
    pub last_activity: i64,
    /// How it was signed in, kept on insert.
    pub signed_in_by: SignedInBy,
    /// The device binding it carries over from a bound remember-me record,
    /// kept on insert.
    pub binding: Option<&'a Binding>,
}

/// What signed a session in, where voiding that must end it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignedInBy {
    /// The selector of the remember-me record that recalled it.
    pub remember: Option<String>,
    /// The passkey (`gatehouse_passkeys.id`) that signed it in.
    pub passkey: Option<i64>,
}

/// Which of a user's sessions a change to how they sign in ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending<'a> {
    /// All of them.
    All,
    /// All but the one stored under this key (the caller's).
    AllBut(&'a str),
    /// Those a remember-me cookie recalled, but the one stored under this
    /// key (the caller's): their cookies are void.
    RecalledBut(&'a str),
}

/// Reads the session stored under `id_hash`.
pub async fn find(db: &Db, id_hash: &str) -> Result<Option<StoredSession>, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT user_id, payload, last_activity, dbsc_id, dbsc_key, dbsc_thumbprint \
                 FROM sessions WHERE id = $1",
            )
                .bind(id_hash.to_owned()),
        )
        .await?;
    row.map(|row| {
        Ok(StoredSession {
            user_id: row.try_get("user_id")?,
            payload: row.text("payload")?.unwrap_or_default(),
            last_activity: row.try_get("last_activity")?,
            binding: bound::store::read(&row)?,
        })
    })
    .transpose()
}

/// Inserts a session whose id this request minted.
pub async fn insert(db: &Db, row: SessionRow<'_>) -> Result<(), DbError> {
    db.execute(
        db.query(
            "INSERT INTO sessions (id, user_id, ip_address, user_agent, payload, last_activity, \
             remember_selector, passkey_id, dbsc_id, dbsc_key, dbsc_thumbprint) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(row.id_hash.to_owned())
        .bind(row.user_id)
        .bind(row.ip_address.to_owned())
        .bind(row.user_agent.map(str::to_owned))
        .bind(row.payload.to_owned())
        .bind(row.last_activity)
        .bind(row.signed_in_by.remember)
        .bind(row.signed_in_by.passkey)
        .bind(row.binding.map(|b| b.id.clone()))
        .bind(row.binding.map(|b| b.key.jwk.clone()))
        .bind(row.binding.map(|b| b.key.thumbprint.clone())),
    )
    .await?;
    Ok(())
}

/// Writes a loaded session back. Only ever an update: a row that logout,
/// a reset or any "end sessions" deleted meanwhile stays deleted (answers
/// `false`), so a request that loaded the session earlier cannot revive it.
pub async fn update(db: &Db, row: SessionRow<'_>) -> Result<bool, DbError> {
    let updated = db
        .execute(
            db.query(
                "UPDATE sessions SET user_id = $1, ip_address = $2, user_agent = $3, \
                 payload = $4, last_activity = $5 WHERE id = $6",
            )
            .bind(row.user_id)
            .bind(row.ip_address.to_owned())
            .bind(row.user_agent.map(str::to_owned))
            .bind(row.payload.to_owned())
            .bind(row.last_activity)
            .bind(row.id_hash.to_owned()),
        )
        .await?;
    Ok(updated > 0)
}

/// Records activity without rewriting the payload.
pub async fn touch(db: &Db, id_hash: &str, now: i64) -> Result<(), DbError> {
    db.execute(
        db.query("UPDATE sessions SET last_activity = $1 WHERE id = $2")
            .bind(now)
            .bind(id_hash.to_owned()),
    )
    .await?;
    Ok(())
}

/// Deletes one session.
pub async fn delete(db: &Db, id_hash: &str) -> Result<(), DbError> {
    db.execute(
        db.query("DELETE FROM sessions WHERE id = $1")
            .bind(id_hash.to_owned()),
    )
    .await?;
    Ok(())
}

/// Ends the sessions of `user_id` that `ending` names, in `tx`; answers
/// how many ended.
pub async fn end_in(tx: &mut Tx, user_id: i64, ending: Ending<'_>) -> Result<u64, DbError> {
    let query = match ending {
        Ending::All => tx
            .query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id),
        Ending::AllBut(keep) => tx
            .query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
            .bind(user_id)
            .bind(keep.to_owned()),
        Ending::RecalledBut(keep) => tx
            .query(
                "DELETE FROM sessions WHERE user_id = $1 AND id <> $2 \
                 AND remember_selector IS NOT NULL",
            )
            .bind(user_id)
            .bind(keep.to_owned()),
    };
    tx.execute(query).await
}

/// Ends every session the remember-me record of `selector` signed in: the
/// one it was issued with (`issued_with`) and each it recalled, in `tx`.
pub async fn end_recalled_in(
    tx: &mut Tx,
    selector: &str,
    issued_with: Option<&str>,
) -> Result<u64, DbError> {
    tx.execute(
        tx.query("DELETE FROM sessions WHERE remember_selector = $1 OR id = $2")
            .bind(selector.to_owned())
            .bind(issued_with.unwrap_or_default().to_owned()),
    )
    .await
}

/// Ends every session the passkey `passkey_id` signed in but the one
/// stored under `keep`.
pub async fn end_for_passkey(db: &Db, passkey_id: i64, keep: &str) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM sessions WHERE passkey_id = $1 AND id <> $2")
            .bind(passkey_id)
            .bind(keep.to_owned()),
    )
    .await
}

/// A signed-in session as its user may see it.
#[derive(Debug, Clone)]
pub struct UserSession {
    /// SHA-256 hex of the cookie value (the row's key; never shown).
    pub id_hash: String,
    /// Client address of its last write.
    pub ip_address: Option<String>,
    /// Client `User-Agent`.
    pub user_agent: Option<String>,
    /// Unix seconds of its last request.
    pub last_activity: i64,
    /// The selector of the remember-me record that recalled it.
    pub remember_selector: Option<String>,
    /// Whether a browser bound it to its key (DBSC).
    pub device_bound: bool,
}

/// The public handle of the session stored under `id_hash`: a one-way
/// function of the stored key, which is itself one-way from the cookie, so a
/// handle can name a session to end but never be turned into a cookie.
pub fn handle(id_hash: &str) -> String {
    let mut handle = sha256_hex(&format!("gatehouse-session-handle:{id_hash}"));
    handle.truncate(32);
    handle
}

/// Every session of a user, most recently active first.
pub async fn of_user(db: &Db, user_id: i64) -> Result<Vec<UserSession>, DbError> {
    let rows = db
        .fetch_all(
            db.query(
                "SELECT id, ip_address, user_agent, last_activity, remember_selector, dbsc_id \
                 FROM sessions \
                 WHERE user_id = $1 ORDER BY last_activity DESC, id",
            )
            .bind(user_id),
        )
        .await?;
    rows.iter()
        .map(|row| {
            Ok(UserSession {
                id_hash: row.text("id")?.unwrap_or_default(),
                ip_address: row.text("ip_address")?,
                user_agent: row.text("user_agent")?,
                last_activity: row.try_get("last_activity")?,
                remember_selector: row.text("remember_selector")?,
                device_bound: row.text("dbsc_id")?.is_some(),
            })
        })
        .collect()
}

/// Removes sessions idle for longer than `idle_seconds`.
/// How many signed-in sessions were active in the last `idle_seconds`.
pub async fn active(db: &Db, now: i64, idle_seconds: i64) -> Result<i64, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT COUNT(*) AS n FROM sessions \
                 WHERE user_id IS NOT NULL AND last_activity >= $1",
            )
            .bind(now - idle_seconds),
        )
        .await?;
    Ok(row
        .and_then(|row| sqlx::Row::try_get::<i64, _>(&row, "n").ok())
        .unwrap_or(0))
}

pub async fn sweep(db: &Db, now: i64, idle_seconds: i64) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM sessions WHERE last_activity < $1")
            .bind(now - idle_seconds),
    )
    .await
}
