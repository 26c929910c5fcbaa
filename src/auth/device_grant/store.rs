//! The device authorization grant (RFC 8628) in `gatehouse_device_codes`:
//! a script's request for codes ([`issue`]), a signed-in person's answer to
//! its user code ([`pending`], [`decide`]), and the script's polling
//! ([`poll`]), which hands the approval out once. Both codes are stored as
//! their SHA-256 only; every change of state is one conditional `UPDATE`,
//! so two answers or two redemptions at once cannot both succeed.

use sqlx::Row;

use crate::auth::tokens;
use crate::clock::unix_now;
use crate::db::{Db, DbError, TextColumn};
use crate::domain::{sha256_hex, SecretToken, UserCode};
use crate::i18n::Language;

/// How long the codes live (RFC 8628's `expires_in`).
pub const LIFETIME_SECONDS: i64 = 600;

/// The fewest seconds between two polls (RFC 8628's `interval`).
pub const INTERVAL_SECONDS: i64 = 5;

/// Fresh codes for a script: the device code it polls with and the user
/// code a person types.
pub struct Issued {
    /// The device code, given to the script once.
    pub device_code: SecretToken,
    /// The user code.
    pub user_code: UserCode,
}

/// Stores fresh codes for `client_id` asking to read `sets` (every set
/// the approver may read when `None`).
pub async fn issue(db: &Db, client_id: &str, sets: Option<&[String]>) -> Result<Issued, DbError> {
    let dialect = db.dialect();
    let sql = dialect.insert_unless_present(
        "gatehouse_device_codes",
        "device_code, user_code, client_id, abilities, state, expires_at",
        "$1, $2, $3, $4, 'pending', $5",
        "user_code",
    );
    let sql = dialect.placeholders(&sql).into_owned();
    let abilities = tokens::abilities(sets);
    // A user code already handed out (one in 2.6·10¹⁰ per live code) is
    // drawn again; the device code is 256 random bits.
    loop {
        let issued = Issued {
            device_code: SecretToken::generate(),
            user_code: UserCode::generate(),
        };
        let inserted = db
            .execute(
                sqlx::query(&sql)
                    .bind(issued.device_code.digest())
                    .bind(issued.user_code.digest())
                    .bind(client_id.to_owned())
                    .bind(abilities.clone())
                    .bind(unix_now() + LIFETIME_SECONDS),
            )
            .await?;
        if inserted == 1 {
            return Ok(issued);
        }
    }
}

/// A user code waiting for its answer, as the `/device` screen shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The client that asked.
    pub client_id: String,
    /// The sets it asks to read, when only some.
    pub sets: Option<Vec<String>>,
}

/// The request `code` names, if it waits for an answer and has not expired.
pub async fn pending(db: &Db, code: &UserCode) -> Result<Option<Pending>, DbError> {
    let row = db
        .fetch_optional(
            db.query(
                "SELECT client_id, abilities FROM gatehouse_device_codes \
                 WHERE user_code = $1 AND state = 'pending' AND expires_at > $2",
            )
            .bind(code.digest())
            .bind(unix_now()),
        )
        .await?;
    row.map(|row| {
        Ok(Pending {
            client_id: row.text("client_id")?.unwrap_or_default(),
            sets: tokens::sets_of(row.text("abilities")?.as_deref()),
        })
    })
    .transpose()
}

/// A person's answer to a user code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by `user_id`, whose mail goes out in `language`.
    Allow {
        /// The approver.
        user_id: i64,
        /// The approver's language.
        language: Language,
    },
    /// Denied.
    Deny,
}

/// Records `decision` for `code` while it waits and lives; answers whether
/// it did (`false` for a code that is wrong, answered or expired).
pub async fn decide(db: &Db, code: &UserCode, decision: Decision) -> Result<bool, DbError> {
    let (state, user_id, language) = match decision {
        Decision::Allow { user_id, language } => ("approved", Some(user_id), Some(language.tag())),
        Decision::Deny => ("denied", None, None),
    };
    let changed = db
        .execute(
            db.query(
                "UPDATE gatehouse_device_codes SET state = $1, user_id = $2, language = $3 \
                 WHERE user_code = $4 AND state = 'pending' AND expires_at > $5",
            )
            .bind(state)
            .bind(user_id)
            .bind(language)
            .bind(code.digest())
            .bind(unix_now()),
        )
        .await?;
    Ok(changed == 1)
}

/// What a poll of a device code finds (RFC 8628 §3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    /// No person has answered yet (`authorization_pending`).
    Pending,
    /// Polled sooner than [`INTERVAL_SECONDS`] after the last poll
    /// (`slow_down`).
    SlowDown,
    /// The person denied it (`access_denied`).
    Denied,
    /// The codes expired (`expired_token`).
    Expired,
    /// Unknown, another client's, or already redeemed (`invalid_grant`).
    Invalid,
    /// Approved, and redeemed by this poll: a token is to be made.
    Approved(Approval),
}

/// An approval redeemed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The approver, who owns the token.
    pub user_id: i64,
    /// The sets the token reads, when only some.
    pub sets: Option<Vec<String>>,
    /// The approver's language, for the mail.
    pub language: Language,
}

/// Polls the device code `presented` for `client_id`.
pub async fn poll(db: &Db, presented: &str, client_id: &str) -> Result<Poll, DbError> {
    let digest = sha256_hex(presented);
    let row = db
        .fetch_optional(
            db.query(
                "SELECT client_id, abilities, state, user_id, language, expires_at, polled_at \
                 FROM gatehouse_device_codes WHERE device_code = $1",
            )
            .bind(digest.clone()),
        )
        .await?;
    let Some(row) = row else {
        return Ok(Poll::Invalid);
    };
    if row.text("client_id")?.as_deref() != Some(client_id) {
        return Ok(Poll::Invalid);
    }
    let now = unix_now();
    let expires_at: i64 = row.try_get("expires_at")?;
    let state = row.text("state")?.unwrap_or_default();
    if state == "redeemed" {
        return Ok(Poll::Invalid);
    }
    if expires_at <= now {
        return Ok(Poll::Expired);
    }
    match state.as_str() {
        "denied" => Ok(Poll::Denied),
        "approved" => redeem(db, &digest, &row).await,
        _ => {
            let polled_at: Option<i64> = row.try_get("polled_at")?;
            db.execute(
                db.query("UPDATE gatehouse_device_codes SET polled_at = $1 WHERE device_code = $2")
                    .bind(now)
                    .bind(digest),
            )
            .await?;
            match polled_at {
                Some(at) if now - at < INTERVAL_SECONDS => Ok(Poll::SlowDown),
                _ => Ok(Poll::Pending),
            }
        }
    }
}

/// Moves an approved row to `redeemed`: the one poll that does gets the
/// approval, any other at the same moment finds it redeemed.
async fn redeem(db: &Db, digest: &str, row: &sqlx::any::AnyRow) -> Result<Poll, DbError> {
    let redeemed = db
        .execute(
            db.query(
                "UPDATE gatehouse_device_codes SET state = 'redeemed' \
                 WHERE device_code = $1 AND state = 'approved'",
            )
            .bind(digest.to_owned()),
        )
        .await?;
    if redeemed != 1 {
        return Ok(Poll::Invalid);
    }
    let user_id: Option<i64> = row.try_get("user_id")?;
    let Some(user_id) = user_id else {
        return Ok(Poll::Invalid);
    };
    let language = row.text("language")?;
    Ok(Poll::Approved(Approval {
        user_id,
        sets: tokens::sets_of(row.text("abilities")?.as_deref()),
        language: language
            .as_deref()
            .and_then(Language::from_tag)
            .unwrap_or_default(),
    }))
}

/// Removes the codes that expired over a lifetime ago (until then a
/// script still polling hears `expired_token`).
pub async fn sweep(db: &Db) -> Result<u64, DbError> {
    db.execute(
        db.query("DELETE FROM gatehouse_device_codes WHERE expires_at <= $1")
            .bind(unix_now() - LIFETIME_SECONDS),
    )
    .await
}
