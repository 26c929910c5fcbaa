//! One embedded migration set per dialect, run on ignite and by `gatehouse migrate`,
//! and what a database has applied of it (the readiness probe asks).

use sqlx::migrate::{MigrateError, Migrator};

use super::{DbPool, Dialect};

static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("migrations/postgres");
static MYSQL: Migrator = sqlx::migrate!("migrations/mysql");

pub(super) async fn run(db: &DbPool) -> Result<(), MigrateError> {
    migrator(db.dialect()).run(db.pool()).await
}

/// The migrations a database has applied, against those this build
/// carries for its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrations {
    /// The newest version applied successfully (0: none).
    pub applied: i64,
    /// The newest version this build carries.
    pub carried: i64,
}

impl Migrations {
    /// Asks `db` which migrations it has applied (one statement).
    pub async fn of(db: &super::Db) -> Result<Migrations, sqlx::Error> {
        let migrator = migrator(db.dialect());
        let carried = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        let row = db
            .fetch_optional(db.query(
                "SELECT COALESCE(MAX(version), 0) AS applied FROM _sqlx_migrations WHERE success",
            ))
            .await?;
        let applied = match row {
            Some(row) => sqlx::Row::try_get::<i64, _>(&row, "applied")?,
            None => 0,
        };
        Ok(Migrations { applied, carried })
    }

    /// Whether the database's migrations are this build's; else why not.
    pub fn current(&self) -> Result<(), String> {
        match self.applied.cmp(&self.carried) {
            std::cmp::Ordering::Equal => Ok(()),
            std::cmp::Ordering::Less => Err(format!(
                "migrations are behind: {} applied, {} expected",
                self.applied, self.carried
            )),
            std::cmp::Ordering::Greater => Err(format!(
                "the database has a newer migration ({}) than this build ({})",
                self.applied, self.carried
            )),
        }
    }
}

fn migrator(dialect: Dialect) -> &'static Migrator {
    match dialect {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres => &POSTGRES,
        Dialect::MySql => &MYSQL,
    }
}
