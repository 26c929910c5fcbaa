//! The statements a page read by position runs, on each engine.

use crate::db::Dialect;
use crate::odata::fetch::{seek_statements, Fetch};
use crate::odata::fixture::model;
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
