//! `gatehouse_passkeys`: one row per registered credential. A sign-in finds
//! its row by the SHA-256 of the credential id; the public key and the
//! signature counter are webauthn-rs' own record, kept as JSON.

use sqlx::Row;

use crate::db::{Db, DbError, TextColumn};

/// A stored passkey.
pub struct StoredPasskey {
    /// `gatehouse_passkeys.id`.
    pub id: i64,
    /// The account it signs in.
    pub user_id: i64,
    /// The random id the authenticator keeps for the user.
    pub user_handle: String,
    /// The name its owner gave it.
    pub name: String,
    /// webauthn-rs' record (JSON): public key, counter.
    pub passkey: String,
    /// Unix seconds it was added.
    pub created_at: i64,
    /// Unix seconds it last signed in, if ever.
    pub last_used_at: Option<i64>,
}

/// `SELECT` of every column, followed by the literal `$rest`.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT id, user_id, user_handle, name, passkey, created_at, last_used_at \
             FROM gatehouse_passkeys ",
            $rest
        )
    };
}

fn read(row: &sqlx::any::AnyRow) -> Result<StoredPasskey, DbError> {
    Ok(StoredPasskey {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        user_handle: row.text("user_handle")?.unwrap_or_default(),
        name: row.text("name")?.unwrap_or_default(),
        passkey: row.text("passkey")?.unwrap_or_default(),
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

/// A new passkey row; answers its id. A credential id already stored (for
/// anyone) is a unique-key violation.
pub async fn insert(
    db: &Db,
    user_id: i64,
    credential_hash: &str,
    user_handle: &str,
    name: &str,
    passkey: &str,
    now: i64,
) -> Result<i64, DbError> {
    let insert = "INSERT INTO gatehouse_passkeys \
                  (user_id, credential_hash, user_handle, name, passkey, created_at) \
                  VALUES ($1, $2, $3, $4, $5, $6)";
    let mut conn = db.connection().await?;
    db.insert_id(&mut *conn, insert, |query| {
        query
            .bind(user_id)
            .bind(credential_hash.to_owned())
            .bind(user_handle.to_owned())
            .bind(name.to_owned())
            .bind(passkey.to_owned())
            .bind(now)
    })
    .await
}

/// Every passkey of `user_id`, oldest first.
pub async fn of_user(db: &Db, user_id: i64) -> Result<Vec<StoredPasskey>, DbError> {
    let sql = select!("WHERE user_id = $1 ORDER BY id");
    db.fetch_all(db.query(sql).bind(user_id))
        .await?
        .iter()
        .map(read)
        .collect()
}

/// The passkey whose credential id hashes to `credential_hash`.
pub async fn by_credential(
    db: &Db,
    credential_hash: &str,
) -> Result<Option<StoredPasskey>, DbError> {
    let sql = select!("WHERE credential_hash = $1");
    db.fetch_optional(db.query(sql).bind(credential_hash.to_owned()))
        .await?
        .as_ref()
        .map(read)
        .transpose()
}

/// The passkey `id` if it is `user_id`'s.
pub async fn find(db: &Db, user_id: i64, id: i64) -> Result<Option<StoredPasskey>, DbError> {
    let sql = select!("WHERE id = $1 AND user_id = $2");
    db.fetch_optional(db.query(sql).bind(id).bind(user_id))
        .await?
        .as_ref()
        .map(read)
        .transpose()
}

/// The passkey `id` by id alone (the command line).
pub async fn by_id(db: &Db, id: i64) -> Result<Option<StoredPasskey>, DbError> {
    let sql = select!("WHERE id = $1");
    db.fetch_optional(db.query(sql).bind(id))
        .await?
        .as_ref()
        .map(read)
        .transpose()
}

/// A sign-in with passkey `id`: its new record (counter) and the time.
/// `false` when it was removed meanwhile.
pub async fn used(db: &Db, id: i64, passkey: &str, now: i64) -> Result<bool, DbError> {
    let updated = db
        .execute(
            db.query("UPDATE gatehouse_passkeys SET passkey = $1, last_used_at = $2 WHERE id = $3")
                .bind(passkey.to_owned())
                .bind(now)
                .bind(id),
        )
        .await?;
    Ok(updated > 0)
}

/// Removes passkey `id`; `false` when there was none.
pub async fn delete(db: &Db, id: i64) -> Result<bool, DbError> {
    let deleted = db
        .execute(db.query("DELETE FROM gatehouse_passkeys WHERE id = $1").bind(id))
        .await?;
    Ok(deleted > 0)
}
