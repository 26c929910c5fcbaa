//! The credential epoch of a user (`gatehouse_credential_epochs`): a number
//! raised by every change to how the user signs in — a new password (changed
//! or reset), two-factor sign-in turned on or off or its recovery codes
//! renewed, the user's sessions ended. What was granted under an earlier
//! epoch and is still waiting (a sign-in that has its password but not yet
//! its second factor) is void once the epoch moved on.

use sqlx::Row;

use crate::db::{Db, DbError, Tx};

/// A user's credential epoch: 0 until the first change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Epoch(pub i64);

/// The user's current epoch.
pub async fn current(db: &Db, user_id: i64) -> Result<Epoch, DbError> {
    let row = db
        .fetch_optional(
            db.query("SELECT epoch FROM gatehouse_credential_epochs WHERE user_id = $1")
                .bind(user_id),
        )
        .await?;
    Ok(Epoch(match row {
        Some(row) => row.try_get("epoch")?,
        None => 0,
    }))
}

/// Moves the user's epoch on, in `tx`: everything waiting under an earlier
/// one is void once `tx` commits.
pub async fn advance_in(tx: &mut Tx, user_id: i64) -> Result<(), DbError> {
    let d = tx.dialect();
    let sql = format!(
        "INSERT INTO gatehouse_credential_epochs (user_id, epoch) VALUES ($1, 1) {} \
         epoch = gatehouse_credential_epochs.epoch + 1",
        d.upsert("user_id")
    );
    let sql = d.placeholders(&sql);
    tx.execute(sqlx::query(&sql).bind(user_id)).await?;
    Ok(())
}
