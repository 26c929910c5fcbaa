//! Requests the service refuses: 400 with the option at fault as `target`,
//! 404 for what does not exist, always in the OData error shape with
//! `OData-Version`, never leaking SQL — and hostile input, which answers
//! 400 or an empty result but never a server error, and leaves every table
//! as it was.

use rocket::http::Status;

use crate::helpers::TestApp;
use crate::odata_fixture::{odata_uri, spawn_fixture, Answer, CATEGORIES, COLOURS, THINGS};

/// Words that would betray SQL or the engine in an error message.
const SQL_WORDS: [&str; 9] = [
    "select ",
    " from ",
    "where ",
    "sqlite",
    "postgres",
    "syntax error at",
    "sqlx",
    "\"t0\"",
    "relation ",
];

fn assert_no_sql(answer: &Answer) {
    let body = answer.body.to_lowercase();
    let request = answer.request.to_lowercase();
    // A word the request itself holds may be echoed as the client's own text.
    for word in SQL_WORDS.iter().filter(|w| !request.contains(w.trim())) {
        assert!(
            !body.contains(word),
            "GET {}: the error mentions {word:?}: {}",
            answer.request,
            answer.body
        );
    }
}

async fn get(app: &TestApp, resource: &str, options: &[(&str, &str)]) -> Answer {
    app.get_uri(&odata_uri(resource, options), &[]).await
}

#[rocket::async_test]
async fn bad_options_are_400_naming_the_option() {
    let app = spawn_fixture().await;
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("$filter", "name eq")], "$filter"),
        (&[("$filter", "nope eq 1")], "$filter"),
        (&[("$filter", "name eq 'unterminated")], "$filter"),
        (&[("$filter", "name eq 5")], "$filter"),
        (&[("$filter", "qty eq 'five'")], "$filter"),
        (&[("$filter", "born eq 2020-13-45")], "$filter"),
        (&[("$filter", "active eq 1 and")], "$filter"),
        (&[("$filter", "qty")], "$filter"),
        (&[("$filter", "contains(qty, 'x')")], "$filter"),
        (&[("$filter", "length(name, name) eq 1")], "$filter"),
        (&[("$filter", "nofunction(name) eq 1")], "$filter"),
        (&[("$filter", "category/nope eq 1")], "$filter"),
        (&[("$filter", "category eq 1")], "$filter"),
        (&[("$filter", "items/any(i: i/qty gt 1)")], "$filter"),
        (&[("$filter", "price eq 1.2.3")], "$filter"),
        (&[("$filter", "(qty eq 1")], "$filter"),
        (&[("$top", "-1")], "$top"),
        (&[("$top", "abc")], "$top"),
        (&[("$top", "1.5")], "$top"),
        (&[("$top", "")], "$top"),
        (&[("$top", "99999999999999999999999")], "$top"),
        (&[("$skip", "-3")], "$skip"),
        (&[("$skip", "x")], "$skip"),
        (&[("$count", "yes")], "$count"),
        (&[("$count", "1")], "$count"),
        (&[("$orderby", "nope")], "$orderby"),
        (&[("$orderby", "name sideways")], "$orderby"),
        (&[("$orderby", "name,")], "$orderby"),
        (&[("$select", "nope")], "$select"),
        (&[("$select", "category/name")], "$select"),
        (&[("$select", "name,")], "$select"),
        (&[("$expand", "nope")], "$expand"),
        (&[("$search", "\"open")], "$search"),
        (&[("$format", "xml")], "$format"),
        (&[("$top", "1"), ("$top", "2")], "$top"),
        (&[("$unknown", "1")], "$unknown"),
        (&[("$apply", "groupby((nope))")], "$apply"),
        (&[("$apply", "pivot(name)")], "$apply"),
    ];
    for (options, target) in cases {
        let answer = get(&app, "Things", options).await;
        answer.assert_error(Status::BadRequest, Some(target));
        assert_no_sql(&answer);
    }
}

#[rocket::async_test]
async fn bad_options_on_count_and_entity_routes_are_400_too() {
    let app = spawn_fixture().await;
    get(&app, "Things/$count", &[("$filter", "name eq 5")])
        .await
        .assert_error(Status::BadRequest, Some("$filter"));
    get(&app, "Things(1)", &[("$select", "nope")])
        .await
        .assert_error(Status::BadRequest, Some("$select"));
    get(&app, "Categories(1)/items", &[("$orderby", "nope")])
        .await
        .assert_error(Status::BadRequest, Some("$orderby"));
    // A navigation's `$skiptoken` is refused before its parent is looked
    // up: a parent that is not there changes nothing.
    for parent in ["Categories(1)", "Categories(999)"] {
        get(&app, &format!("{parent}/items"), &[("$skiptoken", "x")])
            .await
            .assert_error(Status::BadRequest, Some("$skiptoken"));
    }
}

#[rocket::async_test]
async fn a_query_that_asks_for_no_rows_is_still_checked() {
    let app = spawn_fixture().await;
    for (option, value) in [
        ("$filter", "name eq 5"),
        ("$orderby", "nope"),
        ("$expand", "nope"),
    ] {
        get(&app, "Things", &[("$top", "0"), (option, value)])
            .await
            .assert_error(Status::BadRequest, Some(option));
    }
    let none = get(&app, "Things", &[("$top", "0"), ("$filter", "qty gt 1")]).await;
    assert_eq!(none.ok().ids(), Vec::<i64>::new());
}

#[rocket::async_test]
async fn bad_keys_are_400_and_unknown_resources_404() {
    let app = spawn_fixture().await;
    for target in [
        "Things('a')",
        "Things(1.5)",
        "Things(1,2)",
        "Things()",
        "Things(null)",
        "Things(name=1)",
        "Things(id eq 1)",
        "Colours(5)",
    ] {
        let answer = app.odata(target).await;
        answer.assert_error(Status::BadRequest, None);
        assert_no_sql(&answer);
    }
    for target in [
        "Nothing",
        "Nothing(1)",
        "Things(1)/$count",
        "Things/1",
        "Things(1)/category/name",
        "$metadata/Things",
        "Things/$count/extra",
    ] {
        let answer = app.odata(target).await;
        answer.assert_error(Status::NotFound, None);
        assert_no_sql(&answer);
    }
}

#[rocket::async_test]
async fn malformed_key_segments_are_400_invalid_key() {
    let app = spawn_fixture().await;
    for target in [
        "Things(3",
        "Things(",
        "Things()",
        "Things(3))",
        "Things(id=)",
        "Things(id=3",
        "Things(3)x",
        "Things(3/category",
        "Things(3?$select=name",
        "Colours('red'",
    ] {
        let answer = app.odata(target).await;
        answer.assert_error(Status::BadRequest, None);
        assert_eq!(
            answer.json()["error"]["code"],
            "invalid_key",
            "GET {}: {}",
            answer.request,
            answer.body
        );
        assert_no_sql(&answer);
    }
}

#[rocket::async_test]
async fn an_unknown_set_is_404_whatever_its_key_looks_like() {
    let app = spawn_fixture().await;
    for target in [
        "Nothing(3",
        "Nothing(",
        "Nothing()",
        "Nothing(id=)",
        "Nothing(3)",
    ] {
        let answer = app.odata(target).await;
        answer.assert_error(Status::NotFound, None);
        assert_eq!(
            answer.json()["error"]["code"],
            "not_found",
            "{}",
            answer.body
        );
    }
}

#[rocket::async_test]
async fn oversized_and_overly_nested_queries_are_400() {
    let app = spawn_fixture().await;
    let long = format!("name eq '{}'", "x".repeat(10_000));
    let answer = get(&app, "Things", &[("$filter", &long)]).await;
    assert_eq!(answer.status, Status::BadRequest, "{}", answer.body);
    let deep = format!("{}qty eq 1{}", "(".repeat(300), ")".repeat(300));
    get(&app, "Things", &[("$filter", &deep)])
        .await
        .assert_error(Status::BadRequest, Some("$filter"));
    let nots = format!("{}active", "not ".repeat(300));
    get(&app, "Things", &[("$filter", &nots)])
        .await
        .assert_error(Status::BadRequest, Some("$filter"));
    let chain = vec!["qty eq 1"; 300].join(" or ");
    let answer = get(&app, "Things", &[("$filter", &chain)]).await;
    assert_eq!(answer.status, Status::BadRequest, "{}", answer.body);
    let expand = "category($expand=items($expand=".repeat(10) + "category" + &"))".repeat(10);
    let answer = get(&app, "Things", &[("$expand", &expand)]).await;
    answer.assert_error(Status::BadRequest, Some("$expand"));
}

#[rocket::async_test]
async fn a_query_whose_next_links_would_be_too_long_is_400_naming_the_option() {
    let app = spawn_fixture().await;
    // 2,770 bytes sent; each `+` (a space) is `%20` in a next link: 8,272.
    let uri = format!("/odata/Things?$filter=name+ne+'{}'", "+".repeat(2750));
    let answer = app.get_uri(&uri, &[]).await;
    answer.assert_error(Status::BadRequest, Some("$filter"));
    let message = answer.json()["error"]["message"].clone();
    assert!(
        message.as_str().unwrap().contains("as next links write it"),
        "{message}"
    );
}

/// Panics unless every fixture table still holds every row.
async fn assert_tables_intact(app: &TestApp) {
    assert_eq!(app.count("things").await, THINGS.len() as i64);
    assert_eq!(app.count("categories").await, CATEGORIES.len() as i64);
    assert_eq!(app.count("colours").await, COLOURS.len() as i64);
    assert!(app.count("users").await >= 0);
}

#[rocket::async_test]
async fn injected_sql_in_string_literals_is_only_data() {
    let app = spawn_fixture().await;
    for filter in [
        "name eq 'x'' OR ''1''=''1'",
        "name eq 'fig'' --'",
        "name eq '''; DROP TABLE things; --'",
        "name eq 'Robert''); DROP TABLE things;--'",
        "contains(name, ''' OR 1=1 --')",
        "note eq '\" OR \"\"=\"'",
        "name in ('x'') OR (''1''=''1', 'y')",
        "startswith(name, '%')",
        "endswith(name, '_')",
        "contains(name, '%'' OR ''a''=''a')",
        "concat(name, ''' || (SELECT password FROM users) || ''') eq 'x'",
        "category/name eq 'x'' UNION SELECT password FROM users --'",
    ] {
        let answer = get(&app, "Things", &[("$filter", filter)]).await;
        assert_eq!(
            answer.ids(),
            Vec::<i64>::new(),
            "$filter={filter} must match no row"
        );
    }
    for search in [
        "\"' OR '1'='1\"",
        "'; DROP TABLE things; --",
        "\"%' OR name LIKE '%\"",
        "x') OR 1=1 --",
        "\"\\\"",
    ] {
        let answer = get(&app, "Things", &[("$search", search)]).await;
        assert!(
            answer.status == Status::BadRequest || answer.ids().is_empty(),
            "$search={search} answered {}: {}",
            answer.status,
            answer.body
        );
    }
    for key in [
        "Colours('x'' OR ''1''=''1')",
        "Colours('red''; DROP TABLE colours; --')",
    ] {
        app.odata(key).await.assert_error(Status::NotFound, None);
    }
    assert_tables_intact(&app).await;
}

#[rocket::async_test]
async fn injected_sql_syntax_is_refused_never_a_server_error() {
    let app = spawn_fixture().await;
    let attempts: &[(&str, &[(&str, &str)])] = &[
        ("Things", &[("$filter", "1 eq 1; DROP TABLE things")]),
        ("Things", &[("$filter", "qty eq 1 --")]),
        ("Things", &[("$filter", "qty eq 1 /* x */")]),
        ("Things", &[("$filter", "qty eq 1) OR (1 eq 1")]),
        ("Things", &[("$filter", "name eq \"fig\"")]),
        ("Things", &[("$filter", "qty/**/eq/**/1")]),
        ("Things", &[("$filter", "\"name\" eq 'fig'")]),
        ("Things", &[("$filter", "things.name eq 'fig'")]),
        ("Things", &[("$filter", "sqlite_version() eq '3'")]),
        ("Things", &[("$filter", "pg_sleep(5) eq null")]),
        ("Things", &[("$filter", "name eq 'a' || 'b'")]),
        ("Things", &[("$filter", "qty eq 1 UNION SELECT 1")]),
        ("Things", &[("$filter", "qty in (SELECT id FROM things)")]),
        ("Things", &[("$orderby", "name; DROP TABLE things")]),
        ("Things", &[("$orderby", "name desc, (SELECT 1)")]),
        ("Things", &[("$orderby", "\"name\"")]),
        ("Things", &[("$orderby", "name COLLATE \"C\"")]),
        ("Things", &[("$orderby", "1")]),
        ("Things", &[("$orderby", "random()")]),
        (
            "Things",
            &[("$select", "name,(SELECT password FROM users)")],
        ),
        ("Things", &[("$select", "\"name\"")]),
        ("Things", &[("$select", "name AS x")]),
        ("Things", &[("$top", "1; DROP TABLE things")]),
        ("Things", &[("$top", "1 OR 1=1")]),
        ("Things", &[("$skip", "1 OR 1=1")]),
        ("Things", &[("$expand", "category($filter=1 eq 1) OR 1=1")]),
        ("Things", &[("$expand", "category;DROP TABLE things")]),
        (
            "Things",
            &[("$expand", "category($select=name FROM users)")],
        ),
        ("Things(1;DROP TABLE things)", &[]),
        ("Things(1 OR 1=1)", &[]),
        ("Things(1)--", &[]),
        ("Things;DROP TABLE things", &[]),
        ("Things\"", &[]),
        ("things\"; DROP TABLE things; --", &[]),
        ("Colours(code='x' OR '1'='1')", &[]),
    ];
    let mut accepted = Vec::new();
    for (resource, options) in attempts {
        let answer = get(&app, resource, options).await;
        if matches!(answer.status.code, 400 | 404) {
            answer.assert_error(answer.status, None);
            assert_no_sql(&answer);
        } else {
            accepted.push(format!(
                "GET {} answered {}: {}",
                answer.request, answer.status, answer.body
            ));
        }
    }
    assert!(
        accepted.is_empty(),
        "should be refused:\n{}",
        accepted.join("\n")
    );
    assert_tables_intact(&app).await;
}

#[rocket::async_test]
async fn odd_but_valid_values_never_cause_a_server_error() {
    let app = spawn_fixture().await;
    let attempts: &[(&str, &[(&str, &str)])] = &[
        ("Things", &[("$filter", "name eq 'a\u{0}b'")]),
        ("Things", &[("$filter", "contains(note, '\u{0}')")]),
        ("Things", &[("$search", "a\u{0}b")]),
        ("Colours('a\u{0}b')", &[]),
        ("Things", &[("$filter", "name eq '\u{1F34B} lemon'")]),
        ("Things", &[("$filter", "qty eq 99999999999999999999")]),
        ("Things", &[("$filter", "qty gt -99999999999999999999.5")]),
        ("Things", &[("$filter", "ratio lt 1e308")]),
        ("Things", &[("$filter", "qty add 9223372036854775807 gt 0")]),
        ("Things", &[("$filter", "qty mul 9223372036854775807 gt 0")]),
        ("Things", &[("$filter", "substring(name, 99) eq ''")]),
        ("Things", &[("$filter", "substring(name, -1) eq 'x'")]),
        ("Things", &[("$filter", "substring(name, 1, -1) eq 'x'")]),
        ("Things", &[("$filter", "born eq 0001-01-01")]),
        ("Things", &[("$filter", "seen_at lt 9999-12-31T23:59:59Z")]),
        (
            "Things",
            &[("$filter", "uid eq 00000000-0000-0000-0000-000000000000")],
        ),
        ("Things", &[("$skip", "9223372036854775807")]),
        (
            "Things",
            &[("$skip", "18446744073709551615"), ("$top", "1")],
        ),
        ("Things", &[("$top", "18446744073709551615")]),
        (
            "Things",
            &[("$expand", "category($top=18446744073709551615)")],
        ),
        (
            "Categories",
            &[("$expand", "items($skip=18446744073709551615)")],
        ),
    ];
    let mut failed = Vec::new();
    for (resource, options) in attempts {
        let answer = get(&app, resource, options).await;
        if !matches!(answer.status.code, 200 | 400 | 404) {
            failed.push(format!(
                "GET {} answered {}: {}",
                answer.request, answer.status, answer.body
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_tables_intact(&app).await;
}

#[rocket::async_test]
async fn select_refuses_unknown_properties_even_beside_a_star() {
    let app = spawn_fixture().await;
    for select in ["*,nope", "nope,*", "*,name,nope"] {
        get(&app, "Things", &[("$select", select)])
            .await
            .assert_error(Status::BadRequest, Some("$select"));
    }
}
