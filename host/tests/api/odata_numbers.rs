//! `IEEE754Compatible=true`, as UI5 asks in `Accept` (or `$format`): Int64
//! and Decimal values are JSON strings, so that a JavaScript client loses
//! no digit past 2^53, and the `Content-Type` says so; other numbers, and
//! every answer that does not ask, stay JSON numbers.

use serde_json::Value;

use crate::odata_fixture::{spawn_fixture, thing, Answer};

const IEEE754: &str = "application/json;IEEE754Compatible=true";

/// The decimal as the service writes it: two decimals.
fn price_text(price: f64) -> String {
    format!("{price:.2}")
}

/// Whether `$metadata` declares `Things.qty` an Int64 (SQLite's INTEGER is
/// 64-bit; PostgreSQL's and MariaDB's are 32).
async fn qty_is_int64(app: &crate::helpers::TestApp) -> bool {
    let metadata = app.odata("$metadata").await.body;
    let at = metadata.find("Name=\"qty\"").expect("qty in $metadata");
    metadata[at..]
        .split('>')
        .next()
        .unwrap_or_default()
        .contains("Edm.Int64")
}

fn check_row(row: &Value, quoted: bool, qty_int64: bool) {
    let id = row["id"]
        .as_i64()
        .or_else(|| row["id"].as_str().and_then(|s| s.parse().ok()));
    let t = thing(id.expect("an id"));
    if quoted {
        assert_eq!(row["id"], Value::String(t.id.to_string()), "{row}");
        match t.price {
            Some(price) => {
                let written = row["price"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a string: {row}"));
                let parsed: f64 = written.parse().expect("a decimal in a string");
                assert!(
                    (parsed - price).abs() < 1e-9,
                    "{written} for {}",
                    price_text(price)
                );
            }
            None => assert!(row["price"].is_null(), "{row}"),
        }
    } else {
        assert_eq!(row["id"], Value::from(t.id), "{row}");
        match t.price {
            Some(price) => assert!(
                row["price"]
                    .as_f64()
                    .is_some_and(|p| (p - price).abs() < 1e-9),
                "{row}"
            ),
            None => assert!(row["price"].is_null(), "{row}"),
        }
    }
    // An Int32 is exact in a double: a number either way.
    match t.qty {
        Some(qty) if quoted && qty_int64 => assert_eq!(row["qty"], Value::String(qty.to_string())),
        Some(qty) => assert_eq!(row["qty"], Value::from(qty), "{row}"),
        None => assert!(row["qty"].is_null(), "{row}"),
    }
}

fn content_type(answer: &Answer) -> String {
    answer.header("Content-Type").unwrap_or_default().to_owned()
}

#[rocket::async_test]
async fn asked_in_accept_int64_and_decimal_are_strings_and_the_content_type_says_so() {
    let app = spawn_fixture().await;
    let int64 = qty_is_int64(&app).await;
    let answer = app
        .odata_with("Things?$select=id,price,qty", &[("Accept", IEEE754)])
        .await;
    answer.ok();
    assert!(
        content_type(&answer).contains("IEEE754Compatible=true"),
        "{}",
        content_type(&answer)
    );
    let rows = answer.value();
    assert!(!rows.is_empty());
    for row in &rows {
        check_row(row, true, int64);
    }
    assert!(
        rows.iter().any(|r| r["price"].is_string()),
        "some price is set in the fixture"
    );
    // One entity too.
    let one = app
        .odata_with("Things(1)?$select=id,price,qty", &[("Accept", IEEE754)])
        .await;
    one.ok();
    check_row(&one.json(), true, int64);
    assert!(content_type(&one).contains("IEEE754Compatible=true"));
}

#[rocket::async_test]
async fn asked_in_format_the_same_and_next_links_keep_asking() {
    let app = spawn_fixture().await;
    let int64 = qty_is_int64(&app).await;
    let answer = app
        .odata_with(
            "Things?$select=id,price,qty&$format=application/json;IEEE754Compatible=true",
            &[("Prefer", "odata.maxpagesize=2")],
        )
        .await;
    answer.ok();
    assert!(content_type(&answer).contains("IEEE754Compatible=true"));
    for row in &answer.value() {
        check_row(row, true, int64);
    }
    let next = answer.next_link().expect("a next page");
    let page = app
        .follow(&next, &[("Prefer", "odata.maxpagesize=2")])
        .await;
    page.ok();
    for row in &page.value() {
        check_row(row, true, int64);
    }
}

#[rocket::async_test]
async fn without_asking_numbers_stay_numbers() {
    let app = spawn_fixture().await;
    let int64 = qty_is_int64(&app).await;
    for accept in [
        "application/json",
        "application/json;IEEE754Compatible=false",
    ] {
        let answer = app
            .odata_with("Things?$select=id,price,qty", &[("Accept", accept)])
            .await;
        answer.ok();
        assert!(!content_type(&answer).contains("IEEE754Compatible"));
        for row in &answer.value() {
            check_row(row, false, int64);
        }
    }
}
