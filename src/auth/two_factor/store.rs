//! `gatehouse_two_factor` (one row per user: the sealed secret, whether it is
//! confirmed, the last accepted time step) and `gatehouse_recovery_codes`
//! (the SHA-256 of each code, and when it was used).
//!
//! Every decision that two instances could race on is one statement whose
//! affected rows give the answer: a time step or a recovery code is accepted
//! at most once however many instances share the database.

use sqlx::Row;

use crate::auth::epoch::Epoch;
use crate::db::{Db, DbError, TextColumn, Tx};

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
/// `tx`. `false` (nothing changed) unless an enrolment was pending.
pub async fn confirm_in(
    tx: &mut Tx,
    user_id: i64,
    step: i64,
    code_hashes: &[String],
) -> Result<bool, DbError> {
    let d = tx.dialect();
    let now = d.now_utc();
    let activate = format!(
        "UPDATE gatehouse_two_factor SET confirmed_at = {now}, last_step = $1, \
         failed_in_row = 0, updated_at = {now} WHERE user_id = $2 AND confirmed_at IS NULL"
    );
    let activated = tx
        .execute(sqlx::query(&d.placeholders(&activate)).bind(step).bind(user_id))
        .await?;
    if activated != 1 {
        return Ok(false);
    }
    write_recovery_codes(tx, user_id, code_hashes).await?;
    Ok(true)
}

/// Accepts `step` for an active user unless that step or a later one was
/// accepted before: a replayed code, or an older one, is refused, on every
/// instance, by the one statement that records it.
pub async fn accept_step(
    db: &Db,
    user_id: i64,
    epoch: Epoch,
    step: i64,
) -> Result<bool, DbError> {
    let d = db.dialect();
    let sql = format!(
        "UPDATE gatehouse_two_factor SET last_step = $1, updated_at = {} \
         WHERE user_id = $2 AND confirmed_at IS NOT NULL \
         AND (last_step IS NULL OR last_step < $3) AND {}",
        d.now_utc(),
        epoch_is(4, 5)
    );
    let accepted = db
        .execute(
            sqlx::query(&d.placeholders(&sql))
                .bind(step)
                .bind(user_id)
                .bind(step)
                .bind(user_id)
                .bind(epoch.0),
        )
        .await?;
    Ok(accepted == 1)
}

/// The condition that the user (placeholder `$user`) is still at the
/// credential epoch (`$epoch`) the pending sign-in began in: the statement
/// that completes the second step checks it, so a change committed since
/// voids the sign-in.
fn epoch_is(user: u8, epoch: u8) -> String {
    format!(
        "COALESCE((SELECT epoch FROM gatehouse_credential_epochs WHERE user_id = ${user}), 0) \
         = ${epoch}"
    )
}

/// Replaces the user's recovery codes with `code_hashes`, in `tx`:
/// `false` (nothing changed) unless two-factor sign-in is active.
pub async fn replace_recovery_codes_in(
    tx: &mut Tx,
    user_id: i64,
    code_hashes: &[String],
) -> Result<bool, DbError> {
    let d = tx.dialect();
    // Locks the user's row, so two renewals at once leave one set, not both.
    let touch = format!(
        "UPDATE gatehouse_two_factor SET updated_at = {} \
         WHERE user_id = $1 AND confirmed_at IS NOT NULL",
        d.now_utc()
    );
    let active = tx
        .execute(sqlx::query(&d.placeholders(&touch)).bind(user_id))
        .await?;
    if active != 1 {
        return Ok(false);
    }
    write_recovery_codes(tx, user_id, code_hashes).await?;
    Ok(true)
}

/// Deletes the user's recovery codes and inserts `code_hashes` (of the
/// 120-bit sets), inside `tx`.
async fn write_recovery_codes(
    tx: &mut Tx,
    user_id: i64,
    code_hashes: &[String],
) -> Result<(), DbError> {
    tx.execute(
        tx.query("DELETE FROM gatehouse_recovery_codes WHERE user_id = $1")
            .bind(user_id),
    )
    .await?;
    for hash in code_hashes {
        tx.execute(
            tx.query(
                "INSERT INTO gatehouse_recovery_codes (user_id, code_hash, bits) \
                 VALUES ($1, $2, 120)",
            )
            .bind(user_id)
            .bind(hash.clone()),
        )
        .await?;
    }
    Ok(())
}

/// Marks the user's unused recovery code with this hash as used: `true` for
/// exactly one caller, however many present the same code at once.
pub async fn use_recovery_code(
    db: &Db,
    user_id: i64,
    epoch: Epoch,
    code_hash: &str,
) -> Result<bool, DbError> {
    let d = db.dialect();
    let sql = format!(
        "UPDATE gatehouse_recovery_codes SET used_at = {} \
         WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL AND {}",
        d.now_utc(),
        epoch_is(3, 4)
    );
    // Two equal codes in one set are possible only in theory (80 bits);
    // then both are spent, which errs on the safe side.
    let used = db
        .execute(
            sqlx::query(&d.placeholders(&sql))
                .bind(user_id)
                .bind(code_hash.to_owned())
                .bind(user_id)
                .bind(epoch.0),
        )
        .await?;
    Ok(used >= 1)
}

/// Whether the user's recovery codes are of the 80-bit sets issued before
/// the 112-bit rule (ASVS 5.0 6.5.2): such a set is to be renewed.
pub async fn recovery_codes_are_earlier(db: &Db, user_id: i64) -> Result<bool, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT COUNT(*) AS earlier FROM gatehouse_recovery_codes \
                 WHERE user_id = $1 AND bits < 112",
            )
            .bind(user_id),
        )
        .await?;
    let earlier: i64 = match row {
        Some(row) => row.try_get("earlier")?,
        None => 0,
    };
    Ok(earlier > 0)
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
/// in `tx`. `false` if there was no row.
pub async fn disable_in(tx: &mut Tx, user_id: i64) -> Result<bool, DbError> {
    // The user's row first, as every other transaction here takes it: two of
    // them on one user wait for each other instead of deadlocking.
    let deleted = tx
        .execute(
            tx.query("DELETE FROM gatehouse_two_factor WHERE user_id = $1")
                .bind(user_id),
        )
        .await?;
    tx.execute(
        tx.query("DELETE FROM gatehouse_recovery_codes WHERE user_id = $1")
            .bind(user_id),
    )
    .await?;
    Ok(deleted == 1)
}

/// Opens a second step closed by failures in a row (a reset by mail), in
/// `tx`.
pub async fn reopen_second_step_in(tx: &mut Tx, user_id: i64) -> Result<(), DbError> {
    tx.execute(
        tx.query("UPDATE gatehouse_two_factor SET failed_in_row = 0 WHERE user_id = $1")
            .bind(user_id),
    )
    .await?;
    Ok(())
}

/// Counts a failed second-factor code of `user_id` in the row of failures
/// with no success between; answers the row's length (0 without two-factor
/// sign-in on).
pub async fn count_failure_in_row(db: &Db, user_id: i64) -> Result<i64, DbError> {
    db.execute(
        db.query(
            "UPDATE gatehouse_two_factor SET failed_in_row = failed_in_row + 1 \
             WHERE user_id = $1",
        )
        .bind(user_id),
    )
    .await?;
    failures_in_row(db, user_id).await
}

/// How many second-factor codes of `user_id` failed in a row.
pub async fn failures_in_row(db: &Db, user_id: i64) -> Result<i64, DbError> {
    let row = db
        .fetch_optional(
            db.query("SELECT failed_in_row FROM gatehouse_two_factor WHERE user_id = $1")
                .bind(user_id),
        )
        .await?;
    Ok(match row {
        Some(row) => row.try_get::<i64, _>("failed_in_row")?,
        None => 0,
    })
}

/// A right second-factor code ends the row of failures.
pub async fn clear_failures_in_row(db: &Db, user_id: i64) -> Result<(), DbError> {
    db.execute(
        db.query(
            "UPDATE gatehouse_two_factor SET failed_in_row = 0 \
             WHERE user_id = $1 AND failed_in_row <> 0",
        )
        .bind(user_id),
    )
    .await?;
    Ok(())
}
