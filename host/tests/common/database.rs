//! One test's own database: a fresh SQLite file in a temporary directory, or —
//! when `GATEHOUSE_TEST_DATABASE_URL` names a server — a fresh PostgreSQL
//! schema or MySQL/MariaDB database there, dropped again when the test ends.
//!
//! Shared by every integration test binary, so the suite runs on each engine
//! by changing that one URL.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;
use std::time::Duration;

use gatehouse::db::{Db, Dialect};
use gatehouse::domain::SecretToken;
use tempfile::TempDir;

/// Where a test's database lives on a server, for dropping it afterwards.
struct OnServer {
    /// The server URL the test run was given.
    base: String,
    /// The schema (PostgreSQL) or database (MySQL) made for this test.
    name: String,
    dialect: Dialect,
}

/// One test's own database, and a scratch directory that also serves as the
/// working directory of every process started on it.
pub struct TestDb {
    /// Connection URL handed to the host (`databases.main.url`).
    pub url: String,
    server: Option<OnServer>,
    dir: TempDir,
}

impl TestDb {
    /// A fresh, empty database (no migrations applied).
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some(base) = server_url() else {
            let url = format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("gatehouse.db").display()
            );
            return Self {
                url,
                server: None,
                dir,
            };
        };
        let name = format!("gh_test_{}", &SecretToken::generate().expose()[..16]);
        let admin = Db::connect(&base)
            .await
            .unwrap_or_else(|e| panic!("GATEHOUSE_TEST_DATABASE_URL={base} is unreachable: {e}"));
        let dialect = admin.dialect();
        let (create, url) = match dialect {
            Dialect::Postgres => {
                let sep = if base.contains('?') { '&' } else { '?' };
                let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
                (format!("CREATE SCHEMA {name}"), url)
            }
            Dialect::MySql => {
                let mut url = url::Url::parse(&base).expect("a MySQL URL");
                url.set_path(&name);
                (format!("CREATE DATABASE {name}"), url.to_string())
            }
            _ => panic!("GATEHOUSE_TEST_DATABASE_URL names a server, not SQLite"),
        };
        admin
            .execute(sqlx::query(&admin.dialect().placeholders(&create)))
            .await
            .expect("create the test database");
        admin.close().await;
        Self {
            url,
            server: Some(OnServer {
                base,
                name,
                dialect,
            }),
            dir,
        }
    }

    /// The scratch directory (working directory of the processes).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A connection of the test's own, for assertions.
    pub async fn connect(&self) -> Db {
        Db::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("cannot open the test database {}: {e}", self.url))
    }
}

/// The server named by `GATEHOUSE_TEST_DATABASE_URL`, if any.
pub fn server_url() -> Option<String> {
    std::env::var("GATEHOUSE_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some(OnServer {
            base,
            name,
            dialect,
        }) = self.server.take()
        else {
            return;
        };
        let drop = match dialect {
            Dialect::Postgres => format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
            _ => format!("DROP DATABASE IF EXISTS {name}"),
        };
        // Drop may run inside a test's runtime: clean up on a thread of its own.
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("cleanup runtime");
            runtime.block_on(async {
                let dropped = async {
                    let admin = Db::connect(&base).await?;
                    admin
                        .execute(sqlx::query(&admin.dialect().placeholders(&drop)))
                        .await?;
                    admin.close().await;
                    Ok::<_, sqlx::Error>(())
                };
                match tokio::time::timeout(Duration::from_secs(20), dropped).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => eprintln!("warning: cannot drop test database {name}: {e}"),
                    Err(_) => eprintln!("warning: dropping test database {name} timed out"),
                }
            });
        });
        let _ = cleanup.join();
    }
}
