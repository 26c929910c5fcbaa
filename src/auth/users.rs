//! The `users` table (Laravel's stock columns).

use sqlx::Row;

use super::epoch::Epoch;
use crate::db::{Db, DbError, Dialect, Tx};
use crate::domain::{Email, SecretToken};

/// A user as the sign-in flow needs it.
#[derive(Debug, Clone)]
pub struct UserRecord {
    /// `users.id`.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// E-mail address as stored.
    pub email: String,
    /// Password hash (argon2id or bcrypt).
    pub password_hash: String,
    /// The credential epoch, read in the statement that read the hash: a
    /// sign-in waiting for its second factor is good for this epoch only.
    pub epoch: Epoch,
    /// Whether a sign-in found the password in the breached-password file
    /// (`password_breached_at` is set): every sign-in asks for a new one.
    pub breached: bool,
}

/// The columns of a [`UserRecord`].
fn columns(d: Dialect) -> String {
    format!(
        "id, name, email, password, \
         (SELECT epoch FROM gatehouse_credential_epochs WHERE user_id = users.id) AS credential_epoch, \
         {} AS breached_at",
        d.epoch_of("password_breached_at")
    )
}

fn record(row: sqlx::any::AnyRow) -> Result<UserRecord, DbError> {
    Ok(UserRecord {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password")?,
        epoch: Epoch(row.try_get::<Option<i64>, _>("credential_epoch")?.unwrap_or(0)),
        breached: row.try_get::<Option<i64>, _>("breached_at")?.is_some(),
    })
}

/// Finds a user by address, ignoring case.
pub async fn find_by_email(db: &Db, email: &Email) -> Result<Option<UserRecord>, DbError> {
    let sql = format!(
        "SELECT {} FROM users WHERE {}",
        columns(db.dialect()),
        db.dialect().email_matches("$1")
    );
    // MySQL binds by position: `$1` is bound as often as it occurs.
    let (sql, order) = db.dialect().positional(&sql);
    let mut query = sqlx::query(&sql);
    for _ in 0..order.map_or(1, |uses| uses.len()) {
        query = query.bind(email.as_str().to_owned());
    }
    db.fetch_optional(query).await?.map(record).transpose()
}

/// Finds a user by id.
pub async fn find_by_id(db: &Db, id: i64) -> Result<Option<UserRecord>, DbError> {
    let sql = format!("SELECT {} FROM users WHERE id = $1", columns(db.dialect()));
    db.fetch_optional(sqlx::query(&db.dialect().placeholders(&sql)).bind(id))
        .await?
        .map(record)
        .transpose()
}

/// Why a user could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateUserError {
    /// The address is taken.
    #[error("a user with this email already exists")]
    Duplicate,
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// Creates a user and answers its id.
pub async fn create(
    db: &Db,
    name: &str,
    email: &Email,
    password_hash: &str,
) -> Result<i64, CreateUserError> {
    if find_by_email(db, email).await?.is_some() {
        return Err(CreateUserError::Duplicate);
    }
    let now = db.dialect().now_utc();
    let sql = format!(
        "INSERT INTO users (name, email, password, created_at, updated_at) \
         VALUES ($1, $2, $3, {now}, {now})"
    );
    let inserted = db
        .execute(
            sqlx::query(&db.dialect().placeholders(&sql))
                .bind(name.to_owned())
                .bind(email.as_str().to_owned())
                .bind(password_hash.to_owned()),
        )
        .await;
    match inserted {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(CreateUserError::Duplicate),
        Err(e) => Err(e.into()),
        Ok(_) => find_by_email(db, email)
            .await?
            .map(|u| u.id)
            .ok_or(CreateUserError::Database(sqlx::Error::RowNotFound)),
    }
}

/// The `password` of an account made by an OpenID provider: no hash, so
/// nothing verifies against it (a sign-in with any password is checked
/// against a dummy hash instead, and fails in the same time); a reset by
/// mail sets a real one.
pub const NO_PASSWORD: &str = "!";

/// Whether a stored `password` is a hash a password can match.
pub fn has_password(password_hash: &str) -> bool {
    password_hash != NO_PASSWORD && !password_hash.is_empty()
}

/// Makes an account for a person an OpenID provider vouches for: the
/// address (lower-cased) verified now, no usable password. Answers its id.
pub async fn create_verified_without_password(
    db: &Db,
    name: &str,
    email: &Email,
) -> Result<i64, CreateUserError> {
    let id = create(db, name, email, NO_PASSWORD).await?;
    let sql = format!(
        "UPDATE users SET email_verified_at = {} WHERE id = $1",
        db.dialect().now_utc()
    );
    let sql = db.dialect().placeholders(&sql);
    db.execute(sqlx::query(&sql).bind(id)).await?;
    Ok(id)
}

/// Replaces a user's password hash with one of the same password (a rehash
/// at sign-in: one statement); a breached mark stays.
pub async fn rehash_password(db: &Db, id: i64, password_hash: &str) -> Result<(), DbError> {
    let sql = format!(
        "UPDATE users SET password = $1, updated_at = {} WHERE id = $2",
        db.dialect().now_utc()
    );
    let sql = db.dialect().placeholders(&sql);
    db.execute(sqlx::query(&sql).bind(password_hash.to_owned()).bind(id))
        .await?;
    Ok(())
}

/// Marks the user's password as found in the breached-password file;
/// answers whether it was not marked before.
pub async fn mark_breached(db: &Db, id: i64) -> Result<bool, DbError> {
    let sql = format!(
        "UPDATE users SET password_breached_at = {} \
         WHERE id = $1 AND password_breached_at IS NULL",
        db.dialect().now_utc()
    );
    let sql = db.dialect().placeholders(&sql);
    Ok(db.execute(sqlx::query(&sql).bind(id)).await? == 1)
}

/// Holds user `id`'s row until `tx` ends: another change to how the user
/// signs in that holds it too waits for this one, and then reads what this
/// one left (every engine reads committed rows; on SQLite the first write
/// takes the database's one write lock). `false` when there is no such
/// user.
pub async fn hold_in(tx: &mut Tx, id: i64) -> Result<bool, DbError> {
    let hold = tx.query("UPDATE users SET email = email WHERE id = $1").bind(id);
    Ok(tx.execute(hold).await? > 0)
}

/// Replaces a user's password with a new one, in `tx`: a breached mark is
/// cleared, as the new password passed the check.
pub async fn set_password_hash_in(
    tx: &mut Tx,
    id: i64,
    password_hash: &str,
) -> Result<(), DbError> {
    let sql = set_password_sql(tx.dialect());
    tx.execute(sqlx::query(&sql).bind(password_hash.to_owned()).bind(id))
        .await?;
    Ok(())
}

/// The statement that sets a new `password` (`$1`) of user `$2`.
fn set_password_sql(d: Dialect) -> String {
    let sql = format!(
        "UPDATE users SET password = $1, password_breached_at = NULL, updated_at = {} \
         WHERE id = $2",
        d.now_utc()
    );
    d.placeholders(&sql).into_owned()
}

/// Sets a password chosen outside a signed-in session (a reset by mail,
/// the command line), in `tx`: the new hash, and a second step that failures
/// in a row closed opened again.
pub async fn reset_password_in(tx: &mut Tx, id: i64, password_hash: &str) -> Result<(), DbError> {
    set_password_hash_in(tx, id, password_hash).await?;
    super::two_factor::reopen_second_step_in(tx, id).await
}

/// The user's current `remember_token`, if one is set.
pub async fn remember_token(db: &Db, id: i64) -> Result<Option<String>, DbError> {
    let row = db
        .fetch_optional(
            db.query("SELECT remember_token FROM users WHERE id = $1")
                .bind(id),
        )
        .await?;
    Ok(row.and_then(|r| {
        r.try_get::<Option<String>, _>("remember_token")
            .ok()
            .flatten()
    }))
}

/// The user's `remember_token`, created when none is set yet.
pub async fn ensure_remember_token(db: &Db, id: i64) -> Result<String, DbError> {
    match remember_token(db, id).await? {
        Some(token) if !token.is_empty() => Ok(token),
        _ => rotate_remember_token(db, id).await,
    }
}

/// The statement that sets `remember_token` (`$1`) of user `$2`.
const ROTATE_REMEMBER_TOKEN: &str = "UPDATE users SET remember_token = $1 WHERE id = $2";

/// Replaces `remember_token` (Laravel's remember-me column).
pub async fn rotate_remember_token(db: &Db, id: i64) -> Result<String, DbError> {
    let token = SecretToken::generate().expose().to_owned();
    db.execute(db.query(ROTATE_REMEMBER_TOKEN).bind(token.clone()).bind(id))
        .await?;
    Ok(token)
}

/// Replaces `remember_token`, in `tx`.
pub async fn rotate_remember_token_in(tx: &mut Tx, id: i64) -> Result<String, DbError> {
    let token = SecretToken::generate().expose().to_owned();
    tx.execute(tx.query(ROTATE_REMEMBER_TOKEN).bind(token.clone()).bind(id))
        .await?;
    Ok(token)
}

/// Number of users (the demo account is made only for an empty table).
pub async fn count(db: &Db) -> Result<i64, DbError> {
    let row = db
        .fetch_optional(db.query("SELECT COUNT(*) AS n FROM users"))
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    row.try_get("n")
}
