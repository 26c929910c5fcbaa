//! OData's cost limits: a statement past `odata.statement_timeout_ms` is
//! cancelled on every engine and answers 503 `query_timeout`, and the
//! server goes on answering.

use gatehouse::db::{Db, Dialect};
use rocket::figment::providers::{Format, Toml};
use rocket::http::Status;
use serde_json::Value;

use crate::helpers::{json, spawn_host_at, TestApp, TestDb};

/// Rows in the table the slow query scans.
const ROWS: i64 = 200_000;

/// A database holding `numbers` (`id`, `label`) with [`ROWS`] rows.
async fn numbers_database() -> TestDb {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("test database");
    let fill = match db.dialect() {
        Dialect::Postgres => {
            format!("INSERT INTO numbers SELECT n, 'n' || n FROM generate_series(1, {ROWS}) AS n")
        }
        Dialect::Sqlite | Dialect::MySql => format!(
            "INSERT INTO numbers WITH RECURSIVE c(n) AS \
             (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {ROWS}) \
             SELECT n, CONCAT('n', n) FROM c"
        ),
        _ => unreachable!("an engine the suite does not know"),
    };
    let fill = if db.dialect() == Dialect::Sqlite {
        fill.replace("CONCAT('n', n)", "'n' || n")
    } else {
        fill
    };
    db.execute(
        db.query("CREATE TABLE numbers (id BIGINT PRIMARY KEY, label VARCHAR(32) NOT NULL)"),
    )
    .await
    .expect("create numbers");
    generate(&db, &fill).await;
    db.close().await;
    database
}

/// Runs `fill`, a statement generating rows by a recursive query, with
/// MySQL's and MariaDB's per-session recursion caps raised for it (on the
/// one connection of a transaction).
pub async fn generate(db: &Db, fill: &str) {
    let mut conn = db.begin().await.expect("a transaction");
    if db.dialect() == Dialect::MySql {
        // MySQL and MariaDB cap recursion per session, each with its own
        // variable (the other one's is refused and ignored).
        for cap in ["cte_max_recursion_depth", "max_recursive_iterations"] {
            let _ = sqlx::query(&format!("SET SESSION {cap} = 1000000"))
                .execute(&mut *conn)
                .await;
        }
    }
    sqlx::query(&db.dialect().placeholders(fill))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{fill}: {e}"));
    conn.commit().await.expect("commit the rows");
}

async fn spawn_numbers(timeout_ms: u32) -> TestApp {
    let database = numbers_database().await;
    spawn_host_at(database, move |figment| {
        let sets = Toml::string("[odata.sets.Numbers]\ntable = \"numbers\"\npublic = true\n");
        gatehouse_host::rocket(
            figment
                .merge(sets)
                .merge(("odata.statement_timeout_ms", timeout_ms)),
        )
    })
    .await
}

/// A query no index serves: every row's label is taken apart, eight
/// copies at a time (about 40 ms on PostgreSQL on a fast machine, where
/// four copies took 22–26 ms: too close to a timeout of 20).
const SLOW: &str = "/odata/Numbers/$count?$filter=\
    length(concat(concat(concat(label,label),concat(label,label)),\
    concat(concat(label,label),concat(label,label))))%20eq%207%20and%20\
    indexof(concat(concat(concat(label,label),concat(label,label)),'zz'),'zzz')%20ge%200";

/// A timeout far under [`SLOW`]'s time on every engine, and far over a
/// lookup by key.
const SHORT_TIMEOUT_MS: u32 = 5;

#[rocket::async_test]
async fn a_statement_past_the_timeout_answers_query_timeout() {
    let app = spawn_numbers(SHORT_TIMEOUT_MS).await;
    let response = app.get_json(SLOW).await;
    assert_eq!(response.status(), Status::ServiceUnavailable);
    let body: Value = json(response).await;
    assert_eq!(body["error"]["code"], "query_timeout");
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    for leak in [
        "select",
        "sqlite",
        "postgres",
        "mysql",
        "interrupt",
        "cancel",
    ] {
        assert!(!message.contains(leak), "no engine detail: {message}");
    }
    // The same server answers a cheap read at once.
    let quick = app.get_json("/odata/Numbers(7)").await;
    assert_eq!(quick.status(), Status::Ok);
    assert_eq!(json(quick).await["label"], "n7");
}

#[rocket::async_test]
async fn a_statement_within_the_timeout_answers() {
    let app = spawn_numbers(60_000).await;
    let response = app.get_json(SLOW).await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(response.into_string().await.as_deref(), Some("0"));
}
