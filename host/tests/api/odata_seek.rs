//! Next links that seek (DESIGN.md, "OData reads at any size"): a next link
//! carries a signed `$skiptoken` beside `$skip`; following the links reads
//! exactly what one unpaged read does, in every order (nullable and
//! non-unique columns both ways, text of either collation, `$select`,
//! `$search`, `$expand`); a client copying only `$skip` gets the same
//! pages; the token decides the position, and `$select`, `$top` and the
//! page size may change between pages; a token altered, made for another
//! query, sent to a collection whose links carry none, or malformed is 400
//! with target `$skiptoken`.

use rocket::http::Status;

use crate::helpers::{TestApp, BASE_URL};
use crate::odata_fixture::{all_ids, odata_target, spawn_fixture, Answer, THINGS};

/// Orders and options whose walks are compared with one unpaged read.
const SHAPES: &[&str] = &[
    "Things",
    "Things?$orderby=qty",
    "Things?$orderby=qty desc",
    "Things?$orderby=price desc,name&$select=name,price",
    "Things?$orderby=note&$select=note",
    "Things?$orderby=note desc,qty desc",
    "Things?$orderby=ratio desc",
    "Things?$orderby=active desc,born",
    "Things?$orderby=born desc&$select=born",
    "Things?$orderby=uid desc",
    "Things?$orderby=category_id,qty desc",
    "Things?$filter=qty ne 3&$orderby=qty desc&$count=true",
    "Things?$search=e&$orderby=note desc",
    "Things?$expand=category&$orderby=colour_code desc",
    "Things?$orderby=id desc",
    "Things?$orderby=qty desc,ratio&$select=name&$count=true",
];

fn prefer(n: usize) -> (&'static str, String) {
    ("Prefer", format!("odata.maxpagesize={n}"))
}

/// The ids of every page from `uri` on, each next link passed through
/// `link` before it is followed; and the links followed.
async fn walk(
    app: &TestApp,
    uri: &str,
    size: usize,
    link: impl Fn(&str) -> String,
) -> (Vec<i64>, Vec<String>) {
    let (name, value) = prefer(size);
    let headers = [(name, value.as_str())];
    let mut page = app.get_uri(uri, &headers).await;
    let (mut ids, mut links) = (page.ids(), Vec::new());
    while let Some(next) = page.next_link() {
        assert!(links.len() <= THINGS.len(), "too many pages from {uri}");
        let next = link(&next);
        page = app.follow(&next, &headers).await;
        ids.extend(page.ids());
        links.push(next);
    }
    (ids, links)
}

/// The link without its `$skiptoken`.
fn skip_only(link: &str) -> String {
    let (base, query) = link.split_once('?').expect("a link with options");
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.starts_with("$skiptoken="))
        .collect();
    format!("{base}?{}", kept.join("&"))
}

/// The `$skiptoken` of a link.
fn token_of(link: &str) -> &str {
    link.split('&')
        .find_map(|p| p.strip_prefix("$skiptoken="))
        .unwrap_or_else(|| panic!("no $skiptoken in {link}"))
}

#[rocket::async_test]
async fn walking_by_next_links_reads_what_one_unpaged_read_does() {
    let app = spawn_fixture().await;
    for shape in SHAPES {
        let uri = odata_target(shape);
        let whole = app
            .get_uri(&uri, &[("Prefer", "odata.maxpagesize=1000")])
            .await
            .ids();
        assert!(whole.len() > 3, "{shape} reads too few rows to page");
        for size in [1, 2, 3] {
            let (ids, links) = walk(&app, &uri, size, str::to_owned).await;
            assert_eq!(ids, whole, "{shape}, pages of {size}");
            for link in &links {
                assert!(!token_of(link).is_empty(), "{link}");
            }
            let (ids, _) = walk(&app, &uri, size, skip_only).await;
            assert_eq!(ids, whole, "{shape}, pages of {size}, copying only $skip");
        }
    }
}

#[rocket::async_test]
async fn a_sought_page_keeps_the_whole_count_and_an_emptied_one_ends_the_walk() {
    let app = spawn_fixture().await;
    let (name, value) = prefer(THINGS.len() - 1);
    let headers = [(name, value.as_str())];
    let first = app
        .get_uri(&odata_target("Things?$count=true"), &headers)
        .await;
    let link = first.next_link().expect("one row left");
    let next = app.follow(&link, &headers).await;
    assert_eq!(next.json()["@odata.count"], THINGS.len());
    assert_eq!(next.ids(), all_ids()[THINGS.len() - 1..]);
    let last = *all_ids().last().expect("rows");
    app.db
        .execute(sqlx::query(&format!(
            "DELETE FROM things WHERE id = {last}"
        )))
        .await
        .expect("deletes");
    let emptied = app.follow(&link, &headers).await;
    assert_eq!(emptied.ids(), Vec::<i64>::new());
    assert_eq!(emptied.json()["@odata.count"], THINGS.len() - 1);
    assert_eq!(emptied.next_link(), None);
}

#[rocket::async_test]
async fn the_token_decides_the_position_and_select_top_and_page_size_may_change() {
    let app = spawn_fixture().await;
    let uri = odata_target("Things?$orderby=qty desc");
    let whole = app
        .get_uri(&uri, &[("Prefer", "odata.maxpagesize=1000")])
        .await
        .ids();
    let first = app
        .get_uri(&uri, &[("Prefer", "odata.maxpagesize=3")])
        .await;
    let token = token_of(&first.next_link().expect("a link")).to_owned();
    let changed =
        format!("/odata/Things?$orderby=qty%20desc&$select=name&$top=2&$skip=0&$skiptoken={token}");
    let page = app.get_uri(&changed, &[]).await;
    assert_eq!(
        page.ids(),
        whole[3..5],
        "the token, not $skip, decides where"
    );
    for entity in page.value() {
        assert_eq!(entity.as_object().map(|o| o.len()), Some(2), "{entity}");
    }
    let alone = format!("/odata/Things?$orderby=qty%20desc&$skiptoken={token}");
    let page = app
        .get_uri(&alone, &[("Prefer", "odata.maxpagesize=1000")])
        .await;
    assert_eq!(page.ids(), whole[3..], "a token alone is enough");
}

#[rocket::async_test]
async fn tokens_altered_foreign_misplaced_or_malformed_are_refused() {
    let app = spawn_fixture().await;
    let first = app
        .get_uri(
            &odata_target("Things?$orderby=qty desc"),
            &[("Prefer", "odata.maxpagesize=2")],
        )
        .await;
    let link = first.next_link().expect("a link");
    let token = token_of(&link).to_owned();
    let (payload, tag) = token.split_once('.').expect("payload.tag");
    let flipped = |s: &str| {
        let mut bytes = s.as_bytes().to_vec();
        bytes[0] = if bytes[0] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).expect("ASCII")
    };
    let refused = [
        format!(
            "Things?$orderby=qty desc&$skiptoken={}.{tag}",
            flipped(payload)
        ),
        format!(
            "Things?$orderby=qty desc&$skiptoken={payload}.{}",
            flipped(tag)
        ),
        format!("Things?$orderby=qty&$skiptoken={token}"),
        format!("Things?$orderby=qty desc&$filter=qty gt 0&$skiptoken={token}"),
        format!("Things?$orderby=qty desc&$search=e&$skiptoken={token}"),
        format!("Categories?$orderby=qty desc&$skiptoken={token}").replace("qty desc", "name"),
        format!("Categories(1)/items?$orderby=qty desc&$skiptoken={token}"),
        "Things?$skiptoken=not-a-token".to_owned(),
        "Things?$skiptoken=".to_owned(),
        format!("Things?$skiptoken={}", "A".repeat(600)),
    ];
    for target in &refused {
        let answer = app.odata(target).await;
        answer.assert_error(Status::BadRequest, Some("$skiptoken"));
        assert!(!answer.body.contains("SELECT"), "{}", answer.body);
    }
    let nested = app
        .odata(&format!("Categories?$expand=items($skiptoken={token})"))
        .await;
    assert_eq!(nested.status, Status::BadRequest, "{}", nested.body);
    // The link itself still works.
    assert_eq!(
        app.follow(&link, &[("Prefer", "odata.maxpagesize=2")])
            .await
            .ids()
            .len(),
        2
    );
    assert!(
        link.starts_with(&format!(
            "{BASE_URL}/odata/Things?$orderby=qty%20desc&$skip=2&$skiptoken="
        )),
        "{link}"
    );
}

#[rocket::async_test]
async fn navigation_collections_and_orders_a_token_cannot_carry_page_by_skip() {
    let app = spawn_fixture().await;
    for target in ["Categories(1)/items", "Things?$orderby=seen_at desc"] {
        let answer = app
            .odata_with(target, &[("Prefer", "odata.maxpagesize=1")])
            .await;
        let link = answer
            .next_link()
            .unwrap_or_else(|| panic!("{target}: a next link"));
        assert!(!link.contains("$skiptoken"), "{link}");
        let next: Answer = app
            .follow(&link, &[("Prefer", "odata.maxpagesize=1")])
            .await;
        assert_eq!(next.ids().len(), 1, "{target}");
    }
}
