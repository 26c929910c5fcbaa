use super::*;
use crate::odata::model::fixture::model;
use crate::odata::{count_query, page_query, parse_query, Page};
use Dialect::{MySql, Postgres, Sqlite};

/// The statement of the page `query` asks for under page size `size`.
fn page(d: Dialect, query: &str, size: u64) -> Sql {
    let m = model();
    let users = m.find("Users").expect("fixture");
    let q = parse_query(query).expect("parses");
    let page = Page::from_prefer(None, size, None).of(&q);
    page_query(&m, users, &q, page, d).expect("fits the model")
}

fn count(d: Dialect, query: &str) -> Sql {
    let m = model();
    let users = m.find("Users").expect("fixture");
    count_query(&m, users, &parse_query(query).expect("parses"), d).expect("fits the model")
}

#[test]
fn injection_attempts_stay_single_binds() {
    for d in [Sqlite, Postgres, MySql] {
        let sql = page(d, "$filter=name eq 'x'' OR 1=1 --'", 1);
        assert!(!sql.text.contains("OR 1=1"), "{}", sql.text);
        assert_eq!(sql.binds[..1], [Bind::Text("x' OR 1=1 --".into())]);
    }
    let sql = page(Sqlite, "$search=\"'; DROP TABLE users; --\"", 1);
    assert!(!sql.text.contains("DROP"));
    assert_eq!(sql.binds[0], Bind::Text("%'; DROP TABLE users; --%".into()));
}

#[test]
fn page_query_selects_orders_and_limits() {
    let sql = page(
        Postgres,
        "$select=name&$orderby=organisation/name desc&$top=5&$skip=3",
        5,
    );
    // Past the first row PostgreSQL skips rows by their keys alone and
    // reads the columns of the page's own rows; the page's bounds are
    // numerals, so the prepared statement keeps its plan.
    let order = concat!(
        r#"ORDER BY (SELECT "t1"."name" FROM "orgs" AS "t1" WHERE "t1"."id" = "t0"."org_id") "#,
        r#"DESC NULLS LAST, "t0"."id" DESC"#
    );
    assert_eq!(
        sql.text,
        format!(
            "{}{}{order}{}{order}",
            r#"SELECT "t0"."id" AS "id", "t0"."display_name" AS "name" FROM "#,
            r#"(SELECT "t0"."id" FROM "users" AS "t0" "#,
            r#" LIMIT 6 OFFSET 3) AS "k" JOIN "users" AS "t0" ON "t0"."id" = "k"."id" "#
        )
    );
    assert_eq!(sql.binds, []);
    let sql = page(MySql, "$select=age,name&$orderby=age,id", 200);
    assert_eq!(
        sql.text,
        "SELECT `t0`.`id` AS `id`, `t0`.`display_name` AS `name`, \
         `t0`.`age` AS `age` FROM `users` AS `t0` \
         ORDER BY `t0`.`age` ASC, `t0`.`id` ASC LIMIT ? OFFSET ?"
    );
    assert_eq!(sql.binds, [Bind::Int(201), Bind::Int(0)]);
    // So does MySQL: InnoDB then copies the key alone of each skipped row.
    let sql = page(MySql, "$select=name&$skip=90", 10);
    assert_eq!(
        sql.text,
        "SELECT `t0`.`id` AS `id`, `t0`.`display_name` AS `name` \
         FROM (SELECT `t0`.`id` FROM `users` AS `t0` ORDER BY `t0`.`id` ASC LIMIT ? OFFSET ?) \
         AS `k` JOIN `users` AS `t0` ON `t0`.`id` = `k`.`id` ORDER BY `t0`.`id` ASC"
    );
    assert_eq!(sql.binds, [Bind::Int(11), Bind::Int(90)]);
    let sql = page(Sqlite, "$orderby=id desc,age", u64::MAX);
    assert!(sql
        .text
        .ends_with(r#"ORDER BY "t0"."id" DESC, "t0"."age" ASC, "t0"."id" ASC LIMIT $1 OFFSET $2"#));
    assert_eq!(sql.binds[0], Bind::Int(i64::MAX));
}

#[test]
fn select_all_lists_declared_columns_only() {
    let sql = page(Sqlite, "$select=*", 1);
    assert!(sql.text.starts_with(
        r#"SELECT "t0"."id" AS "id", "t0"."display_name" AS "name", "t0"."email" AS "email""#
    ));
    assert!(sql.text.contains(r#""t0"."token" AS "token" FROM"#));
    assert!(!sql.text.contains("org_id"));
}

#[test]
fn search_matches_substrings_literally_and_ignoring_case() {
    let sql = count(
        Postgres,
        "$search=a_b% OR NOT \"c d\"&$filter=rank gt 1&$top=3&$skip=9",
    );
    assert_eq!(
        sql.text,
        concat!(
            r#"SELECT COUNT(*) FROM "users" AS "t0" WHERE ("t0"."rank" > $1) AND "#,
            r#"(((lower("t0"."display_name") LIKE lower($2) ESCAPE '!') OR COALESCE((lower("t0"."email") LIKE lower($2) ESCAPE '!'), FALSE)) OR "#,
            r#"(NOT ((lower("t0"."display_name") LIKE lower($3) ESCAPE '!') OR COALESCE((lower("t0"."email") LIKE lower($3) ESCAPE '!'), FALSE))))"#
        )
    );
    assert_eq!(
        sql.binds,
        [
            Bind::Int(1),
            Bind::Text("%a!_b!%%".into()),
            Bind::Text("%c d%".into())
        ]
    );
    let my = count(MySql, "$search=x!");
    assert_eq!(
        my.binds,
        [Bind::Text("%x!!%".into()), Bind::Text("%x!!%".into())]
    );
    assert_eq!(my.text.matches('?').count(), 2);
}

#[test]
fn count_ignores_paging_and_order() {
    assert_eq!(
        count(Sqlite, "$top=1&$skip=2&$orderby=age&$select=name").text,
        r#"SELECT COUNT(*) FROM "users" AS "t0""#
    );
}

#[test]
fn queries_that_do_not_fit_the_model_are_refused() {
    let m = model();
    let users = m.find("Users").expect("fixture");
    let q = parse_query("$filter=name eq 5").expect("parses");
    let e = page_query(&m, users, &q, Page::first(1), Sqlite).expect_err("refused");
    assert_eq!((e.code, e.target.as_str()), ("type_mismatch", "$filter"));
    let orgs = m.find("Organisations").expect("fixture");
    let q = parse_query("$search=x").expect("parses");
    let e = count_query(&m, orgs, &q, Postgres).expect_err("refused");
    assert_eq!(e.target, "$search");
}

#[test]
fn only_a_nullable_term_gets_a_null_ordering_clause() {
    // PostgreSQL's indexes are ASC NULLS LAST: a null clause on a key or a
    // NOT NULL column would sort the table instead of reading the index.
    let sql = page(Postgres, "", 50);
    assert!(
        sql.text
            .ends_with(r#"ORDER BY "t0"."id" ASC LIMIT 51 OFFSET 0"#),
        "{}",
        sql.text
    );
    let sql = page(Postgres, "$orderby=rank desc,age", 50);
    assert!(
        sql.text.contains(
            r#"ORDER BY "t0"."rank" DESC, "t0"."age" ASC NULLS FIRST, "t0"."id" ASC LIMIT"#
        ),
        "{}",
        sql.text
    );
    for d in [Sqlite, MySql] {
        let sql = page(d, "$orderby=age desc", 50);
        assert!(!sql.text.contains("NULLS"), "{}", sql.text);
    }
}

#[test]
fn a_term_the_filter_keeps_non_null_gets_no_null_ordering_clause() {
    // `age gt 3` holds for no null age: PostgreSQL may read an index on age
    // backwards instead of sorting every match.
    for filter in ["age gt 3", "name eq 'x' and 3 le age", "age in (1, 2)"] {
        let sql = page(Postgres, &format!("$filter={filter}&$orderby=age desc"), 9);
        assert!(
            sql.text
                .contains(r#"ORDER BY "t0"."age" DESC, "t0"."id" DESC LIMIT"#),
            "{filter}: {}",
            sql.text
        );
    }
    // Comparisons that a null passes, or that do not decide the row alone.
    for filter in [
        "age ne 3",
        "age eq null",
        "age gt 3 or name eq 'x'",
        "not (age lt 3)",
        "age in (1, null)",
        "age gt rank",
    ] {
        let sql = page(Postgres, &format!("$filter={filter}&$orderby=age desc"), 9);
        assert!(
            sql.text.contains(r#""t0"."age" DESC NULLS LAST"#),
            "{filter}: {}",
            sql.text
        );
    }
}

#[test]
fn mysql_text_equality_narrows_by_the_column_collation_then_compares_bytes() {
    // The column's own (case-insensitive) collation lets its index find the
    // candidates; the byte comparison keeps OData's exact match.
    let sql = page(MySql, "$filter=name eq 'Rex' and name in ('a', 'b')", 9);
    assert!(
        sql.text.contains(concat!(
            "WHERE ((`t0`.`display_name` = ? AND CAST(`t0`.`display_name` AS BINARY) = ?) AND ",
            "(`t0`.`display_name` IN (?, ?) AND CAST(`t0`.`display_name` AS BINARY) IN (?, ?)))"
        )),
        "{}",
        sql.text
    );
    let text = |s: &str| Bind::Text(s.into());
    assert_eq!(
        sql.binds[..6],
        [
            text("Rex"),
            text("Rex"),
            text("a"),
            text("b"),
            text("a"),
            text("b")
        ]
    );
    // Other engines compare text exactly as it is.
    let sql = page(Postgres, "$filter=name eq 'Rex'", 9);
    assert!(
        sql.text
            .contains(r#"WHERE ("t0"."display_name" = $1) ORDER"#),
        "{}",
        sql.text
    );
    // Not-equal, and a value computed from the column, compare bytes alone.
    let sql = page(
        MySql,
        "$filter=name ne 'Rex' and concat(name, 'x') eq 'y'",
        9,
    );
    assert!(
        sql.text
            .contains("(CAST(`t0`.`display_name` AS BINARY) <> ?)"),
        "{}",
        sql.text
    );
    assert!(
        sql.text
            .contains("(CAST(CONCAT(`t0`.`display_name`, ?) AS BINARY) = ?)"),
        "{}",
        sql.text
    );
}
