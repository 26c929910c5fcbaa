//! `gatehouse_two_factor` (one row per user: the sealed secret, whether it is
//! confirmed, the last accepted time step) and `gatehouse_recovery_codes`
//! (the SHA-256 of each code, and when it was used).
//!
//! Every decision that two instances could race on is one statement whose
//! affected rows give the answer: a time step or a recovery code is accepted
//! at most once however many instances share the database.

use sqlx::Row;

use crate::db::{Db, DbError, TextColumn};

/// A user's two-factor sign-in as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Nothing stored: two-factor sign-in is off.
    None,
    /// Enrolment begun, not confirmed with a code yet: still off.
    Pending {
        /// The sealed secret.
        sealed: String,
    },
    /// Confirmed: every sign-in needs a code.
    Active {
        /// The sealed secret.
        sealed: String,
        /// The last time step accepted, if any.
        last_step: Option<i64>,
    },
}

/// The user's stored state.
pub async fn state(db: &Db, user_id: i64) -> Result<State, DbError> {
    let d = db.dialect();
    let sql = format!(
        "SELECT secret, {} AS confirmed, last_step FROM gatehouse_two_factor WHERE user_id = $1",
        d.epoch_of("confirmed_at")
    );
    let Some(row) = db
        .fetch_optional(sqlx::query(&d.placeholders(&sql)).bind(user_id))
        .await?
    else {
        return Ok(State::None);
    };
    let sealed = row.text("secret")?.unwrap_or_default();
    let confirmed: Option<i64> = row.try_get("confirmed")?;
    Ok(match confirmed {
        None => State::Pending { sealed },
        Some(_) => State::Active {
            sealed,
            last_step: row.try_get("last_step")?,
        },
    })
}

/// Stores `sealed` as the user's pending enrolment, replacing a pending one.
/// `false` (nothing changed) when two-factor sign-in is active: turning it
/// off is the caller's decision, never a side effect.
pub async fn begin(db: &Db, user_id: i64, sealed: &str) -> Result<bool, DbError> {
    let d = db.dialect();
    let now = d.now_utc();
    let replace = format!(
        "UPDATE gatehouse_two_factor SET secret = $1, last_step = NULL, created_at = {now}, \
         updated_at = {now} WHERE user_id = $2 AND confirmed_at IS NULL"
    );
    let insert = d.insert_unless_present(
        "gatehouse_two_factor",
        "user_id, secret, created_at, updated_at",
        &format!("$1, $2, {now}, {now}"),
        "user_id",
    );
    // A row inserted by a concurrent enrolment between the two statements is
    // pending too: the second round replaces it.
    for _ in 0..2 {
        let replaced = db
            .execute(
                sqlx::query(&d.placeholders(&replace))
                    .bind(sealed.to_owned())
                    .bind(user_id),
            )
            .await?;
        if replaced == 1 {
            return Ok(true);
        }
        let inserted = db
            .execute(
                sqlx::query(&d.placeholders(&insert))
                    .bind(user_id)
                    .bind(sealed.to_owned()),
            )
            .await?;
        if inserted == 1 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Turns a pending enrolment on, recording `step` (the step of the code that
/// confirmed it) as used and storing `code_hashes` as the recovery codes, in
/// one transaction. `false` (nothing changed) unless an enrolment was pending.
pub async fn confirm(
    db: &Db,
    user_id: i64,
    step: i64,
    code_hashes: &[String],
) -> Result<bool, DbError> {
    let d = db.dialect();
    let now = d.now_utc();
    let activate = format!(
        "UPDATE gatehouse_two_factor SET confirmed_at = {now}, last_step = $1, \
         updated_at = {now} WHERE user_id = $2 AND confirmed_at IS NULL"
    );
    let mut tx = db.begin().await?;
    let activated = sqlx::query(&d.placeholders(&activate))
        .bind(step)
        .bind(user_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if activated != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    write_recovery_codes(db, &mut tx, user_id, code_hashes).await?;
    tx.commit().await?;
    Ok(true)
}

/// Accepts `step` for an active user unless that step or a later one was
/// accepted before: a replayed code, or an older one, is refused, on every
/// instance, by the one statement that records it.
pub async fn accept_step(db: &Db, user_id: i64, step: i64) -> Result<bool, DbError> {
    let d = db.dialect();
    let sql = format!(
        "UPDATE gatehouse_two_factor SET last_step = $1, updated_at = {} \
         WHERE user_id = $2 AND confirmed_at IS NOT NULL \
         AND (last_step IS NULL OR last_step < $3)",
        d.now_utc()
    );
    let accepted = db
        .execute(
            sqlx::query(&d.placeholders(&sql))
                .bind(step)
                .bind(user_id)
                .bind(step),
        )
        .await?;
    Ok(accepted == 1)
}

/// Replaces the user's recovery codes with `code_hashes`, in one
/// transaction: `false` (nothing changed) unless two-factor sign-in is
/// active.
pub async fn replace_recovery_codes(
    db: &Db,
    user_id: i64,
    code_hashes: &[String],
) -> Result<bool, DbError> {
    let d = db.dialect();
    let mut tx = db.begin().await?;
    // Locks the user's row, so two renewals at once leave one set, not both.
    let touch = format!(
        "UPDATE gatehouse_two_factor SET updated_at = {} \
         WHERE user_id = $1 AND confirmed_at IS NOT NULL",
        d.now_utc()
    );
    let active = sqlx::query(&d.placeholders(&touch))
        .bind(user_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if active != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    write_recovery_codes(db, &mut tx, user_id, code_hashes).await?;
    tx.commit().await?;
    Ok(true)
}

/// Deletes the user's recovery codes and inserts `code_hashes`, inside `tx`.
async fn write_recovery_codes(
    db: &Db,
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    user_id: i64,
    code_hashes: &[String],
) -> Result<(), DbError> {
    let d = db.dialect();
    sqlx::query(d.static_placeholders(
        "DELETE FROM gatehouse_recovery_codes WHERE user_id = $1",
    ))
    .bind(user_id)
    .execute(&mut **tx)
    .await?;
    let insert = "INSERT INTO gatehouse_recovery_codes (user_id, code_hash) VALUES ($1, $2)";
    for hash in code_hashes {
        sqlx::query(d.static_placeholders(insert))
            .bind(user_id)
            .bind(hash.clone())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Marks the user's unused recovery code with this hash as used: `true` for
/// exactly one caller, however many present the same code at once.
pub async fn use_recovery_code(db: &Db, user_id: i64, code_hash: &str) -> Result<bool, DbError> {
    let d = db.dialect();
    let sql = format!(
        "UPDATE gatehouse_recovery_codes SET used_at = {} \
         WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL",
        d.now_utc()
    );
    // Two equal codes in one set are possible only in theory (80 bits);
    // then both are spent, which errs on the safe side.
    let used = db
        .execute(
            sqlx::query(&d.placeholders(&sql))
                .bind(user_id)
                .bind(code_hash.to_owned()),
        )
        .await?;
    Ok(used >= 1)
}

/// How many of the user's recovery codes are unused.
pub async fn remaining_recovery_codes(db: &Db, user_id: i64) -> Result<u64, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT COUNT(*) AS remaining FROM gatehouse_recovery_codes \
                 WHERE user_id = $1 AND used_at IS NULL",
            )
            .bind(user_id),
        )
        .await?;
    let remaining: i64 = match row {
        Some(row) => row.try_get("remaining")?,
        None => 0,
    };
    Ok(u64::try_from(remaining).unwrap_or_default())
}

/// Deletes the user's two-factor row (active or pending) and recovery codes,
/// in one transaction. `false` if there was no row.
pub async fn disable(db: &Db, user_id: i64) -> Result<bool, DbError> {
    let d = db.dialect();
    let mut tx = db.begin().await?;
    // The user's row first, as every other transaction here takes it: two of
    // them on one user wait for each other instead of deadlocking.
    let deleted = sqlx::query(d.static_placeholders(
        "DELETE FROM gatehouse_two_factor WHERE user_id = $1",
    ))
    .bind(user_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    sqlx::query(d.static_placeholders(
        "DELETE FROM gatehouse_recovery_codes WHERE user_id = $1",
    ))
    .bind(user_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(deleted == 1)
}
