//! `$search` over the fixture's searchable properties (`Things.name` and
//! `Things.note`): words, quoted phrases, AND / OR / NOT and parentheses,
//! case-insensitive substring matching with `%` and `_` taken literally.

use rocket::http::Status;

use crate::helpers::TestApp;
use crate::odata_fixture::{ids_where, mentions as hits, odata_uri, spawn_fixture, Keep};

/// The ids `Things?$search=<search>` answers.
async fn searched(app: &TestApp, search: &str) -> Result<Vec<i64>, String> {
    let answer = app
        .get_uri(&odata_uri("Things", &[("$search", search)]), &[])
        .await;
    match answer.status {
        Status::Ok => Ok(answer.ids()),
        status => Err(format!("{status}: {}", answer.body)),
    }
}

async fn assert_searches(app: &TestApp, cases: &[(&str, Keep<'_>)]) {
    let mut wrong = Vec::new();
    for (search, keep) in cases {
        let (got, expected) = (searched(app, search).await, Ok(ids_where(keep)));
        if got != expected {
            wrong.push(format!(
                "$search={search}\n  got      {got:?}\n  expected {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[rocket::async_test]
async fn words_match_any_searchable_property_ignoring_case() {
    let app = spawn_fixture().await;
    assert_searches(
        &app,
        &[
            ("apple", &|t| hits(t, "apple")),
            ("RED", &|t| hits(t, "red")),
            ("Sweet", &|t| hits(t, "sweet")),
            ("an", &|t| hits(t, "an")),
            ("zzz", &|_| false),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn space_means_and_and_phrases_match_as_a_whole() {
    let app = spawn_fixture().await;
    assert_searches(
        &app,
        &[
            ("green red", &|t| hits(t, "green") && hits(t, "red")),
            ("\"green red\"", &|t| hits(t, "green red")),
            ("\"or green\"", &|t| hits(t, "or green")),
            ("\"red fruit\"", &|t| hits(t, "red fruit")),
            ("\"  padded\"", &|t| hits(t, "  padded")),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn and_or_not_and_parentheses() {
    let app = spawn_fixture().await;
    assert_searches(
        &app,
        &[
            ("fig OR lemon", &|t| hits(t, "fig") || hits(t, "lemon")),
            ("red AND fruit", &|t| hits(t, "red") && hits(t, "fruit")),
            ("NOT e", &|t| !hits(t, "e")),
            ("an NOT banana", &|t| hits(t, "an") && !hits(t, "banana")),
            ("(fig OR lemon) AND sour", &|t| {
                (hits(t, "fig") || hits(t, "lemon")) && hits(t, "sour")
            }),
            ("fig OR lemon AND sour", &|t| {
                hits(t, "fig") || (hits(t, "lemon") && hits(t, "sour"))
            }),
            ("NOT (a OR e)", &|t| !(hits(t, "a") || hits(t, "e"))),
            // Lower-case operators are words.
            ("fig or lemon", &|t| {
                hits(t, "fig") && hits(t, "or") && hits(t, "lemon")
            }),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn percent_underscore_and_quotes_are_literal() {
    let app = spawn_fixture().await;
    assert_searches(
        &app,
        &[
            ("%", &|t| hits(t, "%")),
            ("_", &|t| hits(t, "_")),
            ("100%", &|t| hits(t, "100%")),
            ("r_d", &|_| false),
            ("O'Brien", &|t| hits(t, "o'brien")),
            ("it's", &|t| hits(t, "it's")),
            ("\"sour; yellow\"", &|t| hits(t, "sour; yellow")),
            ("!", &|_| false),
            ("A&B", &|t| hits(t, "a&b")),
        ],
    )
    .await;
}

#[rocket::async_test]
async fn search_counts_and_combines_with_filter() {
    let app = spawn_fixture().await;
    let answer = app
        .get_uri(
            &odata_uri(
                "Things",
                &[
                    ("$search", "e"),
                    ("$filter", "active eq true"),
                    ("$count", "true"),
                    ("$top", "1"),
                ],
            ),
            &[],
        )
        .await;
    let expected = ids_where(|t| hits(t, "e") && t.active == Some(true));
    assert_eq!(answer.json()["@odata.count"], expected.len());
    assert_eq!(answer.ids(), expected[..1]);
    let count = app
        .get_uri(&odata_uri("Things/$count", &[("$search", "NOT e")]), &[])
        .await;
    assert_eq!(count.body, ids_where(|t| !hits(t, "e")).len().to_string());
}

#[rocket::async_test]
async fn search_on_a_set_without_searchable_properties_is_400() {
    let app = spawn_fixture().await;
    app.odata("Categories?$search=fruit")
        .await
        .assert_error(Status::BadRequest, Some("$search"));
    app.odata("Categories/$count?$search=fruit")
        .await
        .assert_error(Status::BadRequest, Some("$search"));
}

#[rocket::async_test]
async fn malformed_search_is_400() {
    let app = spawn_fixture().await;
    for search in ["\"unclosed", "(fig", "fig)", "fig OR", "NOT", "AND fig"] {
        app.get_uri(&odata_uri("Things", &[("$search", search)]), &[])
            .await
            .assert_error(Status::BadRequest, Some("$search"));
    }
}
