//! Pages of any size stream (DESIGN.md, "OData reads at any size"): a page
//! is written to the client as its rows are read, in order and whole; a
//! client that stops reading and goes away ends its statement on the
//! database, which the engine's own activity view shows.

use std::time::Duration;

use gatehouse::db::{Db, Dialect};
use rocket::figment::providers::{Format, Toml};
use rocket::http::{Header, Status};
use rocket::tokio::io::AsyncReadExt;
use serde_json::Value;
use sqlx::Row;

use crate::helpers::{spawn_host_at, TestApp, TestDb};
use crate::odata_limits::generate;

/// Rows of the table read whole.
const ROWS: i64 = 60_000;

/// Characters of each row's label: a whole page is about 20 MB of JSON,
/// far more than the sockets between the engine and the service hold.
const LABEL: usize = 300;

/// A database holding `wide` (`id`, `label`) with [`ROWS`] rows.
async fn wide_database() -> TestDb {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("test database");
    let fill = match db.dialect() {
        Dialect::Postgres => format!(
            "INSERT INTO wide SELECT n, repeat('x', {LABEL}) FROM generate_series(1, {ROWS}) AS n"
        ),
        Dialect::MySql => format!(
            "INSERT INTO wide WITH RECURSIVE c(n) AS \
             (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {ROWS}) \
             SELECT n, REPEAT('x', {LABEL}) FROM c"
        ),
        Dialect::Sqlite => format!(
            "INSERT INTO wide WITH RECURSIVE c(n) AS \
             (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {ROWS}) \
             SELECT n, printf('%.{LABEL}c', 'x') FROM c"
        ),
        _ => unreachable!("an engine the suite does not know"),
    };
    db.execute(db.query("CREATE TABLE wide (id BIGINT PRIMARY KEY, label VARCHAR(400) NOT NULL)"))
        .await
        .expect("create wide");
    generate(&db, &fill).await;
    db.close().await;
    database
}

async fn spawn_wide() -> TestApp {
    let database = wide_database().await;
    spawn_host_at(database, |figment| {
        let sets = Toml::string("[odata.sets.Wide]\ntable = \"wide\"\npublic = true\n");
        gatehouse_host::rocket(
            figment
                .merge(sets)
                .merge(("odata.pagination.max", ROWS + 10))
                // The client below stops reading for a while on purpose.
                .merge(("odata.statement_timeout_ms", 60_000)),
        )
    })
    .await
}

fn whole_table() -> Header<'static> {
    Header::new("Prefer", format!("odata.maxpagesize={}", ROWS + 10))
}

#[rocket::async_test]
async fn a_page_of_the_whole_table_streams_every_row_in_order() {
    let app = spawn_wide().await;
    let response = app
        .client
        .get("/odata/Wide?$select=id&$count=true")
        .header(whole_table())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    assert_eq!(
        response.headers().get_one("Content-Length"),
        None,
        "a streamed body has no length up front"
    );
    let body: Value = serde_json::from_str(&response.into_string().await.expect("a body"))
        .expect("the streamed body is one JSON document");
    assert_eq!(body["@odata.count"], ROWS);
    assert_eq!(body.get("@odata.nextLink"), None);
    let ids: Vec<i64> = body["value"]
        .as_array()
        .expect("value")
        .iter()
        .map(|e| e["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(ids, (1..=ROWS).collect::<Vec<_>>());
}

/// The connection on which the engine runs a statement reading `wide` now,
/// if it runs one; `None` on SQLite, which has no view of its statements.
async fn reading(db: &Db) -> Option<Option<i64>> {
    let sql = match db.dialect() {
        Dialect::Postgres => {
            "SELECT CAST(pid AS BIGINT) FROM pg_stat_activity WHERE state = 'active' \
             AND datname = current_database() AND pid <> pg_backend_pid() \
             AND query LIKE '%\"wide\"%'"
        }
        Dialect::MySql => {
            "SELECT CAST(ID AS SIGNED) FROM information_schema.PROCESSLIST \
             WHERE COMMAND <> 'Sleep' AND DB = DATABASE() AND ID <> CONNECTION_ID() \
             AND INFO LIKE '%`wide`%'"
        }
        Dialect::Sqlite => return None,
        _ => unreachable!("an engine the suite does not know"),
    };
    let found = db
        .fetch_optional(sqlx::query(sql))
        .await
        .expect("the activity view");
    Some(found.map(|row| row.try_get::<i64, _>(0).expect("a connection id")))
}

/// Whether the engine still has connection `id`.
async fn connected(db: &Db, id: i64) -> bool {
    let sql = match db.dialect() {
        Dialect::Postgres => "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
        _ => "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = ?",
    };
    let n: i64 = db
        .fetch_optional(sqlx::query(sql).bind(id))
        .await
        .expect("the activity view")
        .expect("a count")
        .try_get(0)
        .expect("a count");
    n > 0
}

/// Polls `check` every 100 ms for up to ten seconds until it holds;
/// answers whether it did.
async fn within_ten_seconds<F: std::future::Future<Output = bool>>(
    mut check: impl FnMut() -> F,
) -> bool {
    for _ in 0..100 {
        if check().await {
            return true;
        }
        rocket::tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[rocket::async_test]
async fn a_client_that_goes_away_ends_its_statement() {
    let app = spawn_wide().await;
    let mut response = app
        .client
        .get("/odata/Wide")
        .header(whole_table())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let mut start = vec![0u8; 256 * 1024];
    response
        .read_exact(&mut start)
        .await
        .expect("the first pieces of the page");
    assert!(start.starts_with(b"{\"@odata.context\":"));
    let dialect = app.db.dialect();
    // The client reads no further: the engine waits to send the rest.
    let mut connection = reading(&app.db).await;
    for _ in 0..100 {
        if connection != Some(None) {
            break;
        }
        rocket::tokio::time::sleep(Duration::from_millis(100)).await;
        connection = reading(&app.db).await;
    }
    let connection = match connection {
        Some(found) => {
            let id = found.unwrap_or_else(|| {
                panic!("{dialect:?}: the page's statement runs while its client waits")
            });
            Some(id)
        }
        None => None,
    };
    drop(response);
    if let Some(id) = connection {
        // Its connection ends, and the statement with it: a statement let
        // run would leave the connection open, back in the pool.
        let ended = within_ten_seconds(|| async { !connected(&app.db, id).await }).await;
        assert!(
            ended,
            "{dialect:?}: connection {id} still there after its client left"
        );
    }
    // Nothing of the abandoned read is left in the way.
    let next = app.get_json("/odata/Wide(7)").await;
    assert_eq!(next.status(), Status::Ok);
}

#[rocket::async_test]
async fn a_batch_part_streams_its_page_whole_in_either_format() {
    let app = spawn_wide().await;
    let prefer = format!("odata.maxpagesize={}", ROWS + 10);
    let json = serde_json::json!({"requests": [
        {"id": "1", "method": "GET", "url": "Wide?$select=id", "headers": {"Prefer": prefer}},
        {"id": "2", "method": "GET", "url": "Wide(7)"},
    ]});
    let response = app
        .client
        .post("/odata/$batch")
        .header(rocket::http::ContentType::JSON)
        .body(json.to_string())
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let body: Value = serde_json::from_str(&response.into_string().await.expect("a body"))
        .expect("one JSON document");
    let page = &body["responses"][0];
    assert_eq!(page["status"], 200);
    let ids: Vec<i64> = page["body"]["value"]
        .as_array()
        .expect("the page")
        .iter()
        .map(|e| e["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(ids, (1..=ROWS).collect::<Vec<_>>());
    assert_eq!(body["responses"][1]["body"]["id"], 7, "the part after it");

    let multipart = format!(
        "--b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         GET Wide?$select=id HTTP/1.1\r\nPrefer: {prefer}\r\n\r\n\r\n--b--\r\n"
    );
    let response = app
        .client
        .post("/odata/$batch")
        .header(
            rocket::http::ContentType::parse_flexible("multipart/mixed; boundary=b")
                .expect("a content type"),
        )
        .body(multipart)
        .dispatch()
        .await;
    assert_eq!(response.status(), Status::Ok);
    let text = response.into_string().await.expect("a body");
    let (head, rest) = text
        .split_once("\r\n\r\nHTTP/1.1 200 OK\r\n")
        .expect("the part");
    assert!(head.contains("application/http"), "{head}");
    let (headers, body) = rest.split_once("\r\n\r\n").expect("the part's headers");
    assert!(
        !headers.to_ascii_lowercase().contains("content-length"),
        "a streamed part is delimited by its boundary: {headers}"
    );
    let end = body
        .rfind("\r\n--batchresponse_")
        .expect("the closing boundary");
    let page: Value = serde_json::from_str(&body[..end]).expect("the part's body is whole");
    assert_eq!(page["value"].as_array().map(Vec::len), Some(ROWS as usize));
}
