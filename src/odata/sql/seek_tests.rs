//! The statements a page read by position runs, on each engine.

use crate::db::Dialect;
use crate::odata::model::fixture::model;
use crate::odata::sql::fetch::{seek_statements, Fetch};
use crate::odata::{check_query, parse_query, Bind, Literal, Page, Position, Sql};

fn statements(query: &str, position: Option<&Position>, dialect: Dialect) -> Vec<Sql> {
    let m = model();
    let users = m.find("Users").expect("fixture");
    let q = parse_query(query).expect("parses");
    let checked = check_query(&m, users, &q).expect("fits");
    let fetch = Fetch {
        restriction: None,
        per_value: false,
        internal: vec![],
        page: Page::from_prefer(Some("odata.maxpagesize=2"), 200, None).of(&q),
        scopes: None,
        count: false,
    };
    seek_statements(&checked, &fetch, position, dialect).expect("fits")
}

fn texts(sql: &[Sql]) -> Vec<&str> {
    sql.iter().map(|s| s.text.as_str()).collect()
}

#[test]
fn the_key_order_seeks_after_the_last_key() {
    let after = Position::After(vec![Literal::Int(40)]);
    let sql = statements("$select=name", Some(&after), Dialect::Postgres);
    assert_eq!(
        texts(&sql),
        [concat!(
            r#"SELECT "t0"."id" AS "id", "t0"."display_name" AS "name" "#,
            r#"FROM "users" AS "t0" WHERE "t0"."id" > $1 ORDER BY "t0"."id" ASC LIMIT 3 OFFSET 0"#
        )]
    );
    assert_eq!(sql[0].binds, [Bind::Int(40)]);
    let sql = statements("$select=name", Some(&Position::First), Dialect::Sqlite);
    assert!(
        sql[0]
            .text
            .ends_with(r#"ORDER BY "t0"."id" ASC LIMIT $1 OFFSET $2"#),
        "{}",
        sql[0].text
    );
    assert_eq!(sql[0].binds, [Bind::Int(3), Bind::Int(0)]);
}

#[test]
fn a_non_null_term_bounds_the_index_range_and_the_rest_decides_within_it() {
    let after = Position::After(vec![Literal::Int(2), Literal::Int(40)]);
    let sql = statements(
        "$orderby=rank desc&$select=rank",
        Some(&after),
        Dialect::MySql,
    );
    assert_eq!(sql.len(), 1);
    assert!(
        sql[0].text.contains(
            "WHERE `t0`.`rank` <= ? AND (`t0`.`rank` < ? OR `t0`.`id` < ?) \
             ORDER BY `t0`.`rank` DESC, `t0`.`id` DESC LIMIT ? OFFSET ?"
        ),
        "{}",
        sql[0].text
    );
    assert_eq!(
        sql[0].binds,
        [2, 2, 40, 3, 0].map(Bind::Int),
        "MySQL binds a value used twice twice"
    );
}

#[test]
fn a_nullable_first_term_is_read_as_its_values_then_its_nulls_when_descending() {
    let sql = statements(
        "$orderby=age desc&$select=age",
        Some(&Position::First),
        Dialect::Postgres,
    );
    let texts = texts(&sql);
    assert_eq!(texts.len(), 2);
    assert!(
        texts[0].contains(
            r#"WHERE "t0"."age" IS NOT NULL ORDER BY "t0"."age" DESC, "t0"."id" DESC LIMIT 3"#
        ),
        "{}",
        texts[0]
    );
    assert!(
        texts[1].contains(r#"WHERE "t0"."age" IS NULL ORDER BY "t0"."id" DESC LIMIT 3"#),
        "{}",
        texts[1]
    );
    assert!(
        !texts.iter().any(|t| t.contains("NULLS")),
        "no null ordering the index cannot serve"
    );
    // After a row with a value: the rest of the values, then every null.
    let after = Position::After(vec![Literal::Int(30), Literal::Int(8)]);
    let sql = statements(
        "$orderby=age desc&$select=age",
        Some(&after),
        Dialect::Postgres,
    );
    assert!(sql[0].text.contains(
        r#"WHERE "t0"."age" IS NOT NULL AND "t0"."age" <= $1 AND ("t0"."age" < $1 OR "t0"."id" < $2)"#
    ), "{}", sql[0].text);
    assert!(
        sql[1].text.contains(r#"WHERE "t0"."age" IS NULL ORDER BY"#),
        "{}",
        sql[1].text
    );
    assert_eq!(sql[1].binds, []);
    // After a null row: only the nulls past its key.
    let after = Position::After(vec![Literal::Null, Literal::Int(8)]);
    let sql = statements(
        "$orderby=age desc&$select=age",
        Some(&after),
        Dialect::Postgres,
    );
    assert_eq!(sql.len(), 1);
    assert!(
        sql[0]
            .text
            .contains(r#"WHERE "t0"."age" IS NULL AND "t0"."id" < $1 ORDER BY "t0"."id" DESC"#),
        "{}",
        sql[0].text
    );
}

#[test]
fn a_nullable_first_term_is_read_as_its_nulls_then_its_values_when_ascending() {
    let sql = statements(
        "$orderby=age&$select=age",
        Some(&Position::First),
        Dialect::Sqlite,
    );
    assert_eq!(sql.len(), 2);
    assert!(
        sql[0]
            .text
            .contains(r#""t0"."age" IS NULL ORDER BY "t0"."id" ASC"#),
        "{}",
        sql[0].text
    );
    assert!(
        sql[1]
            .text
            .contains(r#""t0"."age" IS NOT NULL ORDER BY "t0"."age" ASC, "t0"."id" ASC"#),
        "{}",
        sql[1].text
    );
    let after = Position::After(vec![Literal::Null, Literal::Int(8)]);
    let sql = statements("$orderby=age&$select=age", Some(&after), Dialect::Sqlite);
    assert_eq!(sql.len(), 2, "the nulls past the key, then every value");
    assert!(
        sql[0]
            .text
            .contains(r#""t0"."age" IS NULL AND "t0"."id" > $1 ORDER BY"#),
        "{}",
        sql[0].text
    );
    assert!(
        sql[1]
            .text
            .contains(r#"WHERE "t0"."age" IS NOT NULL ORDER BY"#),
        "{}",
        sql[1].text
    );
    let after = Position::After(vec![Literal::Int(30), Literal::Int(8)]);
    assert_eq!(
        statements("$orderby=age&$select=age", Some(&after), Dialect::Sqlite).len(),
        1
    );
}

#[test]
fn a_filter_that_rules_nulls_out_leaves_one_statement() {
    let sql = statements(
        "$filter=age gt 3&$orderby=age desc",
        Some(&Position::First),
        Dialect::Postgres,
    );
    assert_eq!(sql.len(), 1);
    assert!(
        sql[0]
            .text
            .contains(r#"ORDER BY "t0"."age" DESC, "t0"."id" DESC"#),
        "{}",
        sql[0].text
    );
}

#[test]
fn a_later_nullable_term_is_compared_null_aware() {
    let after = Position::After(vec![Literal::Int(2), Literal::Null, Literal::Int(8)]);
    let sql = statements("$orderby=rank,email desc", Some(&after), Dialect::Sqlite);
    assert_eq!(sql.len(), 1);
    // Descending, nothing follows a null but the nulls after its key.
    assert!(sql[0].text.contains(
        r#"WHERE "t0"."rank" >= $1 AND ("t0"."rank" > $1 OR (1 = 0 OR ("t0"."email" IS NULL AND "t0"."id" < $2)))"#
    ), "{}", sql[0].text);
    let after = Position::After(vec![
        Literal::Int(2),
        Literal::String("b".into()),
        Literal::Int(8),
    ]);
    let sql = statements("$orderby=rank,email desc", Some(&after), Dialect::Sqlite);
    assert!(sql[0].text.contains(
        r#"("t0"."email" < $2 OR "t0"."email" IS NULL) OR ("t0"."email" = $2 AND "t0"."id" < $3)"#
    ), "{}", sql[0].text);
}

#[test]
fn the_order_values_not_selected_are_read_too_past_an_offset_as_well() {
    let q = "$orderby=rank&$select=name&$skip=4";
    let sql = statements(q, None, Dialect::Postgres);
    assert_eq!(sql.len(), 1);
    // The key is selected already: only `rank` gets a column of its own.
    assert!(
        sql[0].text.starts_with(
            r#"SELECT "t0"."id" AS "id", "t0"."display_name" AS "name", "t0"."rank" AS "__s0" FROM"#
        ),
        "{}",
        sql[0].text
    );
    assert!(sql[0].text.contains("LIMIT 3 OFFSET 4"), "{}", sql[0].text);
}

#[test]
fn after_an_instant_sqlite_compares_and_reads_its_normalised_text() {
    let at = time::macros::datetime!(2024-03-01 09:30:00.25 UTC);
    let after = Position::After(vec![Literal::DateTimeOffset(at), Literal::Int(8)]);
    let sql = statements(
        "$orderby=created desc&$select=created",
        Some(&after),
        Dialect::Sqlite,
    );
    assert_eq!(sql.len(), 1);
    let created = r#"strftime('%Y-%m-%dT%H:%M:%f', "t0"."created")"#;
    let bound = "strftime('%Y-%m-%dT%H:%M:%f', $1)";
    assert!(
        sql[0].text.contains(&format!(
            "WHERE {created} <= {bound} AND ({created} < {bound} OR \"t0\".\"id\" < $2) \
             ORDER BY {created} DESC, \"t0\".\"id\" DESC"
        )),
        "{}",
        sql[0].text
    );
    // The selected column holds the stored spelling; the token takes the
    // value the order compares, from a column of its own.
    assert!(
        sql[0].text.starts_with(&format!(
            r#"SELECT "t0"."id" AS "id", +"t0"."created" AS "created", +{created} AS "__s0" FROM"#
        )),
        "{}",
        sql[0].text
    );
    assert_eq!(
        sql[0].binds[..2],
        [
            Bind::Text("2024-03-01 09:30:00.250000+00:00".into()),
            Bind::Int(8)
        ]
    );
}

#[test]
fn after_an_instant_the_servers_compare_to_the_microsecond() {
    let at = time::macros::datetime!(2024-03-01 10:30:00.000001 +01:00);
    let after = Position::After(vec![Literal::DateTimeOffset(at), Literal::Int(8)]);
    let pg = statements(
        "$orderby=created&$select=created",
        Some(&after),
        Dialect::Postgres,
    );
    assert!(
        pg[0]
            .text
            .starts_with(r#"SELECT "t0"."id" AS "id", "t0"."created" AS "created" FROM"#),
        "the selected column is the order's value: {}",
        pg[0].text
    );
    assert!(
        pg[0].text.contains(
            r#"WHERE "t0"."created" >= CAST($1 AS TIMESTAMPTZ) AND ("t0"."created" > CAST($1 AS TIMESTAMPTZ) OR "t0"."id" > $2)"#
        ),
        "{}",
        pg[0].text
    );
    assert_eq!(
        pg[0].binds[0],
        Bind::Text("2024-03-01 09:30:00.000001+00:00".into())
    );
    let my = statements(
        "$orderby=created&$select=created",
        Some(&after),
        Dialect::MySql,
    );
    assert!(
        my[0]
            .text
            .contains("WHERE `t0`.`created` >= CAST(? AS DATETIME(6))"),
        "{}",
        my[0].text
    );
    assert_eq!(
        my[0].binds[0],
        Bind::Text("2024-03-01 09:30:00.000001".into())
    );
}

#[test]
fn after_a_time_of_day_its_text_is_bound_as_read() {
    let after = Position::After(vec![
        Literal::String("08:30:00.500".into()),
        Literal::Int(8),
    ]);
    let sqlite = statements(
        "$orderby=wakes&$select=wakes",
        Some(&after),
        Dialect::Sqlite,
    );
    assert_eq!(sqlite.len(), 1, "after a value, no nulls follow ascending");
    assert!(
        sqlite[0].text.contains(
            r#"WHERE "t0"."wakes" IS NOT NULL AND "t0"."wakes" >= $1 AND ("t0"."wakes" > $1 OR "t0"."id" > $2)"#
        ),
        "{}",
        sqlite[0].text
    );
    assert_eq!(sqlite[0].binds[0], Bind::Text("08:30:00.500".into()));
    let pg = statements("$orderby=wakes desc", Some(&after), Dialect::Postgres);
    assert_eq!(pg.len(), 2, "the rest of the values, then the nulls");
    assert!(
        pg[0].text.contains(
            r#""t0"."wakes" IS NOT NULL AND "t0"."wakes" <= CAST($1 AS TIME) AND ("t0"."wakes" < CAST($1 AS TIME) OR "t0"."id" < $2)"#
        ),
        "{}",
        pg[0].text
    );
    let my = statements("$orderby=wakes", Some(&after), Dialect::MySql);
    assert!(
        my[0].text.contains("`t0`.`wakes` > CAST(? AS TIME(6))"),
        "{}",
        my[0].text
    );
    assert_eq!(
        my[0].binds[..3],
        [
            Bind::Text("08:30:00.500".into()),
            Bind::Text("08:30:00.500".into()),
            Bind::Int(8)
        ]
    );
}
