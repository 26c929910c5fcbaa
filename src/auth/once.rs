//! `gatehouse_used_once`: values a request may present once (an OpenID
//! flow's `state`). A claim is one `INSERT` of the value's SHA-256 that the
//! primary key lets succeed once, so two requests presenting the same value
//! at the same moment — on one instance or on two — cannot both pass. Rows
//! are kept until the value could no longer be presented anyway, then
//! swept.

use crate::clock::unix_now;
use crate::db::{Db, DbError};
use crate::domain::sha256_hex;

/// Claims `value` of kind `scope` (`"oidc_state"`), good until `until`
/// (Unix seconds): `true` for the first claim, `false` for every later one.
pub async fn claim(db: &Db, scope: &str, value: &str, until: i64) -> Result<bool, DbError> {
    let key = sha256_hex(&format!("{scope}|{value}"));
    let sql = db.dialect().insert_unless_present(
        "gatehouse_used_once",
        "used_key, expires_at",
        "$1, $2",
        "used_key",
    );
    let sql = db.dialect().placeholders(&sql).into_owned();
    let inserted = db.execute(sqlx::query(&sql).bind(key).bind(until)).await?;
    Ok(inserted == 1)
}

/// Removes the claims whose values can no longer be presented.
pub async fn sweep(db: &Db) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_used_once WHERE expires_at <= $1")
            .bind(unix_now()),
    )
    .await
}
