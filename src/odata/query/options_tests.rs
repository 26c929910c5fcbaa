use super::*;
use crate::odata::query::syntax::{Expr, SearchExpr, Select};

fn err(raw: &str) -> (String, usize, String) {
    let e = parse_query(raw).expect_err(raw);
    (e.option, e.position, e.message)
}

fn e(option: &str, position: usize, message: &str) -> (String, usize, String) {
    (option.to_owned(), position, message.to_owned())
}

#[test]
fn empty_query_is_the_default() {
    assert_eq!(parse_query("").expect("ok"), Query::default());
    assert_eq!(parse_query("?").expect("ok"), Query::default());
    assert_eq!(parse_query("&&").expect("ok"), Query::default());
}

#[test]
fn every_option() {
    let q = parse_query(
        "?$top=10&$skip=20&$count=true&$orderby=name,age desc,b/c asc&$filter=age gt 1\
         &$search=blue&$select=id,org/name&$expand=members&$format=json&lang=en",
    )
    .expect("parses");
    assert_eq!((q.top, q.skip, q.count), (Some(10), Some(20), true));
    let order: Vec<String> = q.orderby.iter().map(ToString::to_string).collect();
    assert_eq!(order, ["name", "age desc", "b/c"]);
    assert!(matches!(q.filter, Some(Expr::Binary { .. })));
    assert_eq!(q.search, Some(SearchExpr::Word("blue".into())));
    assert_eq!(
        q.select.as_ref().map(ToString::to_string).as_deref(),
        Some("id,org/name")
    );
    assert_eq!(q.expand.len(), 1);
    assert_eq!(q.format, Some(Format::Json));
    assert_eq!(q.extra, vec![("lang".to_owned(), "en".to_owned())]);
    assert!(!parse_query("$count=false").expect("ok").count);
    assert_eq!(
        parse_query("$select=*").expect("ok").select,
        Some(Select::All)
    );
    assert!(parse_query("$select=a,*").is_err());
    assert!(parse_query("$format=application/json").is_ok());
    assert!(parse_query("$format=application/json;odata.metadata=minimal").is_ok());
}

#[test]
fn percent_decoding_and_plus_as_space() {
    let q = parse_query("$filter=name+eq+%27a%2Bb%27&x%20y=1+2").expect("parses");
    assert_eq!(
        q.filter.map(|f| f.to_string()).as_deref(),
        Some("name eq 'a+b'")
    );
    assert_eq!(q.extra, vec![("x y".to_owned(), "1 2".to_owned())]);
    let q = parse_query("$filter=d%20eq%202024-01-01T00:00:00%2B01:00").expect("parses");
    assert_eq!(
        q.filter.map(|f| f.to_string()).as_deref(),
        Some("d eq 2024-01-01T00:00:00+01:00")
    );
    assert_eq!(
        err("$filter=%FF"),
        e("$filter", 0, "not valid UTF-8 once percent-decoded")
    );
    assert_eq!(parse_query("x=%FF").expect("lossy").extra[0].1, "\u{FFFD}");
}

#[test]
fn option_errors_name_the_option() {
    assert_eq!(
        err("$top=-1"),
        e("$top", 0, "must be a non-negative integer")
    );
    assert_eq!(
        err("$top=abc"),
        e("$top", 0, "must be a non-negative integer")
    );
    assert_eq!(err("$top="), e("$top", 0, "must be a non-negative integer"));
    assert_eq!(err("$top"), e("$top", 0, "must be a non-negative integer"));
    assert_eq!(
        err("$skip=1.5"),
        e("$skip", 0, "must be a non-negative integer")
    );
    assert_eq!(
        err("$skip=99999999999999999999"),
        e("$skip", 0, "is too large")
    );
    assert_eq!(err("$count=yes"), e("$count", 0, "must be true or false"));
    assert_eq!(err("$count=True"), e("$count", 0, "must be true or false"));
    assert_eq!(
        err("$format=xml"),
        e("$format", 0, "only json is supported")
    );
    assert_eq!(
        err("$apply=x"),
        e(
            "$apply",
            0,
            "expected a transformation such as groupby(...)"
        )
    );
    assert_eq!(err("$levels=2"), e("$levels", 0, "unknown query option"));
    assert_eq!(err("$Top=1"), e("$Top", 0, "unknown query option"));
    assert_eq!(err("$top=1&$top=1"), e("$top", 0, "repeated query option"));
    assert_eq!(
        err("$filter=a eq"),
        e("$filter", 4, "expected an expression, found the end")
    );
    assert_eq!(err("$search=(a"), e("$search", 2, "expected ')'"));
}

#[test]
fn orderby_and_select_errors() {
    assert_eq!(
        err("$orderby="),
        e("$orderby", 0, "expected a property name")
    );
    assert_eq!(
        err("$orderby=a,"),
        e("$orderby", 2, "expected a property name")
    );
    assert_eq!(
        err("$orderby=a up"),
        e("$orderby", 2, "expected ',' or the end")
    );
    assert_eq!(
        err("$orderby=a desc desc"),
        e("$orderby", 7, "expected ',' or the end")
    );
    assert_eq!(
        err("$orderby=a/ b"),
        e("$orderby", 3, "expected a property name")
    );
    assert_eq!(
        err("$orderby=length(a)"),
        e("$orderby", 6, "expected ',' or the end")
    );
    assert_eq!(
        err("$select=a,,b"),
        e("$select", 2, "expected a property name")
    );
    assert_eq!(err("$select="), e("$select", 0, "expected a property name"));
}

#[test]
fn positions_are_characters_in_the_decoded_value() {
    assert_eq!(
        err("$filter=name%20eq%20%27%C3%A9%27%20x"),
        e("$filter", 12, "expected an operator, found 'x'")
    );
}

#[test]
fn the_query_string_length_is_bounded() {
    let long = format!("x={}", "a".repeat(MAX_QUERY_LENGTH));
    let (option, _, message) = err(&long);
    assert_eq!(option, "");
    assert_eq!(message, "query string is longer than 8192 bytes");
    let fits = format!("x={}", "a".repeat(MAX_QUERY_LENGTH - PAGING_ROOM - 2));
    assert!(parse_query(&fits).is_ok());
    let no_room = format!("x={}", "a".repeat(MAX_QUERY_LENGTH - PAGING_ROOM - 1));
    assert_eq!(err(&no_room).0, "x", "no room left for a next link's $skip");
}

#[test]
fn a_search_that_prints_longer_than_the_limit_is_refused_naming_it() {
    // 3000 bytes sent; `<` prints as `%3C`, so 9000 in a next link.
    let raw = format!("$search={}&$top=5", "<".repeat(3000));
    assert_eq!(
        err(&raw),
        e(
            "$search",
            0,
            "percent-encoded as next links write it, the query string (without $top, \
             $skip and $skiptoken) is 9008 bytes; at most 7615 are allowed"
        )
    );
    let fits = format!("$search={}&$top=5", "<".repeat(2500));
    let query = parse_query(&fits).expect("7508 bytes printed fit");
    assert_eq!(parse_query(&query.to_query_string()), Ok(query));
}

#[test]
fn the_longest_printed_option_is_named() {
    let raw = format!(
        "$filter=a eq '{}'&lang={}",
        "<".repeat(2000),
        "<".repeat(900)
    );
    assert_eq!(err(&raw).0, "$filter");
    let raw = format!("$orderby={}", vec!["a desc"; 1100].join(","));
    assert_eq!(err(&raw).0, "$orderby", "`+`/` ` print as `%20`");
}

#[test]
fn printing_a_query_reparses_to_the_same_query() {
    let raw = "$filter=a%20eq%201&$search=x%20OR%20y&$select=a,b&\
               $expand=m($filter=c%20eq%20'x;y';$top=2;$expand=n($select=z))&\
               $orderby=a%20desc,b&$top=5&$skip=1&$skiptoken=WzFd.abc-_&$count=true&$format=json&k=v%26w";
    let q = parse_query(raw).expect("parses");
    let again = parse_query(&q.to_query_string()).expect("reparses");
    assert_eq!(again, q);
    assert_eq!(
        q.to_string(),
        "$filter=a eq 1&$search=x OR y&$select=a,b&$expand=m($filter=c eq 'x;y';\
         $expand=n($select=z);$top=2)&$orderby=a desc,b&$top=5&$skip=1&$skiptoken=WzFd.abc-_&$count=true&$format=json&k=v&w"
    );
}

/// Queries of about the longest length accepted whose printed form (what
/// next links carry) is longer than what was sent: characters sent raw or as
/// `+` print as `%XX`, a space between `$search` words prints as ` AND `,
/// `=` inside `$expand` prints as `%3D`, an undecodable `%zz` as `%25zz`,
/// an extra parameter's invalid UTF-8 as the replacement character.
fn outgrowing(option: &str, unit: &str) -> String {
    let prefix = format!("{option}=");
    let room = MAX_QUERY_LENGTH - prefix.len();
    let units = room / unit.len();
    format!("{prefix}{}", unit.repeat(units))
}

fn near_limit_queries() -> Vec<String> {
    let raws = vec![
        outgrowing("$search", "<"),
        outgrowing("$search", "é"),
        outgrowing("$search", "%zz"),
        format!("$search={}", vec!["<".repeat(30); 250].join("+")),
        format!("$search=\"{}\"", "\\\"".repeat(4000)),
        format!("$search={}", "a+".repeat(255)),
        format!("$filter=name eq '{}'", "<".repeat(8000)),
        format!("$filter=name+eq+'{}'", "+".repeat(8000)),
        outgrowing("$select", "a,+")
            .trim_end_matches(['+', ','])
            .to_owned(),
        outgrowing("$orderby", "a+desc,")
            .trim_end_matches(',')
            .to_owned(),
        format!("$expand=a($filter=b+eq+'{}')", "+".repeat(8000)),
        outgrowing("lang", "<"),
        // An extra parameter is decoded lossily: `%FF` becomes U+FFFD,
        // printed as `%EF%BF%BD`.
        outgrowing("lang", "%FF"),
    ];
    assert!(raws.iter().all(|r| r.len() <= MAX_QUERY_LENGTH));
    raws
}

/// What a next link for `query` carries at the longest: `$top` and `$skip`
/// as large as they can be.
fn furthest_next(query: &Query) -> Query {
    Query {
        top: Some(u64::MAX),
        skip: Some(u64::MAX),
        ..query.clone()
    }
}

#[test]
fn every_accepted_query_prints_to_a_query_string_that_parses_back() {
    for raw in near_limit_queries() {
        let start: String = raw.chars().take(40).collect();
        let Ok(query) = parse_query(&raw) else {
            continue;
        };
        let printed = query.to_query_string();
        assert_eq!(parse_query(&printed).as_ref(), Ok(&query), "{start}…");
        let next = furthest_next(&query);
        assert_eq!(parse_query(&next.to_query_string()), Ok(next), "{start}…");
    }
}

#[test]
fn near_limit_queries_that_print_longer_are_refused_up_front() {
    let refused: Vec<String> = near_limit_queries()
        .iter()
        .filter_map(|raw| parse_query(raw).err())
        .inspect(|e| assert!(e.message.contains("as next links write it"), "{e}"))
        .map(|e| e.option)
        .collect();
    assert_eq!(
        refused,
        [
            "$search", "$search", "$search", "$search", "$search", "$filter", "$filter",
            "$orderby", "$expand", "lang", "lang"
        ]
    );
}

#[test]
fn ieee754_compatible_is_read_from_any_media_type_spelling() {
    for asks in [
        "application/json;IEEE754Compatible=true",
        "application/json;odata.metadata=minimal;IEEE754Compatible=true",
        "application/json; ieee754compatible = \"TRUE\"",
        "text/plain, application/json;IEEE754Compatible=true",
    ] {
        assert!(asks_ieee754(asks), "{asks}");
    }
    for not in [
        "application/json",
        "application/json;IEEE754Compatible=false",
        "application/json;IEEE754Compatible",
    ] {
        assert!(!asks_ieee754(not), "{not}");
    }
    let q = parse_query("$format=application/json;IEEE754Compatible=true").expect("parses");
    assert_eq!(q.format, Some(Format::JsonIeee754));
    assert_eq!(parse_query(&q.to_query_string()), Ok(q));
}
