//! Server-driven paging and `$orderby` (spec/odata-pagination.md with the
//! corrections of DESIGN.md): the page size from `Prefer` or the default,
//! clamped to the maximum and echoed in `Preference-Applied`; absolute next
//! links that keep every option, so that following them verbatim visits
//! every matching row exactly once, in order; no link on the last page;
//! `$top` as the total, `$skip` as the offset; stable order by the key.

use rocket::figment::Figment;
use rocket::http::Status;
use serde_json::Value;

use crate::helpers::{TestApp, BASE_URL};
use crate::odata_fixture::{
    all_ids, ids_where, keys_of, mentions, odata_target, odata_uri, ordered_ids, spawn_fixture,
    spawn_fixture_with, Answer, Thing, THINGS,
};

/// The fixture with a default page size of 3 and a maximum of 5.
async fn spawn_paged() -> TestApp {
    spawn_fixture_with(paged).await
}

fn paged(figment: Figment) -> Figment {
    figment
        .merge(("odata.pagination.default", 3))
        .merge(("odata.pagination.max", 5))
}

/// `odata.maxpagesize=<n>` as a `Prefer` header.
fn prefer(n: u64) -> Vec<(&'static str, String)> {
    vec![("Prefer", format!("odata.maxpagesize={n}"))]
}

fn borrowed<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

/// The pages of a collection: the first at `uri`, then each next link
/// followed verbatim (with the same headers) until a page has none.
async fn walk(app: &TestApp, uri: &str, headers: &[(&'static str, String)]) -> Vec<Answer> {
    let headers = borrowed(headers);
    let mut pages = vec![app.get_uri(uri, &headers).await];
    while let Some(link) = pages.last().unwrap().ok().next_link() {
        assert!(
            link.starts_with(&format!("{BASE_URL}/odata/")),
            "next links are absolute under base_url: {link}"
        );
        assert!(pages.len() < 30, "too many pages from {uri}");
        pages.push(app.follow(&link, &headers).await);
    }
    pages
}

/// Every id of every page, in order.
fn ids_of(pages: &[Answer]) -> Vec<i64> {
    pages.iter().flat_map(Answer::ids).collect()
}

/// The decoded query options of a link.
fn options_of(link: &str) -> Vec<(String, String)> {
    url::Url::parse(link)
        .unwrap_or_else(|e| panic!("{link} is not a URL: {e}"))
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn option<'a>(options: &'a [(String, String)], name: &str) -> Option<&'a str> {
    options
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[rocket::async_test]
async fn default_page_size_cuts_the_collection_and_links_the_rest() {
    let app = spawn_paged().await;
    let answer = app.odata("Things").await;
    assert_eq!(answer.ids(), all_ids()[..3]);
    assert_eq!(answer.header("Preference-Applied"), None);
    let link = answer.next_link().expect("a next link");
    let seek = format!("{BASE_URL}/odata/Things?$skip=3&$skiptoken=");
    assert!(link.starts_with(&seek), "{link}");
}

#[rocket::async_test]
async fn following_next_links_visits_every_matching_row_once_in_order() {
    let app = spawn_paged().await;
    type Keep = fn(&Thing) -> bool;
    let any: Keep = |_| true;
    let cases: Vec<(&str, Vec<i64>)> = vec![
        ("Things", all_ids()),
        ("Things?$orderby=qty", ordered_ids(any, &[("qty", false)])),
        (
            "Things?$filter=qty ne 3&$orderby=price desc&$select=name,price&$count=true",
            ordered_ids(|t| t.qty != Some(3), &[("price", true)]),
        ),
        (
            "Things?$search=e&$orderby=active desc,born",
            ordered_ids(|t| mentions(t, "e"), &[("active", true), ("born", false)]),
        ),
        ("Things?$top=7", all_ids()[..7].to_vec()),
        ("Things?$skip=2", all_ids()[2..].to_vec()),
        ("Things?$skip=1&$top=8&$orderby=seen_at desc", {
            ordered_ids(any, &[("seen_at", true)])[1..9].to_vec()
        }),
        ("Things?$expand=category&$orderby=category/name", {
            ordered_ids(any, &[("category/name", false)])
        }),
        (
            "Things?$orderby=id desc",
            all_ids().into_iter().rev().collect(),
        ),
        ("Categories(2)/items?$orderby=qty desc", {
            ordered_ids(|t| t.category_id == Some(2), &[("qty", true)])
        }),
    ];
    for (target, expected) in cases {
        for size in [None, Some(1), Some(2), Some(4)] {
            let headers = size.map(prefer).unwrap_or_default();
            let pages = walk(&app, &odata_target(target), &headers).await;
            let page_size = size.unwrap_or(3) as usize;
            assert_eq!(
                ids_of(&pages),
                expected,
                "{target} with page size {page_size}"
            );
            let (last, full) = pages.split_last().unwrap();
            for page in full {
                assert_eq!(
                    page.ids().len(),
                    page_size,
                    "{target}: a page before the last is full"
                );
            }
            assert!(last.ids().len() <= page_size);
            assert!(last.next_link().is_none());
            let first = pages[0].json();
            for page in &pages {
                let body = page.json();
                assert_eq!(body["@odata.context"], first["@odata.context"], "{target}");
                assert_eq!(
                    body.get("@odata.count"),
                    first.get("@odata.count"),
                    "{target}"
                );
                if target.contains("$select") {
                    for entity in page.value() {
                        assert_eq!(
                            keys_of(&entity),
                            ["id", "name", "price"].map(String::from).into(),
                            "{target}: every page is projected"
                        );
                    }
                }
                if target.contains("$expand") {
                    for entity in page.value() {
                        assert!(
                            entity.get("category").is_some(),
                            "{target}: every page is expanded"
                        );
                    }
                }
            }
            if target.contains("$count") {
                assert_eq!(first["@odata.count"], expected.len(), "{target}");
            }
        }
    }
}

#[rocket::async_test]
async fn preference_applied_echoes_the_clamped_page_size() {
    let app = spawn_paged().await;
    for (prefer, rows, applied) in [
        ("odata.maxpagesize=2", 2, Some("odata.maxpagesize=2")),
        ("maxpagesize=4", 4, Some("odata.maxpagesize=4")),
        ("odata.maxpagesize=50", 5, Some("odata.maxpagesize=5")),
        (
            "return=minimal, odata.maxpagesize=1",
            1,
            Some("odata.maxpagesize=1"),
        ),
        ("return=minimal", 3, None),
    ] {
        let answer = app.odata_with("Things", &[("Prefer", prefer)]).await;
        assert_eq!(answer.ids().len(), rows, "Prefer: {prefer}");
        assert_eq!(
            answer.header("Preference-Applied"),
            applied,
            "Prefer: {prefer}"
        );
    }
    let answer = app.odata("Things").await;
    assert_eq!(answer.header("Preference-Applied"), None);
}

#[rocket::async_test]
async fn preference_applied_answers_every_request_that_sent_it() {
    let app = spawn_paged().await;
    for target in [
        "Things(1)",
        "Things/$count",
        "Categories(1)/items",
        "Things(1)/category",
        "Things?$top=1",
    ] {
        let answer = app
            .odata_with(target, &[("Prefer", "odata.maxpagesize=9")])
            .await;
        answer.ok();
        assert_eq!(
            answer.header("Preference-Applied"),
            Some("odata.maxpagesize=5"),
            "{target}"
        );
    }
}

#[rocket::async_test]
async fn default_page_size_is_clamped_to_the_maximum() {
    let app = spawn_fixture_with(|f| {
        f.merge(("odata.pagination.default", 4))
            .merge(("odata.pagination.max", 2))
    })
    .await;
    let answer = app.odata("Things").await;
    assert_eq!(answer.ids(), all_ids()[..2]);
    assert_eq!(answer.header("Preference-Applied"), None);
    assert!(answer.next_link().is_some());
}

#[rocket::async_test]
async fn without_a_maximum_a_client_may_ask_for_more_than_the_default() {
    let app = spawn_fixture_with(|f| f.merge(("odata.pagination.default", 2))).await;
    let answer = app
        .odata_with("Things", &[("Prefer", "odata.maxpagesize=1000")])
        .await;
    assert_eq!(answer.ids(), all_ids());
    assert_eq!(
        answer.header("Preference-Applied"),
        Some("odata.maxpagesize=1000")
    );
    assert!(answer.next_link().is_none());
}

#[rocket::async_test]
async fn a_query_near_the_length_limit_pages_through_its_next_links() {
    let app = spawn_paged().await;
    // Each `+` (a space) is `%20` in the next links: 7,522 bytes and more,
    // with room for the link's $top, $skip and $skiptoken.
    let uri = format!("/odata/Things?$filter=name+ne+'{}'", "+".repeat(2500));
    let pages = walk(&app, &uri, &[]).await;
    assert!(pages.len() > 2, "{} pages", pages.len());
    assert_eq!(ids_of(&pages), all_ids());
}

#[rocket::async_test]
async fn top_is_the_total_that_pages_cut() {
    let app = spawn_paged().await;
    let first = app.odata("Things?$top=5").await;
    assert_eq!(first.ids(), all_ids()[..3]);
    let link = first.next_link().expect("a next link");
    let options = options_of(&link);
    assert_eq!(option(&options, "$top"), Some("2"), "{link}");
    assert_eq!(option(&options, "$skip"), Some("3"), "{link}");
    let second = app.follow(&link, &[]).await;
    assert_eq!(second.ids(), all_ids()[3..5]);
    assert!(second.next_link().is_none());
}

#[rocket::async_test]
async fn a_top_within_one_page_has_no_next_link() {
    let app = spawn_paged().await;
    for top in [1, 2, 3] {
        let answer = app.odata(&format!("Things?$top={top}")).await;
        assert_eq!(answer.ids(), all_ids()[..top]);
        assert!(answer.next_link().is_none(), "$top={top}");
    }
}

#[rocket::async_test]
async fn skip_alone_pages_from_the_offset() {
    let app = spawn_paged().await;
    let first = app.odata("Things?$skip=4").await;
    assert_eq!(first.ids(), all_ids()[4..7]);
    let link = first.next_link().expect("a next link");
    let seek = format!("{BASE_URL}/odata/Things?$skip=7&$skiptoken=");
    assert!(link.starts_with(&seek), "{link}");
    let second = app.follow(&link, &[]).await;
    assert_eq!(second.ids(), all_ids()[7..]);
    assert!(second.next_link().is_none());
}

#[rocket::async_test]
async fn skip_past_the_end_and_top_zero_answer_no_rows_and_no_link() {
    let app = spawn_paged().await;
    for target in [
        "Things?$skip=10&$count=true",
        "Things?$skip=999&$count=true",
        "Things?$top=0&$count=true",
    ] {
        let answer = app.odata(target).await;
        assert_eq!(answer.ids(), Vec::<i64>::new(), "{target}");
        let body = answer.json();
        assert!(body.get("@odata.nextLink").is_none(), "{target}");
        assert_eq!(body["@odata.count"], THINGS.len(), "{target}");
    }
}

#[rocket::async_test]
async fn a_last_page_that_fills_the_page_has_no_link() {
    let app = spawn_paged().await;
    let pages = walk(&app, &odata_target("Things"), &prefer(5)).await;
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1].ids().len(), 5);
    let pages = walk(
        &app,
        &odata_target("Things?$filter=qty ne null"),
        &prefer(4),
    )
    .await;
    let expected = ids_where(|t| t.qty.is_some());
    assert_eq!(expected.len(), 8);
    assert_eq!(pages.len(), 2);
    assert_eq!(ids_of(&pages), expected);
}

#[rocket::async_test]
async fn count_ignores_top_and_skip_on_every_page() {
    let app = spawn_paged().await;
    let expected = ids_where(|t| t.price.is_some());
    let pages = walk(
        &app,
        &odata_target("Things?$filter=price ne null&$count=true&$skip=1&$top=5"),
        &[],
    )
    .await;
    assert_eq!(ids_of(&pages), expected[1..6]);
    for page in &pages {
        assert_eq!(page.json()["@odata.count"], expected.len());
    }
}

#[rocket::async_test]
async fn next_link_keeps_every_option_and_replaces_skip() {
    let app = spawn_paged().await;
    let uri = odata_uri(
        "Things",
        &[
            ("$filter", "qty ne 3 and note ne 'A&B'"),
            ("$search", "NOT zzz"),
            ("$orderby", "price desc,name"),
            ("$select", "name,price"),
            ("$expand", "category($select=name)"),
            ("$count", "true"),
            ("$top", "8"),
            ("$skip", "1"),
            ("$format", "json"),
        ],
    );
    let answer = app.get_uri(&uri, &[]).await;
    let link = answer.ok().next_link().expect("a next link");
    assert!(
        link.starts_with(&format!("{BASE_URL}/odata/Things?")),
        "{link}"
    );
    let options = options_of(&link);
    for name in [
        "$filter", "$search", "$orderby", "$select", "$expand", "$count",
    ] {
        assert!(option(&options, name).is_some(), "{name} is kept: {link}");
    }
    assert_eq!(option(&options, "$skip"), Some("4"), "{link}");
    assert_eq!(option(&options, "$top"), Some("5"), "{link}");
    assert_eq!(
        options.iter().filter(|(k, _)| k == "$skip").count(),
        1,
        "{link}"
    );
    let filter = option(&options, "$filter").unwrap();
    assert!(
        filter.contains("'A&B'"),
        "values survive encoding: {filter}"
    );
}

#[rocket::async_test]
async fn a_client_keeping_its_own_options_and_copying_skip_gets_the_same_page() {
    let app = spawn_paged().await;
    let options = [("$filter", "qty ne 3"), ("$orderby", "price desc")];
    let first = app.get_uri(&odata_uri("Things", &options), &[]).await;
    let link = first.next_link().expect("a next link");
    let skip = option(&options_of(&link), "$skip")
        .expect("$skip")
        .to_owned();
    let mut own = options.to_vec();
    own.push(("$skip", &skip));
    let copied = app.get_uri(&odata_uri("Things", &own), &[]).await;
    let followed = app.follow(&link, &[]).await;
    assert_eq!(copied.ids(), followed.ids());
    assert_eq!(
        copied.ids(),
        ordered_ids(|t| t.qty != Some(3), &[("price", true)])[3..6]
    );
}

/// `Things?$orderby=<orderby>` with every row on one page.
async fn ordered(app: &TestApp, orderby: &str) -> Result<Vec<i64>, String> {
    let answer = app
        .get_uri(&odata_uri("Things", &[("$orderby", orderby)]), &[])
        .await;
    match answer.status {
        Status::Ok => Ok(answer.ids()),
        status => Err(format!("{status}: {}", answer.body)),
    }
}

#[rocket::async_test]
async fn orderby_puts_nulls_first_ascending_and_last_descending() {
    let app = spawn_fixture().await;
    let mut wrong = Vec::new();
    for (orderby, terms) in [
        ("qty", vec![("qty", false)]),
        ("qty asc", vec![("qty", false)]),
        ("qty desc", vec![("qty", true)]),
        ("price", vec![("price", false)]),
        ("price desc", vec![("price", true)]),
        ("ratio desc", vec![("ratio", true)]),
        ("active", vec![("active", false)]),
        ("active desc,qty", vec![("active", true), ("qty", false)]),
        ("born", vec![("born", false)]),
        ("born desc", vec![("born", true)]),
        ("opens", vec![("opens", false)]),
        ("seen_at", vec![("seen_at", false)]),
        ("seen_at desc", vec![("seen_at", true)]),
        ("category/name", vec![("category/name", false)]),
        (
            "category/priority desc,qty desc",
            vec![("category/priority", true), ("qty", true)],
        ),
        (
            "category_id desc,id desc",
            vec![("category_id", true), ("id", true)],
        ),
        ("id desc", vec![("id", true)]),
    ] {
        let expected = ordered_ids(|_| true, &terms);
        let got = ordered(&app, orderby).await;
        if got != Ok(expected.clone()) {
            wrong.push(format!(
                "$orderby={orderby}\n  got      {got:?}\n  expected {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[rocket::async_test]
async fn ties_are_broken_by_the_key_so_pages_are_stable() {
    let app = spawn_paged().await;
    for orderby in ["active", "active desc", "category_id", "born", "seen_at"] {
        let expected = ordered_ids(
            |_| true,
            &[(
                orderby.split(' ').next().unwrap(),
                orderby.ends_with("desc"),
            )],
        );
        let pages = walk(
            &app,
            &odata_uri("Things", &[("$orderby", orderby)]),
            &prefer(2),
        )
        .await;
        assert_eq!(ids_of(&pages), expected, "$orderby={orderby}");
    }
}

#[rocket::async_test]
async fn instants_order_by_the_instant_not_by_their_stored_spelling() {
    let app = spawn_fixture().await;
    let got: Vec<Value> = app
        .odata("Things?$orderby=seen_at&$filter=seen_at ne null&$select=seen_at")
        .await
        .value()
        .iter()
        .map(|e| e["seen_at"].clone())
        .collect();
    let mut expected: Vec<&str> = THINGS.iter().filter_map(|t| t.seen_at).collect();
    expected.sort_unstable();
    assert_eq!(
        got,
        expected.into_iter().map(Value::from).collect::<Vec<_>>()
    );
}
