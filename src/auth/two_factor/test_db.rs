//! A migrated database of a test's own: a SQLite file in a fresh directory,
//! or, when `GATEHOUSE_TEST_DATABASE_URL` names a server, a fresh PostgreSQL
//! schema or MySQL/MariaDB database there (named `gh_test_…`, as the
//! integration tests' are, so a run's leftovers are found by the same name).

use std::path::PathBuf;

use crate::db::{Db, Dialect};
use crate::domain::SecretToken;

/// A test's database; [`TestDb::finish`] removes it.
pub struct TestDb {
    /// The migrated database.
    pub db: Db,
    /// Where it connects, for a second pool (another instance).
    pub url: String,
    place: Place,
}

enum Place {
    File(PathBuf),
    Server { base: String, drop: String },
}

impl TestDb {
    /// A fresh database with every migration applied.
    pub async fn new() -> Self {
        let token = SecretToken::generate();
        let unique = &token.expose()[..16];
        let server = std::env::var("GATEHOUSE_TEST_DATABASE_URL")
            .ok()
            .filter(|url| !url.is_empty());
        let (url, place) = match server {
            None => {
                let dir = std::env::temp_dir().join(format!("gatehouse-two-factor-{unique}"));
                std::fs::create_dir_all(&dir).expect("a directory");
                let url = format!("sqlite://{}?mode=rwc", dir.join("test.db").display());
                (url, Place::File(dir))
            }
            Some(base) => {
                let name = format!("gh_test_{unique}");
                let admin = Db::connect(&base).await.unwrap_or_else(|e| {
                    panic!("GATEHOUSE_TEST_DATABASE_URL={base} is unreachable: {e}")
                });
                let (create, drop, url) = match admin.dialect() {
                    Dialect::Postgres => {
                        let sep = if base.contains('?') { '&' } else { '?' };
                        (
                            format!("CREATE SCHEMA {name}"),
                            format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
                            format!("{base}{sep}options=-c%20search_path%3D{name}"),
                        )
                    }
                    Dialect::MySql => {
                        let mut url = url::Url::parse(&base).expect("a MySQL URL");
                        url.set_path(&name);
                        (
                            format!("CREATE DATABASE {name}"),
                            format!("DROP DATABASE IF EXISTS {name}"),
                            url.to_string(),
                        )
                    }
                    Dialect::Sqlite => panic!("GATEHOUSE_TEST_DATABASE_URL names a server"),
                };
                admin
                    .execute(sqlx::query(&admin.dialect().placeholders(&create)))
                    .await
                    .expect("create the test database");
                admin.pool().close().await;
                (url, Place::Server { base, drop })
            }
        };
        let db = Db::connect(&url).await.expect("open the test database");
        db.migrate().await.expect("migrate the test database");
        Self { db, url, place }
    }

    /// A user to hang rows on; answers its id.
    pub async fn user(&self, email: &str) -> i64 {
        self.db
            .insert_id(
                self.db.pool(),
                "INSERT INTO users (name, email, password) VALUES ($1, $2, $3)",
                |q| q.bind("Test").bind(email.to_owned()).bind("x"),
            )
            .await
            .expect("insert a user")
    }

    /// Rows of `table` that belong to `user_id`.
    pub async fn rows(&self, table: &str, user_id: i64) -> i64 {
        let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE user_id = $1");
        let row = self
            .db
            .fetch_optional(sqlx::query(&self.db.dialect().placeholders(&sql)).bind(user_id))
            .await
            .expect("count rows")
            .expect("a count");
        sqlx::Row::try_get(&row, "n").expect("a number")
    }

    /// Closes the pool and removes the database.
    pub async fn finish(self) {
        self.db.pool().close().await;
        match self.place {
            Place::File(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Place::Server { base, drop } => {
                let admin = Db::connect(&base).await.expect("reopen the server");
                admin
                    .execute(sqlx::query(&admin.dialect().placeholders(&drop)))
                    .await
                    .expect("drop the test database");
                admin.pool().close().await;
            }
        }
    }
}
