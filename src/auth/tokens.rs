//! Personal access tokens (`personal_access_tokens`, Laravel Sanctum's shape).
//! Only the SHA-256 of a token is stored.

use sqlx::Row;

use crate::db::{Db, DbError, TextColumn};
use crate::domain::{sha256_hex, SecretToken};

/// The owner type written to `tokenable_type`, as Sanctum does.
const TOKENABLE_TYPE: &str = "App\\Models\\User";

/// Stores a new token for `user_id` under `name` and answers its id.
pub async fn create(
    db: &Db,
    user_id: i64,
    name: &str,
    token: &SecretToken,
) -> Result<i64, DbError> {
    let now = db.dialect().now_utc();
    let sql = format!(
        "INSERT INTO personal_access_tokens (tokenable_type, tokenable_id, name, token, abilities, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, {now}, {now})"
    );
    let name = name.to_owned();
    let digest = token.digest();
    let mut conn = db.connection().await?;
    db.insert_id(&mut *conn, &sql, |query| {
        query
            .bind(TOKENABLE_TYPE)
            .bind(user_id)
            .bind(name)
            .bind(digest)
            .bind("[\"*\"]")
    })
    .await
}

/// A stored token as an operator sees it: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    /// `personal_access_tokens.id`.
    pub id: i64,
    /// The token's label.
    pub name: String,
    /// When it was issued (Unix seconds), if recorded.
    pub created_at: Option<i64>,
    /// When it was last presented (Unix seconds; recorded at most once a
    /// minute), if ever.
    pub last_used_at: Option<i64>,
}

/// The tokens of `user_id`, oldest first.
pub async fn of_user(db: &Db, user_id: i64) -> Result<Vec<StoredToken>, DbError> {
    let dialect = db.dialect();
    let sql = format!(
        "SELECT id, name, {} AS created, {} AS used FROM personal_access_tokens \
         WHERE tokenable_type = $1 AND tokenable_id = $2 ORDER BY id",
        dialect.epoch_of("created_at"),
        dialect.epoch_of("last_used_at"),
    );
    let sql = dialect.placeholders(&sql);
    let rows = db
        .fetch_all(sqlx::query(&sql).bind(TOKENABLE_TYPE).bind(user_id))
        .await?;
    rows.iter()
        .map(|row| {
            Ok(StoredToken {
                id: row.try_get("id")?,
                name: row.text("name")?.unwrap_or_default(),
                created_at: row.try_get("created")?,
                last_used_at: row.try_get("used")?,
            })
        })
        .collect()
}

/// The user token `id` acts for, if there is such a token.
pub async fn owner(db: &Db, id: i64) -> Result<Option<i64>, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT tokenable_id FROM personal_access_tokens \
                 WHERE id = $1 AND tokenable_type = $2",
            )
            .bind(id)
            .bind(TOKENABLE_TYPE),
        )
        .await?;
    row.map(|row| row.try_get("tokenable_id")).transpose()
}

/// Deletes token `id`; answers whether there was one.
pub async fn delete(db: &Db, id: i64) -> Result<bool, DbError> {
    let deleted = db
        .execute(
            db.query("DELETE FROM personal_access_tokens WHERE id = $1 AND tokenable_type = $2")
                .bind(id)
                .bind(TOKENABLE_TYPE),
        )
        .await?;
    Ok(deleted > 0)
}

/// How often `last_used_at` is written for a token in steady use.
const USE_RECORD_INTERVAL_SECONDS: i64 = 60;

/// The ability a token needs to read OData sets.
pub const READ_ABILITY: &str = "odata:read";

/// Whether a token's `abilities` column (Sanctum's JSON array) lets it read:
/// `["*"]` or a list naming [`READ_ABILITY`]. No abilities, or anything that
/// is not such an array, grants nothing (as in Sanctum).
fn may_read(abilities: Option<&str>) -> bool {
    abilities
        .and_then(|text| serde_json::from_str::<Vec<String>>(text).ok())
        .is_some_and(|list| list.iter().any(|a| a == "*" || a == READ_ABILITY))
}

/// The user a bearer token acts for, unless the token is unknown, expired,
/// owned by another model than the user model (a Sanctum token of another
/// `tokenable_type` in a shared database), or without an ability to read.
/// Records its use in `last_used_at`, at most once a minute so a busy client
/// does not turn every read into a write.
pub async fn user_of(db: &Db, presented: &str) -> Result<Option<i64>, DbError> {
    let digest = sha256_hex(presented);
    let dialect = db.dialect();
    let sql = format!(
        "SELECT id, tokenable_id, abilities, {} AS used, {} AS expires \
         FROM personal_access_tokens WHERE token = $1 AND tokenable_type = $2",
        dialect.epoch_of("last_used_at"),
        dialect.epoch_of("expires_at"),
    );
    let row = db
        .fetch_optional(
            sqlx::query(&dialect.placeholders(&sql))
                .bind(digest)
                .bind(TOKENABLE_TYPE),
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let now = crate::clock::unix_now();
    let expires: Option<i64> = row.try_get("expires")?;
    if expires.is_some_and(|at| at <= now) || !may_read(row.text("abilities")?.as_deref()) {
        return Ok(None);
    }
    let id: i64 = row.try_get("id")?;
    let user_id: i64 = row.try_get("tokenable_id")?;
    let used: Option<i64> = row.try_get("used")?;
    if used.is_none_or(|at| now - at >= USE_RECORD_INTERVAL_SECONDS) {
        let sql = format!(
            "UPDATE personal_access_tokens SET last_used_at = {} WHERE id = $1",
            dialect.now_utc()
        );
        db.execute(sqlx::query(&dialect.placeholders(&sql)).bind(id))
            .await?;
    }
    Ok(Some(user_id))
}

#[cfg(test)]
mod tests {
    use super::may_read;

    #[test]
    fn only_a_wildcard_or_the_read_ability_reads() {
        assert!(may_read(Some("[\"*\"]")));
        assert!(may_read(Some("[\"reports:write\",\"odata:read\"]")));
        assert!(!may_read(Some("[\"reports:write\"]")));
        assert!(!may_read(Some("[]")));
        assert!(!may_read(Some("*")));
        assert!(!may_read(Some("{\"*\":true}")));
        assert!(!may_read(None));
    }
}
