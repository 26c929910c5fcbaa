//! Personal access tokens (`personal_access_tokens`, Laravel Sanctum's shape).
//! Only the SHA-256 of a token is stored.

use sqlx::Row;

use crate::db::{Db, DbError, TextColumn, Tx};
use crate::domain::{sha256_hex, SecretToken};

/// The owner type written to `tokenable_type`, as Sanctum does.
const TOKENABLE_TYPE: &str = "App\\Models\\User";

/// What a new token is given: its label, the sets it reads (every set
/// its owner may read when `None`) and when it expires (Unix seconds;
/// never when `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewToken {
    /// The label its owner gave it.
    pub name: String,
    /// The sets it reads, when only some.
    pub sets: Option<Vec<String>>,
    /// When it stops working.
    pub expires_at: Option<i64>,
}

/// The lifetime of a token made without one named, in days (and of a
/// token a device authorization gives).
pub const DEFAULT_LIFETIME_DAYS: i64 = 30;

/// Characters of a token kept (in the clear) to tell it apart in a listing.
pub const PREFIX_CHARS: usize = 8;

/// Stores a new token for `user_id` under `name`, reading every set and
/// never expiring (an operator's), and answers its id.
pub async fn create(
    db: &Db,
    user_id: i64,
    name: &str,
    token: &SecretToken,
) -> Result<i64, DbError> {
    let new = NewToken {
        name: name.to_owned(),
        ..NewToken::default()
    };
    create_with(db, user_id, &new, token).await
}

/// Stores `new` for `user_id` as `token` and answers its id.
pub async fn create_with(
    db: &Db,
    user_id: i64,
    new: &NewToken,
    token: &SecretToken,
) -> Result<i64, DbError> {
    let dialect = db.dialect();
    let now = dialect.now_utc();
    let expires = dialect.utc_timestamp_at("$7");
    let sql = format!(
        "INSERT INTO personal_access_tokens (tokenable_type, tokenable_id, name, token, abilities, \
         prefix, expires_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, {expires}, {now}, {now})"
    );
    let name = new.name.clone();
    let digest = token.digest();
    let abilities = abilities(new.sets.as_deref());
    let prefix: String = token.expose().chars().take(PREFIX_CHARS).collect();
    let expires_at = new.expires_at;
    let mut conn = db.connection().await?;
    db.insert_id(&mut *conn, &sql, |query| {
        query
            .bind(TOKENABLE_TYPE)
            .bind(user_id)
            .bind(name)
            .bind(digest)
            .bind(abilities)
            .bind(prefix)
            .bind(expires_at)
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
    /// When it stops working (Unix seconds), if ever.
    pub expires_at: Option<i64>,
    /// Its first characters, for a token made from the account screen.
    pub prefix: Option<String>,
    /// The sets it reads, when only some; `None` for every set its owner
    /// may read (or none, for a token without the ability to read).
    pub sets: Option<Vec<String>>,
}

/// The tokens of `user_id`, oldest first.
pub async fn of_user(db: &Db, user_id: i64) -> Result<Vec<StoredToken>, DbError> {
    let dialect = db.dialect();
    let sql = format!(
        "SELECT id, name, prefix, abilities, {} AS created, {} AS used, {} AS expires \
         FROM personal_access_tokens \
         WHERE tokenable_type = $1 AND tokenable_id = $2 ORDER BY id",
        dialect.epoch_of("created_at"),
        dialect.epoch_of("last_used_at"),
        dialect.epoch_of("expires_at"),
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
                expires_at: row.try_get("expires")?,
                prefix: row.text("prefix")?,
                sets: sets_of(row.text("abilities")?.as_deref()),
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

/// Deletes token `id` if `user_id` owns it; answers whether it did.
pub async fn delete_own(db: &Db, user_id: i64, id: i64) -> Result<bool, DbError> {
    let deleted = db
        .execute(
            db.query(
                "DELETE FROM personal_access_tokens \
                 WHERE id = $1 AND tokenable_type = $2 AND tokenable_id = $3",
            )
            .bind(id)
            .bind(TOKENABLE_TYPE)
            .bind(user_id),
        )
        .await?;
    Ok(deleted > 0)
}

/// Deletes every token of `user_id`, in `tx`; answers how many.
pub async fn delete_for_user_in(tx: &mut Tx, user_id: i64) -> Result<u64, DbError> {
    tx.execute(
        tx.query("DELETE FROM personal_access_tokens WHERE tokenable_type = $1 AND tokenable_id = $2")
            .bind(TOKENABLE_TYPE)
            .bind(user_id),
    )
    .await
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

/// The prefix of the ability that reads one set (`odata:read:Items`).
const READ_SET_ABILITY: &str = "odata:read:";

/// What a token's `abilities` column (Sanctum's JSON array) lets it read:
/// every set the owner may (`["*"]` or a list naming [`READ_ABILITY`]),
/// some sets (`odata:read:<Set>` for each), or nothing (no abilities, or
/// anything that is not such an array, as in Sanctum).
fn reads(abilities: Option<&str>) -> Reads {
    let Some(list) = abilities.and_then(|text| serde_json::from_str::<Vec<String>>(text).ok())
    else {
        return Reads::Nothing;
    };
    if list.iter().any(|a| a == "*" || a == READ_ABILITY) {
        return Reads::Every;
    }
    let sets: Vec<String> = list
        .iter()
        .filter_map(|a| a.strip_prefix(READ_SET_ABILITY))
        .filter(|set| !set.is_empty())
        .map(str::to_owned)
        .collect();
    match sets.is_empty() {
        true => Reads::Nothing,
        false => Reads::Sets(sets),
    }
}

/// The sets `abilities` name, when only some (`None` for every set, or
/// for none).
pub fn sets_of(abilities: Option<&str>) -> Option<Vec<String>> {
    match reads(abilities) {
        Reads::Sets(sets) => Some(sets),
        Reads::Every | Reads::Nothing => None,
    }
}

/// What a token reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reads {
    Nothing,
    Every,
    Sets(Vec<String>),
}

/// The `abilities` a token reading `sets` (every set the owner may read
/// when `None`) is stored with.
pub fn abilities(sets: Option<&[String]>) -> String {
    let list: Vec<String> = match sets {
        None => vec![READ_ABILITY.to_owned()],
        Some(sets) => sets.iter().map(|s| format!("{READ_SET_ABILITY}{s}")).collect(),
    };
    serde_json::Value::from(list).to_string()
}

/// What a bearer token lets its request do: read as `user_id`, the sets
/// named (every set they may read when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The owner.
    pub user_id: i64,
    /// `personal_access_tokens.id`.
    pub token_id: i64,
    /// The sets it was given, when only some.
    pub sets: Option<Vec<String>>,
    /// This use came from another client address than the token's last
    /// (or is its first).
    pub new_ip: bool,
}

/// The user a bearer token acts for, unless the token is unknown, expired,
/// owned by another model than the user model (a Sanctum token of another
/// `tokenable_type` in a shared database), or without an ability to read.
/// Records its use in `last_used_at`, at most once a minute so a busy client
/// does not turn every read into a write, and at once when it comes from
/// another client address than its last (`ip`; [`Grant::new_ip`]).
pub async fn user_of(db: &Db, presented: &str, ip: &str) -> Result<Option<Grant>, DbError> {
    let digest = sha256_hex(presented);
    let dialect = db.dialect();
    // The owner's row must still be there: a token of a removed account
    // reads nothing.
    let sql = format!(
        "SELECT t.id, t.tokenable_id, t.abilities, t.last_used_ip, {} AS used, {} AS expires \
         FROM personal_access_tokens t JOIN users u ON u.id = t.tokenable_id \
         WHERE t.token = $1 AND t.tokenable_type = $2",
        dialect.epoch_of("t.last_used_at"),
        dialect.epoch_of("t.expires_at"),
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
    let sets = match reads(row.text("abilities")?.as_deref()) {
        Reads::Nothing => return Ok(None),
        Reads::Every => None,
        Reads::Sets(sets) => Some(sets),
    };
    if expires.is_some_and(|at| at <= now) {
        return Ok(None);
    }
    let id: i64 = row.try_get("id")?;
    let user_id: i64 = row.try_get("tokenable_id")?;
    let used: Option<i64> = row.try_get("used")?;
    let new_ip = row.text("last_used_ip")?.as_deref() != Some(ip);
    if new_ip || used.is_none_or(|at| now - at >= USE_RECORD_INTERVAL_SECONDS) {
        let sql = format!(
            "UPDATE personal_access_tokens SET last_used_at = {}, last_used_ip = $1 WHERE id = $2",
            dialect.now_utc()
        );
        db.execute(sqlx::query(&dialect.placeholders(&sql)).bind(ip.to_owned()).bind(id))
            .await?;
    }
    Ok(Some(Grant {
        user_id,
        token_id: id,
        sets,
        new_ip,
    }))
}

#[cfg(test)]
mod tests {
    use super::{abilities, reads, Reads};

    #[test]
    fn only_a_wildcard_the_read_ability_or_named_sets_read() {
        assert_eq!(reads(Some("[\"*\"]")), Reads::Every);
        assert_eq!(reads(Some("[\"reports:write\",\"odata:read\"]")), Reads::Every);
        assert_eq!(reads(Some("[\"reports:write\"]")), Reads::Nothing);
        assert_eq!(reads(Some("[]")), Reads::Nothing);
        assert_eq!(reads(Some("*")), Reads::Nothing);
        assert_eq!(reads(Some("{\"*\":true}")), Reads::Nothing);
        assert_eq!(reads(None), Reads::Nothing);
        assert_eq!(reads(Some("[\"odata:read:\"]")), Reads::Nothing);
        assert_eq!(
            reads(Some(&abilities(Some(&["Items".to_owned(), "Orders".to_owned()])))),
            Reads::Sets(vec!["Items".to_owned(), "Orders".to_owned()])
        );
        assert_eq!(reads(Some(&abilities(None))), Reads::Every);
    }
}
