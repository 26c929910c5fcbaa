//! Where a binding is kept: three columns of `sessions` and of
//! `gatehouse_remember` (`dbsc_id`, `dbsc_key`, `dbsc_thumbprint`).

use sqlx::any::AnyRow;

use super::proof::SessionKey;
use super::Binding;
use crate::db::{Db, DbError, TextColumn};

/// The binding a row read with the three columns holds, if any.
pub fn read(row: &AnyRow) -> Result<Option<Binding>, DbError> {
    let (Some(id), Some(jwk), Some(thumbprint)) = (
        row.text("dbsc_id")?,
        row.text("dbsc_key")?,
        row.text("dbsc_thumbprint")?,
    ) else {
        return Ok(None);
    };
    Ok(Some(Binding {
        id,
        key: SessionKey { jwk, thumbprint },
    }))
}

/// Binds the signed-in session stored under `id_hash`, once: `false` when
/// it is gone, a guest's, or already bound.
pub async fn bind(db: &Db, id_hash: &str, binding: &Binding) -> Result<bool, DbError> {
    let bound = db
        .execute(
            db.query(
                "UPDATE sessions SET dbsc_id = $1, dbsc_key = $2, dbsc_thumbprint = $3 \
                 WHERE id = $4 AND user_id IS NOT NULL AND dbsc_id IS NULL",
            )
            .bind(binding.id.clone())
            .bind(binding.key.jwk.clone())
            .bind(binding.key.thumbprint.clone())
            .bind(id_hash.to_owned()),
        )
        .await?;
    Ok(bound == 1)
}

/// Binds the remember-me records of the session stored under `id_hash`:
/// the one it was issued with and the one that recalled it. From now on
/// they recall only through a refresh proven by the same key.
pub async fn bind_remembered(db: &Db, id_hash: &str, binding: &Binding) -> Result<u64, DbError> {
    db.execute(
        db.query(
            "UPDATE gatehouse_remember SET dbsc_id = $1, dbsc_key = $2, dbsc_thumbprint = $3 \
             WHERE session_id = $4 OR selector = \
             (SELECT remember_selector FROM sessions WHERE id = $5)",
        )
        .bind(binding.id.clone())
        .bind(binding.key.jwk.clone())
        .bind(binding.key.thumbprint.clone())
        .bind(id_hash.to_owned())
        .bind(id_hash.to_owned()),
    )
    .await
}
