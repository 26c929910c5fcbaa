use super::*;
use crate::odata::parse_query;

fn resolve(prefer: Option<&str>, max: Option<u64>) -> (u64, Option<String>) {
    let page = Page::from_prefer(prefer, DEFAULT_PAGE_SIZE, max);
    (page.rows(), page.preference_applied())
}

#[test]
fn default_applies_without_preference() {
    assert_eq!(resolve(None, None), (200, None));
    assert_eq!(resolve(Some("return=minimal"), None), (200, None));
    assert_eq!(resolve(Some(""), None), (200, None));
}

#[test]
fn default_is_clamped_to_max() {
    assert_eq!(resolve(None, Some(50)), (50, None));
    assert_eq!(resolve(None, Some(500)), (200, None));
}

#[test]
fn both_spellings_are_honoured_case_insensitively() {
    let applied = |n: u64| Some(format!("odata.maxpagesize={n}"));
    assert_eq!(resolve(Some("odata.maxpagesize=7"), None), (7, applied(7)));
    assert_eq!(resolve(Some("maxpagesize=8"), None), (8, applied(8)));
    assert_eq!(resolve(Some("OData.MaxPageSize=9"), None), (9, applied(9)));
    assert_eq!(resolve(Some("MAXPAGESIZE = 10"), None), (10, applied(10)));
    assert_eq!(resolve(Some("maxpagesize=\"11\""), None), (11, applied(11)));
}

#[test]
fn preference_above_default_is_granted_unless_max_is_lower() {
    let applied = |n: u64| Some(format!("odata.maxpagesize={n}"));
    assert_eq!(resolve(Some("maxpagesize=500"), None), (500, applied(500)));
    assert_eq!(
        resolve(Some("maxpagesize=500"), Some(300)),
        (300, applied(300))
    );
    assert_eq!(resolve(Some("maxpagesize=5"), Some(300)), (5, applied(5)));
}

#[test]
fn preference_is_found_among_others() {
    let (size, applied) = resolve(
        Some("return=representation, odata.maxpagesize=25; foo=bar, respond-async"),
        None,
    );
    assert_eq!(size, 25);
    assert_eq!(applied.as_deref(), Some("odata.maxpagesize=25"));
}

#[test]
fn invalid_values_are_ignored() {
    for bad in [
        "maxpagesize=",
        "maxpagesize=-3",
        "maxpagesize=0",
        "maxpagesize=abc",
        "maxpagesize=1.5",
        "maxpagesize=+4",
        "maxpagesize=99999999999999999999999",
        "maxpagesize",
        "xmaxpagesize=4",
    ] {
        assert_eq!(resolve(Some(bad), None), (200, None), "{bad}");
    }
    // The first valid one wins.
    assert_eq!(resolve(Some("maxpagesize=x, maxpagesize=4"), None).0, 4);
    assert_eq!(resolve(Some("maxpagesize=3, maxpagesize=4"), None).0, 3);
}

#[test]
fn size_is_never_zero() {
    assert_eq!(Page::from_prefer(None, 0, None).rows(), 1);
    assert_eq!(Page::from_prefer(None, 10, Some(0)).rows(), 1);
}

/// The page `qs` asks for under page size `size`: (offset, rows).
fn cut(qs: &str, size: u64) -> (u64, u64) {
    let page = Page::from_prefer(None, size, None).of(&parse_query(qs).unwrap());
    (page.offset(), page.rows())
}

#[test]
fn a_page_uses_skip_and_remaining_top() {
    assert_eq!(cut("", 200), (0, 200));
    assert_eq!(cut("$top=10", 200), (0, 10));
    assert_eq!(cut("$top=500", 200), (0, 200));
    assert_eq!(cut("$skip=30", 200), (30, 200));
    assert_eq!(cut("$top=10&$skip=20", 200), (20, 10));
    assert_eq!(cut("$top=0", 200), (0, 0));
}

#[test]
fn a_page_of_n_rows_asks_for_n_plus_one() {
    let request = Page::from_prefer(Some("maxpagesize=5"), 200, None);
    assert_eq!(request.limit(), 6);
    // The top level and an expanded collection are cut alike.
    let top = parse_query("$top=3&$expand=posts($top=2;$skip=4)").unwrap();
    assert_eq!(request.of(&top).limit(), 4);
    let nested = &top.expand[0].options;
    assert_eq!(
        (request.of(nested).offset(), request.of(nested).limit()),
        (4, 3)
    );
    assert_eq!(request.of(&parse_query("$top=50").unwrap()).limit(), 6);
    assert_eq!(Page::first(1).limit(), 2);
    assert_eq!(Page::first(0).limit(), 1);
}

#[test]
fn cutting_what_was_fetched_tells_whether_the_probe_row_came() {
    let page = Page::first(3);
    let mut fetched = vec![1, 2, 3, 4];
    assert!(page.cut(&mut fetched));
    assert_eq!(fetched, [1, 2, 3]);
    assert!(!page.cut(&mut fetched));
    let mut short = vec![1];
    assert!(!page.cut(&mut short));
    assert_eq!(short, [1]);
}

#[test]
fn a_page_that_is_not_the_clients_to_size_applies_no_preference() {
    let request = Page::from_prefer(Some("maxpagesize=7"), 200, None);
    assert_eq!(
        request
            .of(&Query::default())
            .preference_applied()
            .as_deref(),
        Some("odata.maxpagesize=7")
    );
    assert_eq!(Page::first(1).preference_applied(), None);
}

fn link(qs: &str, delivered: u64, more: bool) -> Option<String> {
    let query = parse_query(qs).unwrap();
    let page = Page::from_prefer(None, DEFAULT_PAGE_SIZE, None).of(&query);
    page.next_link(
        "https://example.test/",
        "Users",
        &query,
        delivered,
        more,
        None,
    )
}

#[test]
fn next_link_is_absolute_and_sets_skip() {
    assert_eq!(
        link("", 200, true).as_deref(),
        Some("https://example.test/odata/Users?$skip=200")
    );
}

#[test]
fn next_link_keeps_every_option_and_extra_parameters() {
    let got = link(
        "$filter=name eq 'A%26B'&$orderby=age desc,id&$select=name,age&$search=foo&$expand=posts&$count=true&lang=en",
        2,
        true,
    )
    .unwrap();
    assert_eq!(
        got,
        "https://example.test/odata/Users?$filter=name%20eq%20'A%26B'&$search=foo\
         &$select=name,age&$expand=posts&$orderby=age%20desc,id&$skip=2&$count=true&lang=en"
    );
    // The link parses back to the same query, moved on by one page.
    let query = got.split_once('?').unwrap().1;
    let mut expected = parse_query(
        "$filter=name eq 'A%26B'&$orderby=age desc,id&$select=name,age&$search=foo&$expand=posts&$count=true&lang=en",
    )
    .unwrap();
    expected.skip = Some(2);
    assert_eq!(parse_query(query).unwrap(), expected);
}

#[test]
fn next_link_lowers_top_and_advances_skip() {
    assert_eq!(
        link("$top=10&$skip=20", 4, true).as_deref(),
        Some("https://example.test/odata/Users?$top=6&$skip=24")
    );
}

#[test]
fn no_next_link_on_last_page() {
    assert_eq!(link("", 200, false), None);
    assert_eq!(link("$filter=age gt 1", 7, false), None);
    // $top exhausted, even though the collection has more rows.
    assert_eq!(link("$top=10", 10, true), None);
    assert_eq!(link("$top=3&$skip=5", 3, true), None);
    // Nothing delivered: no link that would loop.
    assert_eq!(link("", 0, true), None);
}

#[test]
fn skip_alone_pages_from_the_offset() {
    let q = parse_query("$skip=50").unwrap();
    let page = Page::from_prefer(None, 20, None).of(&q);
    assert_eq!((page.offset(), page.rows()), (50, 20));
    assert_eq!(
        page.next_link("http://h", "Users", &q, page.rows(), true, None)
            .as_deref(),
        Some("http://h/odata/Users?$skip=70")
    );
}

#[test]
fn next_link_follows_navigation_paths_and_base_prefixes() {
    let q = parse_query("$top=5").unwrap();
    let page = Page::from_prefer(None, 2, None).of(&q);
    assert_eq!(
        page.next_link("http://h/app/", "/Users(3)/posts", &q, 2, true, None)
            .as_deref(),
        Some("http://h/app/odata/Users(3)/posts?$top=3&$skip=2")
    );
}
