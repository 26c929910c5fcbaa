//! One embedded migration set per dialect, run on ignite and by `gatehouse migrate`.

use sqlx::migrate::{MigrateError, Migrator};

use super::{DbPool, Dialect};

static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("migrations/postgres");
static MYSQL: Migrator = sqlx::migrate!("migrations/mysql");

pub(super) async fn run(db: &DbPool) -> Result<(), MigrateError> {
    let migrator = match db.dialect() {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres => &POSTGRES,
        Dialect::MySql => &MYSQL,
    };
    migrator.run(db.pool()).await
}
