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

/// A sign-in with passkey `id` recorded: the record `read` before the
/// assertion was checked becomes `recorded` (its counter moved forward),
/// with the time — only while the row still holds `read`, so that of two
/// assertions checked against one record (two with one counter value) one
/// is recorded and the other answers `false`. A passkey that `uncounted`
/// (stored and reported counter both 0: a synced passkey never counts)
/// may also find its row already holding `recorded`. `false` as well when
/// the passkey was removed meanwhile.
pub async fn used(
    db: &Db,
    id: i64,
    read: &str,
    recorded: &str,
    uncounted: bool,
    now: i64,
) -> Result<bool, DbError> {
    let query = match uncounted {
        false => db
            .query(
                "UPDATE gatehouse_passkeys SET passkey = $1, last_used_at = $2 \
                 WHERE id = $3 AND passkey = $4",
            )
            .bind(recorded.to_owned())
            .bind(now)
            .bind(id)
            .bind(read.to_owned()),
        true => db
            .query(
                "UPDATE gatehouse_passkeys SET passkey = $1, last_used_at = $2 \
                 WHERE id = $3 AND (passkey = $4 OR passkey = $5)",
            )
            .bind(recorded.to_owned())
            .bind(now)
            .bind(id)
            .bind(read.to_owned())
            .bind(recorded.to_owned()),
    };
    Ok(db.execute(query).await? > 0)
}

/// Removes passkey `id`; `false` when there was none.
pub async fn delete(db: &Db, id: i64) -> Result<bool, DbError> {
    let deleted = db
        .execute(db.query("DELETE FROM gatehouse_passkeys WHERE id = $1").bind(id))
        .await?;
    Ok(deleted > 0)
}

#[cfg(test)]
mod tests {
    use super::{insert, used};
    use crate::auth::two_factor::test_db::TestDb;

    /// A record as webauthn-rs keeps it, cut down to its counter.
    fn record(counter: u32) -> String {
        format!(r#"{{"cred":{{"counter":{counter}}}}}"#)
    }

    #[tokio::test]
    async fn of_two_assertions_with_one_counter_value_one_is_recorded() {
        let test = TestDb::new().await;
        let user = test.user("ada@example.org").await;
        let id = insert(&test.db, user, "c0ffee", "handle", "Laptop", &record(4), 1)
            .await
            .expect("a passkey");
        // Both were checked against the stored 4 and report 5.
        let first = used(&test.db, id, &record(4), &record(5), false, 2).await;
        let second = used(&test.db, id, &record(4), &record(5), false, 2).await;
        assert_eq!(
            (first.unwrap(), second.unwrap()),
            (true, false),
            "the second finds the counter already at 5"
        );
        // One checked against the stored 5 counts on.
        assert!(used(&test.db, id, &record(5), &record(6), false, 3).await.unwrap());
        test.finish().await;
    }

    #[tokio::test]
    async fn a_synced_passkey_that_never_counts_is_recorded_every_time() {
        let test = TestDb::new().await;
        let user = test.user("ada@example.org").await;
        let id = insert(&test.db, user, "c0ffee", "handle", "Phone", &record(0), 1)
            .await
            .expect("a passkey");
        // A flag changed with the first: the second, checked against the
        // record before it, still signs in.
        let changed = r#"{"cred":{"counter":0,"backup_state":true}}"#;
        for _ in 0..2 {
            assert!(used(&test.db, id, &record(0), changed, true, 2).await.unwrap());
        }
        // Removed meanwhile: nothing is recorded.
        super::delete(&test.db, id).await.unwrap();
        assert!(!used(&test.db, id, changed, changed, true, 3).await.unwrap());
        test.finish().await;
    }
}
