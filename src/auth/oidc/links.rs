//! `gatehouse_oidc_links`: which provider account (issuer + subject) signs
//! in which user. A provider account is linked to one user at most, and a
//! user has one link per provider; both are unique keys, so two requests
//! racing to link cannot both succeed.

use sqlx::Row;

use crate::clock::unix_now;
use crate::db::{Db, DbError, TextColumn, Tx};

/// One stored link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// `gatehouse_oidc_links.id`.
    pub id: i64,
    /// The user it signs in.
    pub user_id: i64,
    /// The provider's configured name.
    pub provider: String,
    /// Unix seconds it was made.
    pub created_at: i64,
    /// Unix seconds it last signed in, if ever.
    pub last_used_at: Option<i64>,
}

/// Why a link was not made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LinkError {
    /// The provider's account is linked to someone (a unique key refused
    /// it).
    #[error("this provider account or provider is already linked")]
    Taken,
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// `SELECT` of every column, followed by the literal `$rest`.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT id, user_id, provider, created_at, last_used_at FROM gatehouse_oidc_links ",
            $rest
        )
    };
}

fn read(row: &sqlx::any::AnyRow) -> Result<Link, DbError> {
    Ok(Link {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        provider: row.text("provider")?.unwrap_or_default(),
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

/// The links of one database.
pub(crate) struct Links<'a>(pub &'a Db);

impl Links<'_> {
    /// The link of the provider account `issuer` + `subject`, if any.
    pub async fn of_account(&self, issuer: &str, subject: &str) -> Result<Option<Link>, DbError> {
        let db = self.0;
        let sql = select!("WHERE issuer = $1 AND subject = $2");
        let query = db.query(sql).bind(issuer.to_owned()).bind(subject.to_owned());
        db.fetch_optional(query).await?.as_ref().map(read).transpose()
    }

    /// Every link of `user_id`, oldest first.
    pub async fn of_user(&self, user_id: i64) -> Result<Vec<Link>, DbError> {
        let db = self.0;
        let rows = db
            .fetch_all(db.query(select!("WHERE user_id = $1 ORDER BY id")).bind(user_id))
            .await?;
        rows.iter().map(read).collect()
    }

    /// Links `issuer` + `subject` of `provider` to `user_id`.
    pub async fn add(
        &self,
        user_id: i64,
        provider: &str,
        issuer: &str,
        subject: &str,
    ) -> Result<i64, LinkError> {
        let db = self.0;
        let insert = "INSERT INTO gatehouse_oidc_links \
                      (user_id, provider, issuer, subject, created_at, last_used_at) \
                      VALUES ($1, $2, $3, $4, $5, $6)";
        let now = unix_now();
        let mut conn = db.connection().await?;
        let inserted = db
            .insert_id(&mut *conn, insert, |query| {
                query
                    .bind(user_id)
                    .bind(provider.to_owned())
                    .bind(issuer.to_owned())
                    .bind(subject.to_owned())
                    .bind(now)
                    .bind(now)
            })
            .await;
        match inserted {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(LinkError::Taken),
            other => Ok(other?),
        }
    }

    /// Notes that link `id` signed someone in now.
    pub async fn used(&self, id: i64) -> Result<(), DbError> {
        let db = self.0;
        let query = db
            .query("UPDATE gatehouse_oidc_links SET last_used_at = $1 WHERE id = $2")
            .bind(unix_now())
            .bind(id);
        db.execute(query).await?;
        Ok(())
    }

    /// Removes link `id`, whoever's it is, and answers it (the command
    /// line's unlink); `None` when there is none.
    pub async fn take(&self, id: i64) -> Result<Option<Link>, DbError> {
        let db = self.0;
        let found = db
            .fetch_optional(db.query(select!("WHERE id = $1")).bind(id))
            .await?
            .as_ref()
            .map(read)
            .transpose()?;
        let Some(link) = found else {
            return Ok(None);
        };
        Ok(self.remove(link.user_id, id).await?.then_some(link))
    }

    /// Removes link `id` of `user_id`; `false` when the user has none such.
    pub async fn remove(&self, user_id: i64, id: i64) -> Result<bool, DbError> {
        let db = self.0;
        let query = db.query(DELETE).bind(id).bind(user_id);
        Ok(db.execute(query).await? > 0)
    }

    /// Removes link `id` of `user_id` in `tx`; `false` when the user has
    /// none such.
    pub async fn remove_in(tx: &mut Tx, user_id: i64, id: i64) -> Result<bool, DbError> {
        let query = tx.query(DELETE).bind(id).bind(user_id);
        Ok(tx.execute(query).await? > 0)
    }
}

/// Removes link `$1` of user `$2`.
const DELETE: &str = "DELETE FROM gatehouse_oidc_links WHERE id = $1 AND user_id = $2";
