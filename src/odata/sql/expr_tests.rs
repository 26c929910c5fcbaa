use crate::db::Dialect;
use crate::odata::filter_sql;
use crate::odata::model::fixture::model;
use crate::odata::parse_filter;
use crate::odata::sql::select::Bind;
use Dialect::{MySql, Postgres, Sqlite};

fn filter(d: Dialect, input: &str) -> (String, Vec<Bind>) {
    let m = model();
    let users = m.find("Users").expect("fixture");
    let expr = parse_filter(input).expect("parses");
    let sql = filter_sql(&m, users, &expr, d).expect("fits the model");
    (sql.text, sql.binds)
}

fn text(d: Dialect, input: &str) -> String {
    filter(d, input).0
}

#[test]
fn ne_includes_nulls_on_every_engine() {
    assert_eq!(
        filter(Sqlite, "age ne 3"),
        (r#"("t0"."age" IS NOT $1)"#.into(), vec![Bind::Int(3)])
    );
    assert_eq!(
        text(Postgres, "age ne 3"),
        r#"("t0"."age" IS DISTINCT FROM $1)"#
    );
    assert_eq!(text(MySql, "age ne 3"), "(NOT (`t0`.`age` <=> ?))");
    assert_eq!(text(Sqlite, "age eq 3"), r#"("t0"."age" IS $1)"#);
    assert_eq!(
        text(Postgres, "age eq 3"),
        r#"("t0"."age" IS NOT DISTINCT FROM $1)"#
    );
    assert_eq!(text(MySql, "age eq 3"), "(`t0`.`age` <=> ?)");
}

#[test]
fn not_null_columns_keep_plain_comparisons() {
    assert_eq!(text(Sqlite, "rank eq 3"), r#"("t0"."rank" = $1)"#);
    assert_eq!(text(Postgres, "rank ne 3"), r#"("t0"."rank" <> $1)"#);
    assert_eq!(text(Sqlite, "rank ge 3"), r#"("t0"."rank" >= $1)"#);
    assert_eq!(text(Sqlite, "rank lt 3"), r#"("t0"."rank" < $1)"#);
    assert_eq!(text(Sqlite, "rank le 3"), r#"("t0"."rank" <= $1)"#);
}

#[test]
fn null_literals_follow_odata_semantics() {
    assert_eq!(
        filter(Sqlite, "age eq null"),
        (r#"("t0"."age" IS NULL)"#.into(), vec![])
    );
    assert_eq!(text(MySql, "null ne age"), "(`t0`.`age` IS NOT NULL)");
    assert_eq!(text(Postgres, "null eq null"), "(NULL IS NULL)");
    assert_eq!(text(Postgres, "age gt null"), "FALSE");
    assert_eq!(text(Sqlite, "null le null"), "FALSE");
    // `not (x eq 3)` must hold where x is null: the comparison is two-valued.
    assert_eq!(
        text(Sqlite, "not (age eq 3)"),
        r#"(NOT ("t0"."age" IS $1))"#
    );
    assert_eq!(
        text(Postgres, "age gt 3"),
        r#"COALESCE(("t0"."age" > $1), FALSE)"#
    );
    assert_eq!(
        text(Sqlite, "age add null eq 1"),
        r#"(("t0"."age" + NULL) IS $1)"#
    );
}

#[test]
fn in_lists_are_two_valued() {
    assert_eq!(
        filter(Postgres, "age in (1, 2)"),
        (
            r#"COALESCE(("t0"."age" IN ($1, $2)), FALSE)"#.into(),
            vec![Bind::Int(1), Bind::Int(2)]
        )
    );
    assert_eq!(
        text(Sqlite, "rank in (1, 2)"),
        r#"("t0"."rank" IN ($1, $2))"#
    );
    assert_eq!(
        text(Sqlite, "rank in (1, null)"),
        r#"(("t0"."rank" = $1) OR ("t0"."rank" IS NULL))"#
    );
}

#[test]
fn logic_and_arithmetic() {
    assert_eq!(
        filter(Sqlite, "not (age eq 3) and -rank lt 0 or active"),
        (
            r#"(((NOT ("t0"."age" IS $1)) AND ((-"t0"."rank") < $2)) OR "t0"."active")"#.into(),
            vec![Bind::Int(3), Bind::Int(0)]
        )
    );
    assert_eq!(
        text(Sqlite, "rank add 1 sub 2 mul 3 eq 4"),
        r#"((("t0"."rank" + $1) - ($2 * $3)) = $4)"#
    );
    assert_eq!(
        text(Sqlite, "rank mod 2 eq 0"),
        r#"(("t0"."rank" % $1) = $2)"#
    );
    assert_eq!(
        text(Sqlite, "rank div 2 eq 1"),
        r#"(("t0"."rank" / $1) = $2)"#
    );
    assert_eq!(text(MySql, "rank div 2 eq 1"), "((`t0`.`rank` DIV ?) = ?)");
    assert_eq!(
        text(MySql, "weight div 2 eq 1"),
        "((`t0`.`weight` / ?) <=> ?)"
    );
    assert_eq!(
        text(Sqlite, "rank divby 2 eq 1"),
        r#"((CAST("t0"."rank" AS REAL) / $1) = $2)"#
    );
    assert_eq!(
        text(Postgres, "rank divby 2 eq 1"),
        r#"((CAST("t0"."rank" AS NUMERIC) / $1) = $2)"#
    );
    assert_eq!(text(Postgres, "true"), "$1");
}

#[test]
fn literals_are_bound_with_their_type() {
    assert_eq!(
        filter(Postgres, "score eq 1.50"),
        (
            r#"("t0"."score" IS NOT DISTINCT FROM CAST($1 AS NUMERIC))"#.into(),
            vec![Bind::Decimal("1.50".into())]
        )
    );
    assert_eq!(filter(Sqlite, "weight eq 1.5e0").1, [Bind::Double(1.5)]);
    assert_eq!(filter(Sqlite, "active eq false").1, [Bind::Bool(false)]);
    let guid = "token eq 01234567-89ab-cdef-0123-456789abcdef";
    assert_eq!(
        text(Postgres, guid),
        r#"("t0"."token" IS NOT DISTINCT FROM CAST($1 AS UUID))"#
    );
    assert_eq!(
        filter(Sqlite, guid).1,
        [Bind::Text("01234567-89ab-cdef-0123-456789abcdef".into())]
    );
    assert_eq!(
        text(MySql, "born eq 2024-01-02"),
        "(`t0`.`born` <=> CAST(? AS DATE))"
    );
    assert_eq!(
        filter(MySql, "wakes lt 07:30:00").1,
        [Bind::Text("07:30:00".into())]
    );
}

#[test]
fn instants_compare_by_instant() {
    let f = "created lt 2024-01-02T03:04:05+01:00";
    assert_eq!(
        filter(Sqlite, f),
        (
            r#"(strftime('%Y-%m-%dT%H:%M:%f', "t0"."created") < strftime('%Y-%m-%dT%H:%M:%f', $1))"#.into(),
            vec![Bind::Text("2024-01-02 02:04:05.000000+00:00".into())]
        )
    );
    assert_eq!(
        text(Postgres, f),
        r#"("t0"."created" < CAST($1 AS TIMESTAMPTZ))"#
    );
    assert_eq!(
        filter(MySql, f).1,
        [Bind::Text("2024-01-02 02:04:05.000000".into())]
    );
    assert_eq!(
        text(MySql, "created lt now()"),
        "(`t0`.`created` < UTC_TIMESTAMP(6))"
    );
    assert_eq!(
        text(Postgres, "created lt now()"),
        r#"("t0"."created" < now())"#
    );
}

#[test]
fn string_functions() {
    assert_eq!(
        text(Sqlite, "contains(email, 'a')"),
        r#"COALESCE((instr("t0"."email", $1) > 0), FALSE)"#
    );
    assert_eq!(
        text(Postgres, "startswith(name, 'a')"),
        r#"(strpos("t0"."display_name", $1) = 1)"#
    );
    assert_eq!(
        filter(MySql, "endswith(name, 'a')"),
        (
            "(RIGHT((`t0`.`display_name` COLLATE utf8mb4_bin), CHAR_LENGTH(?)) = ?)".into(),
            vec![Bind::Text("a".into()), Bind::Text("a".into())]
        )
    );
    assert_eq!(
        filter(Sqlite, "endswith(name, 'a')"),
        (
            r#"(substr("t0"."display_name", -length($1)) = $1 OR ($1 = '' AND "t0"."display_name" IS NOT NULL))"#.into(),
            vec![Bind::Text("a".into())]
        )
    );
    assert_eq!(
        text(Postgres, "length(name) eq 1"),
        r#"(char_length("t0"."display_name") = $1)"#
    );
    assert_eq!(
        text(Sqlite, "length(name) eq 1"),
        r#"(length("t0"."display_name") = $1)"#
    );
    assert_eq!(
        text(MySql, "indexof(name, 'a') eq 0"),
        "((LOCATE(?, (`t0`.`display_name` COLLATE utf8mb4_bin)) - 1) = ?)"
    );
    assert_eq!(
        text(Sqlite, "substring(name, 1) eq 'b'"),
        r#"(substr("t0"."display_name", $1 + 1) = $2)"#
    );
    assert_eq!(
        text(Postgres, "substring(name, 1, 2) eq 'b'"),
        r#"(substr("t0"."display_name", CAST($1 + 1 AS INTEGER), CAST($2 AS INTEGER)) = $3)"#
    );
    assert_eq!(
        text(Sqlite, "tolower(name) eq toupper(trim(name))"),
        r#"(lower("t0"."display_name") = upper(trim("t0"."display_name")))"#
    );
    assert_eq!(
        text(Postgres, "concat(name, 'x') eq 'y'"),
        r#"(("t0"."display_name" || $1) = $2)"#
    );
    assert_eq!(
        text(MySql, "concat(name, 'x') eq 'y'"),
        "(CAST(CONCAT(`t0`.`display_name`, ?) AS BINARY) = ?)"
    );
}

#[test]
fn date_and_number_functions() {
    assert_eq!(
        text(Sqlite, "year(born) eq 2000"),
        r#"(CAST(strftime('%Y', "t0"."born") AS INTEGER) IS $1)"#
    );
    assert_eq!(
        text(Postgres, "month(born) eq 1"),
        r#"(CAST(FLOOR(EXTRACT(MONTH FROM "t0"."born")) AS INTEGER) IS NOT DISTINCT FROM $1)"#
    );
    for (f, my) in [
        ("day", "DAY"),
        ("hour", "HOUR"),
        ("minute", "MINUTE"),
        ("second", "SECOND"),
    ] {
        assert_eq!(
            text(MySql, &format!("{f}(created) eq 1")),
            format!("({my}(`t0`.`created`) = ?)")
        );
    }
    assert_eq!(
        text(Postgres, "date(created) eq 2024-01-02"),
        r#"(CAST(("t0"."created" AT TIME ZONE 'UTC') AS DATE) = CAST($1 AS DATE))"#
    );
    assert_eq!(
        text(Sqlite, "time(created) lt 12:00:00"),
        r#"(time(strftime('%Y-%m-%dT%H:%M:%f', "t0"."created")) < $1)"#
    );
    assert_eq!(
        text(Postgres, "round(weight) eq 1"),
        r#"(ROUND(CAST("t0"."weight" AS NUMERIC)) IS NOT DISTINCT FROM $1)"#
    );
    assert_eq!(
        text(Sqlite, "floor(rank) eq ceiling(rank)"),
        r#"((CAST("t0"."rank" AS INTEGER) - ("t0"."rank" < CAST("t0"."rank" AS INTEGER))) = (CAST("t0"."rank" AS INTEGER) + ("t0"."rank" > CAST("t0"."rank" AS INTEGER))))"#
    );
    assert_eq!(
        text(MySql, "floor(rank) eq ceiling(rank)"),
        "(FLOOR(`t0`.`rank`) = CEILING(`t0`.`rank`))"
    );
}

#[test]
fn to_one_paths_become_correlated_subqueries() {
    assert_eq!(
        text(Sqlite, "organisation/parent/name eq 'Acme'"),
        concat!(
            r#"((SELECT "t2"."name" FROM "orgs" AS "t2" WHERE "t2"."id" = "#,
            r#"(SELECT "t1"."parent_id" FROM "orgs" AS "t1" WHERE "t1"."id" = "t0"."org_id")) IS $1)"#
        )
    );
}

#[test]
fn lambdas_become_exists_subqueries() {
    assert_eq!(
        filter(Postgres, "posts/any(p: p/likes gt 3)"),
        (
            r#"EXISTS (SELECT 1 FROM "posts" AS "t1" WHERE "t1"."author_id" = "t0"."id" AND ("t1"."likes" > $1))"#.into(),
            vec![Bind::Int(3)]
        )
    );
    assert_eq!(
        text(Sqlite, "posts/all(p: p/title eq name)"),
        r#"NOT EXISTS (SELECT 1 FROM "posts" AS "t1" WHERE "t1"."author_id" = "t0"."id" AND NOT COALESCE(("t1"."title" = "t0"."display_name"), FALSE))"#
    );
    assert_eq!(
        text(MySql, "posts/any()"),
        "EXISTS (SELECT 1 FROM `posts` AS `t1` WHERE `t1`.`author_id` = `t0`.`id`)"
    );
    assert_eq!(
        text(
            Sqlite,
            "organisation/users/any(u: u/posts/any(p: p/likes gt age))"
        ),
        concat!(
            r#"EXISTS (SELECT 1 FROM "users" AS "t1" WHERE "t1"."org_id" = "t0"."org_id" AND "#,
            r#"EXISTS (SELECT 1 FROM "posts" AS "t2" WHERE "t2"."author_id" = "t1"."id" AND ("t2"."likes" > "t0"."age")))"#
        )
    );
}

#[test]
fn every_function_renders_on_every_engine() {
    for d in [Sqlite, Postgres, MySql] {
        for f in [
            "contains(name,'a')",
            "startswith(name,'a')",
            "endswith(name,'a')",
            "length(name) eq 1",
            "indexof(name,'a') eq 1",
            "substring(name,1) eq 'a'",
            "tolower(name) eq 'a'",
            "toupper(name) eq 'a'",
            "trim(name) eq 'a'",
            "concat(name,'a') eq 'a'",
            "year(born) eq 1",
            "month(created) eq 1",
            "day(born) eq 1",
            "hour(wakes) eq 1",
            "minute(wakes) eq 1",
            "second(created) eq 1",
            "date(created) eq 2020-01-01",
            "time(created) eq 01:00:00",
            "now() gt created",
            "round(score) eq 1",
            "floor(score) eq 1",
            "ceiling(score) eq 1",
        ] {
            let (sql, _) = filter(d, f);
            assert!(!sql.is_empty(), "{f}");
        }
    }
}

#[test]
fn row_filters_drop_null_guards_only_where_null_acts_as_false() {
    let m = model();
    let users = m.find("Users").expect("fixture");
    let page = |q: &str| {
        let q = crate::odata::parse_query(q).expect("parses");
        crate::odata::page_query(&m, users, &q, crate::odata::Page::first(1), Postgres)
            .expect("fits")
            .text
    };
    let plain = page("$filter=age gt 3 and email eq 'a' or age le 1");
    assert!(
        plain.contains(
            r#"WHERE ((("t0"."age" > $1) AND ("t0"."email" = $2)) OR ("t0"."age" <= $3))"#
        ),
        "{plain}"
    );
    let negated = page("$filter=not (age gt 3)");
    assert!(
        negated.contains(r#"(NOT COALESCE(("t0"."age" > $1), FALSE))"#),
        "{negated}"
    );
    let ne = page("$filter=age ne 3");
    assert!(ne.contains("IS DISTINCT FROM"), "{ne}");
    let both_nullable = page("$filter=age eq weight");
    assert!(
        both_nullable.contains("IS NOT DISTINCT FROM"),
        "{both_nullable}"
    );
}
