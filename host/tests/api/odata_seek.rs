//! Next links that seek (DESIGN.md, "OData reads at any size"): a next link
//! carries a signed `$skiptoken` beside `$skip`; following the links reads
//! exactly what one unpaged read does, in every order (nullable and
//! non-unique columns both ways, text of either collation, instants and
//! times of day to the microsecond, `$select`,
//! `$search`, `$expand`); a client copying only `$skip` gets the same
//! pages; the token decides the position, and `$select`, `$top` and the
//! page size may change between pages; a token altered, made for another
//! query, sent to a collection whose links carry none, or malformed is 400
//! with target `$skiptoken`.

use gatehouse::db::{Db, Dialect};
use rocket::figment::providers::{Format, Toml};
use rocket::http::Status;

use crate::helpers::{spawn_host_at, TestApp, TestDb, BASE_URL};
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
    "Things?$orderby=seen_at desc",
    "Things?$orderby=seen_at&$select=seen_at",
    "Things?$orderby=opens desc&$select=opens",
    "Things?$orderby=opens,seen_at desc",
];

/// More pages than any walk here reads.
const MOST_PAGES: usize = 64;

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
        assert!(links.len() <= MOST_PAGES, "too many pages from {uri}");
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
async fn navigation_collections_page_by_skip() {
    let app = spawn_fixture().await;
    let target = "Categories(1)/items";
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

/// One row of `moments`: an instant and a time of day, each as the servers
/// hold it (UTC, to the microsecond) and as SQLite stores it.
struct Moment {
    id: i64,
    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    at: Option<&'static str>,
    at_stored: Option<&'static str>,
    /// `HH:MM:SS.ffffff`.
    clock: Option<&'static str>,
    clock_stored: Option<&'static str>,
}

/// Ties in every engine, instants one microsecond apart, one instant in
/// several spellings and offsets, one time in several spellings, nulls.
/// Rows that SQLite cannot tell apart (instants within one millisecond,
/// which it orders by) or orders by their stored text (times) come in the
/// order of their keys, so that one order holds on every engine.
const MOMENTS: &[Moment] = &[
    Moment {
        id: 1,
        at: Some("2024-03-01T09:30:00.000000Z"),
        at_stored: Some("2024-03-01T09:30:00Z"),
        clock: Some("08:30:00.000000"),
        clock_stored: Some("08:30:00"),
    },
    Moment {
        id: 2,
        at: Some("2024-03-01T09:30:00.000000Z"),
        at_stored: Some("2024-03-01 10:30:00+01:00"),
        clock: Some("08:30:00.000000"),
        clock_stored: Some("08:30:00"),
    },
    Moment {
        id: 3,
        at: Some("2024-03-01T09:30:00.000001Z"),
        at_stored: Some("2024-03-01 09:30:00.000001"),
        clock: Some("08:30:00.000001"),
        clock_stored: Some("08:30:00.000001"),
    },
    Moment {
        id: 4,
        at: None,
        at_stored: None,
        clock: Some("12:00:00.500000"),
        clock_stored: Some("12:00:00.5"),
    },
    Moment {
        id: 5,
        at: Some("2024-03-01T09:30:00.500000Z"),
        at_stored: Some("2024-03-01T09:30:00.500Z"),
        clock: Some("12:00:00.500000"),
        clock_stored: Some("12:00:00.500"),
    },
    Moment {
        id: 6,
        at: Some("2024-03-01T09:30:00.500000Z"),
        at_stored: Some("2024-03-01 04:00:00.5-05:30"),
        clock: None,
        clock_stored: None,
    },
    Moment {
        id: 7,
        at: Some("2024-03-01T09:30:00.999999Z"),
        at_stored: Some("2024-03-01 09:30:00.999999"),
        clock: Some("23:59:59.999999"),
        clock_stored: Some("23:59:59.999999"),
    },
    Moment {
        id: 8,
        at: Some("2024-03-01T09:30:01.000000Z"),
        at_stored: Some("2024-03-01T09:30:01Z"),
        clock: Some("00:00:00.000000"),
        clock_stored: Some("00:00:00"),
    },
    Moment {
        id: 9,
        at: None,
        at_stored: None,
        clock: Some("08:30:00.000000"),
        clock_stored: Some("08:30:00.0"),
    },
    Moment {
        id: 10,
        at: Some("2023-12-31T23:59:59.999999Z"),
        at_stored: Some("2024-01-01 01:29:59.999999+01:30"),
        clock: None,
        clock_stored: None,
    },
    Moment {
        id: 11,
        at: Some("2024-03-01T09:30:00.000002Z"),
        at_stored: Some("2024-03-01 09:30:00.000002"),
        clock: Some("08:30:00.000002"),
        clock_stored: Some("08:30:00.000002"),
    },
];

/// The reference host exposing `moments` as the public set `Moments`.
async fn spawn_moments() -> TestApp {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("test database");
    let dialect = db.dialect();
    let table = match dialect {
        Dialect::Postgres => {
            "CREATE TABLE moments (id BIGINT PRIMARY KEY, at TIMESTAMPTZ, clock TIME)"
        }
        Dialect::MySql => {
            "CREATE TABLE moments (id BIGINT PRIMARY KEY, at DATETIME(6), clock TIME(6))"
        }
        Dialect::Sqlite => "CREATE TABLE moments (id INTEGER PRIMARY KEY, at DATETIME, clock TIME)",
        _ => unreachable!("an engine the suite does not know"),
    };
    db.execute(db.query(table)).await.expect("create moments");
    let text = |s: Option<&str>| s.map_or("NULL".to_owned(), |s| format!("'{s}'"));
    for m in MOMENTS {
        let (at, clock) = match dialect {
            Dialect::Postgres => (m.at.map(str::to_owned), m.clock),
            // DATETIME holds UTC without a zone.
            Dialect::MySql => (
                m.at.map(|s| s.trim_end_matches('Z').replace('T', " ")),
                m.clock,
            ),
            Dialect::Sqlite => (m.at_stored.map(str::to_owned), m.clock_stored),
            _ => unreachable!("an engine the suite does not know"),
        };
        let sql = format!(
            "INSERT INTO moments (id, at, clock) VALUES ({}, {}, {})",
            m.id,
            text(at.as_deref()),
            text(clock)
        );
        db.execute(sqlx::query(&sql))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    db.close().await;
    spawn_host_at(database, |figment| {
        let sets = Toml::string("[odata.sets.Moments]\ntable = \"moments\"\npublic = true\n");
        gatehouse_host::rocket(figment.merge(sets))
    })
    .await
}

/// The ids of [`MOMENTS`] in OData's order of one property (its spelling
/// on the servers, which sorts as its value), nulls lowest, ties by key in
/// the term's direction.
fn moments_by(value: impl Fn(&Moment) -> Option<&'static str>, descending: bool) -> Vec<i64> {
    let mut rows: Vec<&Moment> = MOMENTS.iter().collect();
    rows.sort_by(|a, b| {
        let order = value(a).cmp(&value(b)).then(a.id.cmp(&b.id));
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    rows.iter().map(|m| m.id).collect()
}

#[rocket::async_test]
async fn instants_and_times_of_day_seek_to_the_microsecond_through_ties_and_nulls() {
    let app = spawn_moments().await;
    let at = |m: &Moment| m.at;
    let clock = |m: &Moment| m.clock;
    let walks: [(&str, Vec<i64>); 6] = [
        ("Moments?$orderby=at", moments_by(at, false)),
        ("Moments?$orderby=at desc&$select=at", moments_by(at, true)),
        (
            "Moments?$orderby=at&$select=id,at&$count=true",
            moments_by(at, false),
        ),
        ("Moments?$orderby=clock", moments_by(clock, false)),
        (
            "Moments?$orderby=clock desc&$select=clock",
            moments_by(clock, true),
        ),
        (
            "Moments?$orderby=clock&$select=id",
            moments_by(clock, false),
        ),
    ];
    assert_eq!(
        walks[0].1,
        [4, 9, 10, 1, 2, 3, 11, 5, 6, 7, 8],
        "the order the rows are made for"
    );
    let every: Vec<i64> = MOMENTS.iter().map(|m| m.id).collect();
    for (shape, expected) in &walks {
        let mut once = expected.clone();
        once.sort_unstable();
        assert_eq!(once, every, "{shape}: each row once");
        let uri = odata_target(shape);
        let whole = app
            .get_uri(&uri, &[("Prefer", "odata.maxpagesize=1000")])
            .await
            .ids();
        assert_eq!(&whole, expected, "{shape}, unpaged");
        for size in 1..=4 {
            let (ids, links) = walk(&app, &uri, size, str::to_owned).await;
            assert_eq!(&ids, expected, "{shape}, pages of {size}");
            assert_eq!(
                links.len(),
                (MOMENTS.len() - 1) / size,
                "{shape}, pages of {size}"
            );
            for link in &links {
                assert!(!token_of(link).is_empty(), "{link}");
            }
            let (ids, _) = walk(&app, &uri, size, skip_only).await;
            assert_eq!(
                &ids, expected,
                "{shape}, pages of {size}, copying only $skip"
            );
        }
    }
}
