//! What each engine is asked for a page, and how it answers it: a
//! key-ordered page by the primary-key index, and a filtered page ordered by
//! a filtered column by the index on both, read in order, with no sort of the
//! matches. (A null ordering clause on the key once made PostgreSQL sort
//! every row; a binary collation on the compared text once kept MariaDB
//! from its index.)

use gatehouse::db::{Db, Dialect};
use gatehouse::odata::{page_query, parse_query, EdmType, EntitySet, Model, Page, Property};
use sqlx::Row;

use crate::helpers::TestDb;

const ROWS: i64 = 20_000;

/// A database with `plan_items` (key, a NOT NULL name, a nullable note, a
/// nullable category and price under one index, text in the engine's
/// default collation).
async fn items() -> (TestDb, Db) {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("test database");
    db.execute(db.query(
        "CREATE TABLE plan_items (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, \
         note VARCHAR(64), category VARCHAR(20), price DECIMAL(10,2))",
    ))
    .await
    .expect("create");
    db.execute(db.query("CREATE INDEX plan_items_category_price ON plan_items (category, price)"))
        .await
        .expect("index");
    let values: Vec<String> = (1..=ROWS)
        .map(|n| {
            let price = if n % 7 == 0 {
                "NULL".into()
            } else {
                format!("{}.5", n % 100)
            };
            format!("({n}, 'item {n}', NULL, 'cat{}', {price})", n % 10)
        })
        .collect();
    for chunk in values.chunks(2000) {
        let insert = format!(
            "INSERT INTO plan_items (id, name, note, category, price) VALUES {}",
            chunk.join(", ")
        );
        db.execute(sqlx::query(&db.dialect().placeholders(&insert)))
            .await
            .expect("fill");
    }
    let analyze = match db.dialect() {
        // VACUUM marks the pages all-visible, as autovacuum does for a
        // table that stopped changing: index-only scans need no heap then.
        Dialect::Postgres => "VACUUM ANALYZE plan_items",
        Dialect::MySql => "ANALYZE TABLE plan_items",
        Dialect::Sqlite => "ANALYZE",
        _ => unreachable!("an engine the suite does not know"),
    };
    db.fetch_all(db.query(analyze)).await.expect("analyze");
    (database, db)
}

fn model() -> Model {
    Model::new().set(
        EntitySet::new("Items", "plan_items", "id")
            .property(Property::new("id", EdmType::Int64).not_null())
            .property(Property::new("name", EdmType::String).not_null())
            .property(Property::new("note", EdmType::String))
            .property(Property::new("category", EdmType::String))
            .property(Property::new("price", EdmType::Decimal)),
    )
}

/// The page statement for `query`, with its binds written in as literals.
fn page_sql(dialect: Dialect, query: &str) -> String {
    page_sql_at(dialect, query, 0)
}

/// The same for the page `offset` rows into the result.
fn page_sql_at(dialect: Dialect, query: &str, offset: u64) -> String {
    let model = model();
    let set = model.find("Items").expect("the set");
    let mut query = parse_query(query).unwrap();
    query.skip = Some(offset);
    let page = Page::from_prefer(None, 50, None).of(&query);
    let sql = page_query(&model, set, &query, page, dialect).expect("a page statement");
    let mut text = sql.text;
    let values: Vec<String> = sql
        .binds
        .iter()
        .map(|bind| match bind {
            gatehouse::odata::Bind::Int(n) => n.to_string(),
            gatehouse::odata::Bind::Text(t) => format!("'{}'", t.replace('\'', "''")),
            other => panic!("unexpected bind {other:?}"),
        })
        .collect();
    for (i, value) in values.iter().enumerate().rev() {
        text = text.replace(&format!("${}", i + 1), value);
    }
    for value in &values {
        text = text.replacen('?', value, 1);
    }
    text
}

/// The engine's plan for `sql`, as one lowercase text.
async fn plan(db: &Db, sql: &str) -> String {
    let explain = match db.dialect() {
        Dialect::Sqlite => format!("EXPLAIN QUERY PLAN {sql}"),
        Dialect::Postgres | Dialect::MySql => format!("EXPLAIN {sql}"),
        _ => unreachable!("an engine the suite does not know"),
    };
    let rows = db.fetch_all(sqlx::query(&explain)).await.expect("explain");
    let mut text = String::new();
    for row in rows {
        for i in 0..row.len() {
            let cell: Option<String> = row
                .try_get::<Option<String>, _>(i)
                .or_else(|_| {
                    row.try_get::<Option<i64>, _>(i)
                        .map(|n| n.map(|n| n.to_string()))
                })
                .or_else(|_| {
                    row.try_get::<Option<Vec<u8>>, _>(i)
                        .map(|b| b.map(|b| String::from_utf8_lossy(&b).into_owned()))
                })
                .unwrap_or_default();
            text.push_str(&cell.unwrap_or_default());
            text.push(' ');
        }
        text.push('\n');
    }
    text.to_lowercase()
}

#[rocket::async_test]
async fn a_key_ordered_page_reads_the_key_index_without_sorting() {
    let (_database, db) = items().await;
    for query in ["", "$filter=name ne 'x'", "$orderby=id desc"] {
        let sql = page_sql(db.dialect(), query);
        let plan = plan(&db, &sql).await;
        match db.dialect() {
            Dialect::Postgres => {
                assert!(plan.contains("index scan"), "{query}: {sql}\n{plan}");
                assert!(!plan.contains("sort"), "{query}: {sql}\n{plan}");
            }
            Dialect::MySql => {
                assert!(plan.contains("primary"), "{query}: {sql}\n{plan}");
                assert!(!plan.contains("filesort"), "{query}: {sql}\n{plan}");
            }
            Dialect::Sqlite => {
                assert!(!plan.contains("temp b-tree"), "{query}: {sql}\n{plan}");
            }
            _ => unreachable!("an engine the suite does not know"),
        }
    }
}

#[rocket::async_test]
async fn ordering_by_a_nullable_column_keeps_nulls_first() {
    let (_database, db) = items().await;
    let sql = page_sql(db.dialect(), "$orderby=note&$top=3");
    assert!(
        db.dialect() != Dialect::Postgres || sql.contains("NULLS FIRST"),
        "{sql}"
    );
    assert!(
        !sql.contains(r#""id" ASC NULLS"#) && !sql.contains("`id` ASC NULLS"),
        "{sql}"
    );
}

#[rocket::async_test]
async fn a_filtered_page_ordered_by_a_filtered_column_reads_their_index() {
    // `category eq` narrows by the column's own collation (MariaDB's ignores
    // case) and `price gt` keeps nulls out, so the (category, price) index
    // yields the matches in order: no sort, whatever the engine.
    let (_database, db) = items().await;
    let query = "$filter=category eq 'cat3' and price gt 50&$orderby=price desc";
    let sql = page_sql(db.dialect(), query);
    let plan = plan(&db, &sql).await;
    match db.dialect() {
        Dialect::Postgres => {
            // Its index holds no key: rows of equal price are put in key
            // order as they come (an incremental sort), never all at once.
            assert!(plan.contains("plan_items_category_price"), "{sql}\n{plan}");
            let full_sort = plan
                .lines()
                .any(|l| l.trim_start_matches([' ', '-', '>']).starts_with("sort  ("));
            assert!(!full_sort, "{sql}\n{plan}");
        }
        Dialect::MySql => {
            assert!(plan.contains("plan_items_category_price"), "{sql}\n{plan}");
            assert!(!plan.contains("filesort"), "{sql}\n{plan}");
        }
        Dialect::Sqlite => {
            // As on PostgreSQL: this `id` is no rowid, so the index does not
            // end in it, and only rows of equal price are sorted.
            assert!(plan.contains("plan_items_category_price"), "{sql}\n{plan}");
            assert!(!plan.contains("temp b-tree for order by"), "{sql}\n{plan}");
        }
        _ => unreachable!("an engine the suite does not know"),
    }
    // The page holds the category's rows, and only with the exact case
    // (counted: sqlx's `Any` driver, which reads them here, has no decimals).
    let db = &db;
    let count = |sql: String| async move {
        db.fetch_optional(sqlx::query(&format!(
            "SELECT COUNT(*) FROM ({sql}) AS page"
        )))
        .await
        .expect("the page")
        .expect("a row")
        .try_get::<i64, _>(0)
        .expect("a count")
    };
    assert_eq!(
        count(sql.clone()).await,
        51,
        "a page of 50 and the probe row"
    );
    let upper = count(sql.replace("'cat3'", "'CAT3'")).await;
    assert_eq!(upper, 0, "'CAT3' matched {upper} rows");
}

#[rocket::async_test]
async fn a_page_far_into_the_table_skips_rows_by_their_keys_alone() {
    // PostgreSQL and MySQL compute every selected column of each row an
    // OFFSET skips: there the skipped rows come from the key alone, and only
    // the page's own rows are read whole. Every engine answers the same rows.
    let (_database, db) = items().await;
    // Without the decimal, which sqlx's `Any` driver, reading the rows
    // here, cannot decode.
    let sql = page_sql_at(db.dialect(), "$select=id,name,note", 15_000);
    let plan = plan(&db, &sql).await;
    match db.dialect() {
        Dialect::Postgres => assert!(plan.contains("index only scan"), "{sql}\n{plan}"),
        // The derived table of keys is read from the key index alone.
        Dialect::MySql => assert!(
            plan.lines().any(|l| l.contains("derived")
                && l.contains("primary")
                && l.contains("using index")),
            "{sql}\n{plan}"
        ),
        Dialect::Sqlite => {}
        _ => unreachable!("an engine the suite does not know"),
    }
    let rows = db.fetch_all(sqlx::query(&sql)).await.expect("the page");
    let ids: Vec<i64> = rows
        .iter()
        .map(|r| r.try_get::<i64, _>(0).expect("id"))
        .collect();
    let expected: Vec<i64> = (15_001..=15_051).collect();
    assert_eq!(ids, expected, "{sql}");
}
