//! Personal access tokens (`personal_access_tokens`, Laravel Sanctum's shape).
//! Only the SHA-256 of a token is stored.

use sqlx::Row;

use crate::db::{Db, DbError};
use crate::domain::{sha256_hex, SecretToken};

/// The owner type written to `tokenable_type`, as Sanctum does.
const TOKENABLE_TYPE: &str = "App\\Models\\User";

/// Stores a new token for `user_id` under `name`.
pub async fn create(db: &Db, user_id: i64, name: &str, token: &SecretToken) -> Result<(), DbError> {
    let now = db.dialect().now_utc();
    let sql = format!(
        "INSERT INTO personal_access_tokens (tokenable_type, tokenable_id, name, token, abilities, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, {now}, {now})"
    );
    db.execute(
        sqlx::query(db.dialect().placeholders(&sql))
            .bind(TOKENABLE_TYPE)
            .bind(user_id)
            .bind(name.to_owned())
            .bind(token.digest())
            .bind("[\"*\"]"),
    )
    .await?;
    Ok(())
}

/// The user a bearer token acts for; records its use.
pub async fn user_of(db: &Db, presented: &str) -> Result<Option<i64>, DbError> {
    let digest = sha256_hex(presented);
    let row = db
        .fetch_optional(
            db.query("SELECT id, tokenable_id FROM personal_access_tokens WHERE token = $1")
                .bind(digest),
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let id: i64 = row.try_get("id")?;
    let user_id: i64 = row.try_get("tokenable_id")?;
    let sql = format!(
        "UPDATE personal_access_tokens SET last_used_at = {} WHERE id = $1",
        db.dialect().now_utc()
    );
    db.execute(sqlx::query(db.dialect().placeholders(&sql)).bind(id))
        .await?;
    Ok(Some(user_id))
}
