//! `$filter` over the typed fixture: every operator, function and literal
//! kind, OData's null semantics, navigation paths and `any`/`all`. Each
//! expected result is computed from the fixture's rows in Rust.

use rocket::http::Status;

use crate::helpers::TestApp;
use crate::odata_fixture::{
    category_of, colour_of, ids_where, items_of, mentions, odata_uri, ordered_ids, spawn_fixture,
    thing, Keep, Thing, CATEGORIES,
};

/// The ids `Things?$filter=<filter>` answers, in key order, or the status
/// and body of an answer that is not a collection.
async fn filtered(app: &TestApp, filter: &str) -> Result<Vec<i64>, String> {
    let answer = app
        .get_uri(&odata_uri("Things", &[("$filter", filter)]), &[])
        .await;
    match answer.status {
        Status::Ok => Ok(answer.ids()),
        status => Err(format!("{status}: {}", answer.body)),
    }
}

/// Checks each `(filter, predicate)` pair: the filter must answer exactly
/// the things the predicate admits. Every pair is tried; the failure lists
/// each filter that answered otherwise.
async fn assert_filters(app: &TestApp, cases: &[(&str, Keep<'_>)]) {
    let mut wrong = Vec::new();
    for (filter, keep) in cases {
        let (got, expected) = (filtered(app, filter).await, Ok(ids_where(keep)));
        if got != expected {
            wrong.push(format!(
                "$filter={filter}\n  got      {got:?}\n  expected {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[rocket::async_test]
async fn comparison_operators_on_integers() {
    let app = spawn_fixture().await;
    let q = |t: &Thing| t.qty;
    assert_filters(
        &app,
        &[
            ("qty eq 5", &|t| q(t) == Some(5)),
            ("qty gt 5", &|t| q(t).is_some_and(|x| x > 5)),
            ("qty ge 5", &|t| q(t).is_some_and(|x| x >= 5)),
            ("qty lt 5", &|t| q(t).is_some_and(|x| x < 5)),
            ("qty le 5", &|t| q(t).is_some_and(|x| x <= 5)),
            ("5 lt qty", &|t| q(t).is_some_and(|x| x > 5)),
            ("qty eq -4", &|t| q(t) == Some(-4)),
            ("id eq 7", &|t| t.id == 7),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn ne_includes_nulls_and_ordering_comparisons_exclude_them() {
    let app = spawn_fixture().await;
    assert_filters(
        &app,
        &[
            ("qty ne 3", &|t| t.qty != Some(3)),
            ("price ne 7.00", &|t| t.price != Some(7.0)),
            ("active ne true", &|t| t.active != Some(true)),
            ("note ne 'A&B'", &|t| t.note != Some("A&B")),
            ("born ne 2020-01-15", &|t| t.born != Some("2020-01-15")),
            ("qty gt 3", &|t| t.qty.is_some_and(|x| x > 3)),
            ("qty le 3", &|t| t.qty.is_some_and(|x| x <= 3)),
            ("not (qty gt 3)", &|t| t.qty.is_none_or(|x| x <= 3)),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn null_literal_compares_by_presence() {
    let app = spawn_fixture().await;
    assert_filters(
        &app,
        &[
            ("qty eq null", &|t| t.qty.is_none()),
            ("null eq qty", &|t| t.qty.is_none()),
            ("qty ne null", &|t| t.qty.is_some()),
            ("seen_at eq null", &|t| t.seen_at.is_none()),
            ("uid ne null", &|t| t.uid.is_some()),
            ("null eq null", &|_| true),
            ("null ne null", &|_| false),
            ("qty gt null", &|_| false),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn logical_operators_and_parentheses_follow_odata_precedence() {
    let app = spawn_fixture().await;
    let q = |t: &Thing, f: &dyn Fn(i64) -> bool| t.qty.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("qty gt 4 and active eq true", &|t| {
                q(t, &|x| x > 4) && t.active == Some(true)
            }),
            ("qty gt 10 or qty lt 1", &|t| {
                q(t, &|x| !(1..=10).contains(&x))
            }),
            // `and` binds tighter than `or`.
            ("qty gt 10 or qty lt 4 and active eq false", &|t| {
                q(t, &|x| x > 10) || (q(t, &|x| x < 4) && t.active == Some(false))
            }),
            ("(qty gt 10 or qty lt 4) and active eq false", &|t| {
                q(t, &|x| !(4..=10).contains(&x)) && t.active == Some(false)
            }),
            ("not (qty gt 10 or qty lt 4)", &|t| {
                !q(t, &|x| !(4..=10).contains(&x))
            }),
            // `not` binds tighter than `eq`: (not active) eq true.
            ("not active eq true", &|t| t.active == Some(false)),
            ("active", &|t| t.active == Some(true)),
            ("active eq false or active eq null", &|t| {
                t.active != Some(true)
            }),
            ("true", &|_| true),
            ("false", &|_| false),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn in_lists_match_any_member_including_null() {
    let app = spawn_fixture().await;
    assert_filters(
        &app,
        &[
            ("qty in (3, 5, 8)", &|t| matches!(t.qty, Some(3 | 5 | 8))),
            ("name in ('fig', 'lemon', 'Fig')", &|t| {
                t.name == "fig" || t.name == "lemon"
            }),
            ("qty in (5, null)", &|t| matches!(t.qty, Some(5) | None)),
            ("not (qty in (3, 5))", &|t| !matches!(t.qty, Some(3 | 5))),
            ("colour_code in ('red', 'navy blue')", &|t| {
                matches!(t.colour_code, Some("red" | "navy blue"))
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn arithmetic_operators_on_integers() {
    let app = spawn_fixture().await;
    let q = |t: &Thing, f: &dyn Fn(i64) -> bool| t.qty.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("qty add 2 eq 7", &|t| q(t, &|x| x + 2 == 7)),
            ("qty sub 2 eq 1", &|t| q(t, &|x| x - 2 == 1)),
            ("qty mul 3 gt 20", &|t| q(t, &|x| x * 3 > 20)),
            ("qty div 2 eq 2", &|t| q(t, &|x| x / 2 == 2)),
            ("qty div 2 eq -2", &|t| q(t, &|x| x / 2 == -2)),
            ("qty divby 2 eq 2.5", &|t| q(t, &|x| x as f64 / 2.0 == 2.5)),
            ("qty mod 3 eq 2", &|t| q(t, &|x| x % 3 == 2)),
            ("qty mod 3 eq -1", &|t| q(t, &|x| x % 3 == -1)),
            ("-qty gt 3", &|t| q(t, &|x| -x > 3)),
            ("-(qty sub 10) eq 5", &|t| q(t, &|x| -(x - 10) == 5)),
            ("qty add qty eq 16", &|t| q(t, &|x| x + x == 16)),
            ("qty add 1 mul 2 eq 10", &|t| q(t, &|x| x + 2 == 10)),
            ("(qty add 1) mul 2 eq 12", &|t| q(t, &|x| (x + 1) * 2 == 12)),
            ("qty sub 1 sub 1 eq 3", &|t| q(t, &|x| x - 2 == 3)),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn arithmetic_on_decimals_and_doubles() {
    let app = spawn_fixture().await;
    let p = |t: &Thing, f: &dyn Fn(f64) -> bool| t.price.is_some_and(f);
    let r = |t: &Thing, f: &dyn Fn(f64) -> bool| t.ratio.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("price mul 2 gt 20", &|t| p(t, &|x| x * 2.0 > 20.0)),
            ("price add 0.5 lt 1", &|t| p(t, &|x| x + 0.5 < 1.0)),
            ("price sub 1 ge 6", &|t| p(t, &|x| x - 1.0 >= 6.0)),
            ("price divby 4 lt 0.25", &|t| p(t, &|x| x / 4.0 < 0.25)),
            ("ratio mul 2 ge 2.5", &|t| r(t, &|x| x * 2.0 >= 2.5)),
            ("ratio divby 0.5 gt 3", &|t| r(t, &|x| x / 0.5 > 3.0)),
            ("-ratio gt 1", &|t| r(t, &|x| -x > 1.0)),
            ("ratio add qty gt 10", &|t| {
                r(t, &|x| t.qty.is_some_and(|q| x + q as f64 > 10.0))
            }),
            ("price gt ratio", &|t| {
                p(t, &|x| t.ratio.is_some_and(|y| x > y))
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn div_of_a_decimal_keeps_the_fraction_whatever_the_stored_value() {
    // SQLite stores a DECIMAL column's 7.00 as the integer 7.
    let app = spawn_fixture().await;
    let p = |t: &Thing, f: &dyn Fn(f64) -> bool| t.price.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("price div 2 gt 3", &|t| p(t, &|x| x / 2.0 > 3.0)),
            ("price div 4 eq 1.75", &|t| p(t, &|x| x / 4.0 == 1.75)),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn mod_keeps_the_fraction_of_decimals_and_doubles() {
    let app = spawn_fixture().await;
    let p = |t: &Thing, f: &dyn Fn(f64) -> bool| t.price.is_some_and(f);
    let r = |t: &Thing, f: &dyn Fn(f64) -> bool| t.ratio.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("price mod 1 gt 0.4", &|t| p(t, &|x| x % 1.0 > 0.4 + 1e-9)),
            ("price mod 5 eq 2.50", &|t| {
                p(t, &|x| (x % 5.0 - 2.5).abs() < 1e-9)
            }),
            ("ratio mod 1 gt 0.4", &|t| r(t, &|x| x % 1.0 > 0.4 + 1e-9)),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn division_by_zero_is_not_a_server_error() {
    let app = spawn_fixture().await;
    let mut failed = Vec::new();
    for filter in [
        "qty div 0 eq 1",
        "qty mod 0 eq 1",
        "price div 0 gt 1",
        "qty divby 0 gt 1",
        "ratio div 0 gt 1",
    ] {
        let answer = app
            .get_uri(&odata_uri("Things", &[("$filter", filter)]), &[])
            .await;
        if !matches!(answer.status.code, 200 | 400) {
            failed.push(format!(
                "$filter={filter} answered {}: {}",
                answer.status, answer.body
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[rocket::async_test]
async fn literals_of_every_kind() {
    let app = spawn_fixture().await;
    assert_filters(
        &app,
        &[
            ("price eq 12.50", &|t| t.price == Some(12.5)),
            ("price eq 12.5", &|t| t.price == Some(12.5)),
            ("price eq 7", &|t| t.price == Some(7.0)),
            ("ratio eq 1.25", &|t| t.ratio == Some(1.25)),
            ("ratio eq 125e-2", &|t| t.ratio == Some(1.25)),
            ("ratio lt -1.0E0", &|t| t.ratio.is_some_and(|x| x < -1.0)),
            ("active eq true", &|t| t.active == Some(true)),
            ("active eq false", &|t| t.active == Some(false)),
            ("name eq 'banana'", &|t| t.name == "banana"),
            ("name eq 'O''Brien''s kiwi'", &|t| {
                t.name == "O'Brien's kiwi"
            }),
            ("note eq 'it''s tart'", &|t| t.note == Some("it's tart")),
            ("note eq 'sour; yellow'", &|t| {
                t.note == Some("sour; yellow")
            }),
            ("note eq 'A&B'", &|t| t.note == Some("A&B")),
            ("name eq ''", &|_| false),
            ("born eq 2020-01-15", &|t| t.born == Some("2020-01-15")),
            ("born lt 2020-01-01", &|t| {
                t.born.is_some_and(|d| d < "2020-01-01")
            }),
            ("born ge 2021-12-31", &|t| {
                t.born.is_some_and(|d| d >= "2021-12-31")
            }),
            ("opens eq 08:30:00", &|t| t.opens == Some("08:30:00")),
            ("opens lt 08:30:00", &|t| {
                t.opens.is_some_and(|o| o < "08:30:00")
            }),
            ("opens gt 12:15:29.5", &|t| {
                t.opens.is_some_and(|o| o >= "12:15:30")
            }),
            ("uid eq 0b5c3f0e-0000-4000-8000-000000000005", &|t| {
                t.uid == Some("0b5c3f0e-0000-4000-8000-000000000005")
            }),
            ("uid eq 0B5C3F0E-0000-4000-8000-00000000000A", &|t| {
                t.uid == Some("0b5c3f0e-0000-4000-8000-00000000000a")
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn datetimeoffset_literals_compare_by_instant() {
    let app = spawn_fixture().await;
    let s = |t: &Thing, f: &dyn Fn(&str) -> bool| t.seen_at.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("seen_at eq 2024-03-01T09:30:00Z", &|t| {
                t.seen_at == Some("2024-03-01T09:30:00Z")
            }),
            ("seen_at eq 2024-03-01T11:30:00+02:00", &|t| {
                t.seen_at == Some("2024-03-01T09:30:00Z")
            }),
            ("seen_at eq 2024-03-01T04:30:00-05:00", &|t| {
                t.seen_at == Some("2024-03-01T09:30:00Z")
            }),
            ("seen_at eq 2024-03-01T10:00:00Z", &|t| t.id == 3),
            ("seen_at eq 2023-12-31T23:59:59Z", &|t| t.id == 5),
            ("seen_at eq 2024-02-29T18:45:10Z", &|t| t.id == 7),
            ("seen_at eq 2022-06-15T12:00:00Z", &|t| t.id == 10),
            ("seen_at eq 2024-03-02T00:15:00.25Z", &|t| t.id == 6),
            ("seen_at gt 2024-03-01T09:30:00Z", &|t| {
                s(t, &|x| x > "2024-03-01T09:30:00Z")
            }),
            ("seen_at lt 2024-03-01T00:00:00+01:00", &|t| {
                s(t, &|x| x < "2024-02-29T23:00:00Z")
            }),
            (
                "seen_at ge 2024-03-01T08:00:00Z and seen_at le 2024-03-01T10:00:00Z",
                &|t| {
                    s(t, &|x| {
                        ("2024-03-01T08:00:00Z"..="2024-03-01T10:00:00Z").contains(&x)
                    })
                },
            ),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn string_functions() {
    let app = spawn_fixture().await;
    let note = |t: &Thing, f: &dyn Fn(&str) -> bool| t.note.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("contains(name, 'an')", &|t| t.name.contains("an")),
            ("contains(name, 'apple')", &|t| t.name.contains("apple")),
            ("contains(note, '100%')", &|t| {
                note(t, &|n| n.contains("100%"))
            }),
            ("contains(note, '_')", &|t| note(t, &|n| n.contains('_'))),
            ("contains(note, 'Red')", &|t| {
                note(t, &|n| n.contains("Red"))
            }),
            ("note eq 'red fruit'", &|t| t.note == Some("red fruit")),
            ("note eq 'RED FRUIT'", &|_| false),
            ("startswith(name, 'Ch')", &|t| t.name.starts_with("Ch")),
            ("startswith(name, 'ch')", &|t| t.name.starts_with("ch")),
            ("startswith(name, 'O''B')", &|t| t.name.starts_with("O'B")),
            ("endswith(name, 'y')", &|t| t.name.ends_with('y')),
            ("length(name) eq 3", &|t| t.name.chars().count() == 3),
            ("length(note) gt 10", &|t| {
                note(t, &|n| n.chars().count() > 10)
            }),
            ("indexof(name, 'an') eq 1", &|t| {
                t.name.find("an") == Some(1)
            }),
            ("indexof(name, 'zz') eq -1", &|t| !t.name.contains("zz")),
            ("substring(name, 1) eq 'pple'", &|t| {
                t.name.get(1..) == Some("pple")
            }),
            ("substring(name, 0, 3) eq 'Che'", &|t| {
                t.name.get(..3) == Some("Che")
            }),
            ("substring(name, 2, 2) eq 'na'", &|t| {
                t.name.get(2..4) == Some("na")
            }),
            ("tolower(name) eq 'apple'", &|t| {
                t.name.to_lowercase() == "apple"
            }),
            ("toupper(name) eq 'FIG'", &|t| {
                t.name.to_uppercase() == "FIG"
            }),
            ("contains(tolower(note), 'red')", &|t| {
                note(t, &|n| n.to_lowercase().contains("red"))
            }),
            ("trim(note) eq 'padded'", &|t| {
                note(t, &|n| n.trim() == "padded")
            }),
            ("concat(name, '!') eq 'fig!'", &|t| t.name == "fig"),
            (
                "concat(concat(name, ' '), note) eq 'Apple red fruit'",
                &|t| t.id == 1,
            ),
            ("concat(name, note) eq null", &|t| t.note.is_none()),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn functions_of_null_are_not_true() {
    let app = spawn_fixture().await;
    let note = |t: &Thing, f: &dyn Fn(&str) -> bool| t.note.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("endswith(note, '')", &|t| t.note.is_some()),
            ("startswith(note, '')", &|t| t.note.is_some()),
            ("contains(note, '')", &|t| t.note.is_some()),
            ("endswith(note, 'd  ')", &|t| {
                note(t, &|n| n.ends_with("d  "))
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn date_and_time_functions() {
    let app = spawn_fixture().await;
    let born = |t: &Thing, f: &dyn Fn(i64, i64, i64) -> bool| {
        t.born.is_some_and(|d| {
            let part = |r: std::ops::Range<usize>| d[r].parse::<i64>().unwrap();
            f(part(0..4), part(5..7), part(8..10))
        })
    };
    // Parts of the UTC instant (`YYYY-MM-DDTHH:MM:SS…Z`).
    let seen = |t: &Thing, r: std::ops::Range<usize>, n: i64| {
        t.seen_at.is_some_and(|s| s[r].parse::<i64>().unwrap() == n)
    };
    let opens = |t: &Thing, r: std::ops::Range<usize>, n: i64| {
        t.opens.is_some_and(|s| s[r].parse::<i64>().unwrap() == n)
    };
    assert_filters(
        &app,
        &[
            ("year(born) eq 2020", &|t| born(t, &|y, _, _| y == 2020)),
            ("month(born) eq 1", &|t| born(t, &|_, m, _| m == 1)),
            ("day(born) eq 29", &|t| born(t, &|_, _, d| d == 29)),
            ("year(seen_at) eq 2023", &|t| seen(t, 0..4, 2023)),
            ("month(seen_at) eq 2", &|t| seen(t, 5..7, 2)),
            ("day(seen_at) eq 1", &|t| seen(t, 8..10, 1)),
            ("hour(seen_at) eq 9", &|t| seen(t, 11..13, 9)),
            ("minute(seen_at) eq 45", &|t| seen(t, 14..16, 45)),
            ("second(seen_at) eq 59", &|t| seen(t, 17..19, 59)),
            ("second(seen_at) eq 0", &|t| seen(t, 17..19, 0)),
            ("hour(opens) eq 8", &|t| opens(t, 0..2, 8)),
            ("minute(opens) eq 59", &|t| opens(t, 3..5, 59)),
            ("second(opens) eq 9", &|t| opens(t, 6..8, 9)),
            ("date(seen_at) eq 2024-03-01", &|t| {
                t.seen_at.is_some_and(|s| s.starts_with("2024-03-01"))
            }),
            ("date(seen_at) lt 2024-01-01", &|t| {
                t.seen_at.is_some_and(|s| &s[..10] < "2024-01-01")
            }),
            ("time(seen_at) eq 09:30:00", &|t| {
                t.seen_at.is_some_and(|s| &s[11..19] == "09:30:00")
            }),
            ("time(seen_at) lt 09:00:00", &|t| {
                t.seen_at.is_some_and(|s| &s[11..19] < "09:00:00")
            }),
            ("seen_at lt now()", &|t| t.seen_at.is_some()),
            ("seen_at gt now()", &|_| false),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn rounding_functions() {
    let app = spawn_fixture().await;
    let p = |t: &Thing, f: &dyn Fn(f64) -> bool| t.price.is_some_and(f);
    let r = |t: &Thing, f: &dyn Fn(f64) -> bool| t.ratio.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("floor(price) eq 12", &|t| p(t, &|x| x.floor() == 12.0)),
            ("ceiling(price) eq 13", &|t| p(t, &|x| x.ceil() == 13.0)),
            ("round(price) eq 3", &|t| p(t, &|x| x.round() == 3.0)),
            ("floor(ratio) eq -2", &|t| r(t, &|x| x.floor() == -2.0)),
            ("ceiling(ratio) eq 1", &|t| r(t, &|x| x.ceil() == 1.0)),
            ("round(ratio) eq 4", &|t| r(t, &|x| x.round() == 4.0)),
            ("floor(qty divby 2) eq 2", &|t| {
                t.qty.is_some_and(|q| (q as f64 / 2.0).floor() == 2.0)
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn round_takes_midpoints_away_from_zero() {
    // OData Part 2: "The mid-point between two integers is rounded away from
    // zero, i.e. 0.5 is rounded to 1 and -0.5 is rounded to -1."
    let app = spawn_fixture().await;
    let r = |t: &Thing, f: &dyn Fn(f64) -> bool| t.ratio.is_some_and(f);
    assert_filters(
        &app,
        &[
            ("round(ratio) eq 1", &|t| r(t, &|x| x.round() == 1.0)),
            ("round(ratio) eq -2", &|t| r(t, &|x| x.round() == -2.0)),
            ("round(-ratio) eq -1", &|t| r(t, &|x| (-x).round() == -1.0)),
            ("round(price) eq 3", &|t| {
                t.price.is_some_and(|x| x.round() == 3.0)
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn navigation_paths_reach_the_related_entity() {
    let app = spawn_fixture().await;
    assert_filters(
        &app,
        &[
            ("category/name eq 'Fruit'", &|t| {
                category_of(t).is_some_and(|c| c.name == "Fruit")
            }),
            ("category/name ne 'Fruit'", &|t| {
                category_of(t).is_none_or(|c| c.name != "Fruit")
            }),
            ("category/priority eq null", &|t| {
                category_of(t).and_then(|c| c.priority).is_none()
            }),
            ("category/priority lt 2", &|t| {
                category_of(t)
                    .and_then(|c| c.priority)
                    .is_some_and(|p| p < 2)
            }),
            ("colour/label eq 'Navy'", &|t| {
                colour_of(t).is_some_and(|c| c.label == "Navy")
            }),
            ("startswith(colour/label, 'Y') and qty gt 7", &|t| {
                colour_of(t).is_some_and(|c| c.label.starts_with('Y'))
                    && t.qty.is_some_and(|q| q > 7)
            }),
        ],
    )
    .await;
}

/// The ids `Categories?$filter=<filter>` answers.
async fn filtered_categories(app: &TestApp, filter: &str) -> Vec<i64> {
    app.get_uri(&odata_uri("Categories", &[("$filter", filter)]), &[])
        .await
        .ids()
}

#[rocket::async_test]
async fn any_and_all_over_a_collection_navigation() {
    let app = spawn_fixture().await;
    let items = |c: i64| items_of(c).into_iter().map(thing).collect::<Vec<_>>();
    let cases: &[(&str, &dyn Fn(i64) -> bool)] = &[
        ("items/any()", &|c| !items(c).is_empty()),
        ("not items/any()", &|c| items(c).is_empty()),
        ("items/any(i: i/qty gt 10)", &|c| {
            items(c).iter().any(|t| t.qty.is_some_and(|q| q > 10))
        }),
        ("items/all(i: i/active eq true)", &|c| {
            items(c).iter().all(|t| t.active == Some(true))
        }),
        ("items/all(i: i/qty ne null)", &|c| {
            items(c).iter().all(|t| t.qty.is_some())
        }),
        ("items/any(i: i/colour/label eq 'Red')", &|c| {
            items(c)
                .iter()
                .any(|t| colour_of(t).is_some_and(|k| k.label == "Red"))
        }),
        ("items/any(i: i/qty gt 10) and priority ne null", &|c| {
            items(c).iter().any(|t| t.qty.is_some_and(|q| q > 10))
                && CATEGORIES[(c - 1) as usize].priority.is_some()
        }),
        (
            "items/any(i: startswith(i/name, 'b') or i/price gt 10)",
            &|c| {
                items(c)
                    .iter()
                    .any(|t| t.name.starts_with('b') || t.price.is_some_and(|p| p > 10.0))
            },
        ),
    ];
    for (filter, keep) in cases {
        let expected: Vec<i64> = CATEGORIES
            .iter()
            .map(|c| c.id)
            .filter(|c| keep(*c))
            .collect();
        assert_eq!(
            filtered_categories(&app, filter).await,
            expected,
            "$filter={filter}"
        );
    }
}

#[rocket::async_test]
async fn any_inside_a_navigation_path_from_the_other_side() {
    let app = spawn_fixture().await;
    let answer = app
        .get_uri(
            &odata_uri(
                "Things",
                &[("$filter", "category/items/any(o: o/qty eq 20)")],
            ),
            &[],
        )
        .await;
    let grape_category = thing(7).category_id;
    assert_eq!(
        answer.ids(),
        ids_where(|t| t.category_id.is_some() && t.category_id == grape_category)
    );
}

#[rocket::async_test]
async fn filter_combines_with_the_other_options() {
    let app = spawn_fixture().await;
    let answer = app
        .get_uri(
            &odata_uri(
                "Things",
                &[
                    ("$filter", "qty ne null"),
                    ("$search", "e"),
                    ("$orderby", "qty desc"),
                    ("$top", "3"),
                    ("$count", "true"),
                ],
            ),
            &[],
        )
        .await;
    let expected = ordered_ids(|t| t.qty.is_some() && mentions(t, "e"), &[("qty", true)]);
    assert_eq!(answer.json()["@odata.count"], expected.len());
    assert_eq!(answer.ids(), expected[..3]);
}

#[rocket::async_test]
async fn text_equality_respects_case_and_trailing_spaces_under_any_collation() {
    // `note` and `colour_code` have the engine's default collation, which on
    // MySQL/MariaDB ignores case and trailing spaces; OData compares exactly.
    let app = spawn_fixture().await;
    let note = |t: &Thing| t.note;
    let colour = |t: &Thing| t.colour_code;
    assert_filters(
        &app,
        &[
            ("note eq 'red fruit'", &|t| note(t) == Some("red fruit")),
            ("note eq 'Red Fruit'", &|_| false),
            ("note eq 'red fruit '", &|_| false),
            ("note ne 'RED FRUIT'", &|t| note(t) != Some("RED FRUIT")),
            ("colour_code eq 'RED'", &|_| false),
            ("colour_code eq 'red'", &|t| colour(t) == Some("red")),
            ("colour_code in ('RED', 'yellow')", &|t| {
                colour(t) == Some("yellow")
            }),
        ],
    )
    .await;
    // A text key is looked up exactly too, alone and across a navigation.
    assert_eq!(app.odata("Colours('red')").await.status, Status::Ok);
    for target in ["Colours('RED')", "Colours('red ')", "Colours('RED')/things"] {
        let answer = app.odata(target).await;
        assert_eq!(answer.status, Status::NotFound, "{target}: {}", answer.body);
    }
}
