//! Property tests: the parsers never panic, and printing any expression then
//! parsing it gives the same expression back.

use proptest::prelude::*;
use proptest::sample::select;

use crate::odata::query::syntax::{LambdaPredicate, Quantifier};
use crate::odata::*;

const RESERVED: [&str; 22] = [
    "null", "true", "false", "not", "and", "or", "eq", "ne", "gt", "ge", "lt", "le", "add", "sub",
    "mul", "div", "divby", "mod", "in", "any", "all", "INF",
];

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,6}".prop_filter("keyword", |s| !RESERVED.contains(&s.as_str()))
}

fn path() -> impl Strategy<Value = Path> {
    prop::collection::vec(ident(), 1..4).prop_map(Path)
}

fn date() -> impl Strategy<Value = time::Date> {
    (0i32..=9999, 1u8..=12, 1u8..=28).prop_map(|(y, m, d)| {
        let month = time::Month::try_from(m).expect("1..=12 is a month");
        time::Date::from_calendar_date(y, month, d).expect("day 1..=28 exists")
    })
}

fn time_of_day() -> impl Strategy<Value = time::Time> {
    (
        0u8..24,
        0u8..60,
        0u8..60,
        prop_oneof![Just(0u32), 0u32..1_000_000_000],
    )
        .prop_map(|(h, m, s, n)| time::Time::from_hms_nano(h, m, s, n).expect("in range"))
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        Just(Literal::Null),
        any::<bool>().prop_map(Literal::Boolean),
        any::<i64>().prop_map(Literal::Int),
        "-?[0-9]{1,8}\\.[0-9]{1,8}".prop_map(Literal::Decimal),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(Literal::Double),
        any::<String>().prop_map(Literal::String),
        date().prop_map(Literal::Date),
        time_of_day().prop_map(Literal::TimeOfDay),
        (date(), time_of_day(), -1439i32..=1439).prop_map(|(d, t, minutes)| {
            let offset = time::UtcOffset::from_whole_seconds(minutes * 60).expect("in range");
            Literal::DateTimeOffset(d.with_time(t).assume_offset(offset))
        }),
        any::<u128>().prop_map(|g| Literal::Guid(Guid(g))),
    ]
}

/// Expressions up to a bounded depth, covering every node kind.
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        literal().prop_map(Expr::Literal),
        path().prop_map(Expr::Path)
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        let boxed = inner.clone().prop_map(Box::new);
        prop_oneof![
            (select(BinaryOp::ALL.to_vec()), boxed.clone(), boxed.clone())
                .prop_map(|(op, left, right)| Expr::Binary { op, left, right }),
            (select(vec![UnaryOp::Not, UnaryOp::Neg]), boxed.clone())
                .prop_map(|(op, operand)| Expr::Unary { op, operand }),
            (boxed.clone(), prop::collection::vec(inner.clone(), 1..4))
                .prop_map(|(operand, list)| Expr::In { operand, list }),
            (
                select(Function::ALL.to_vec()),
                prop::collection::vec(inner.clone(), 3),
                0usize..2
            )
                .prop_map(|(function, mut args, extra)| {
                    let (min, max) = function.arity();
                    args.truncate((min + extra).min(max));
                    Expr::Call { function, args }
                }),
            (path(), any::<bool>(), ident(), boxed).prop_map(
                |(collection, all, variable, body)| {
                    Expr::Lambda {
                        collection,
                        quantifier: if all {
                            Quantifier::All
                        } else {
                            Quantifier::Any
                        },
                        predicate: Some(LambdaPredicate { variable, body }),
                    }
                }
            ),
            path().prop_map(|collection| Expr::Lambda {
                collection,
                quantifier: Quantifier::Any,
                predicate: None,
            }),
        ]
    })
}

fn search() -> impl Strategy<Value = SearchExpr> {
    let word = "[a-zA-Z0-9_.'*-]{1,6}"
        .prop_filter("keyword", |w| !matches!(w.as_str(), "AND" | "OR" | "NOT"))
        .prop_map(SearchExpr::Word);
    let phrase = "[a-z \"\\\\]{0,5}[a-z][a-z \"\\\\]{0,5}".prop_map(SearchExpr::Phrase);
    prop_oneof![word, phrase].prop_recursive(4, 32, 2, |inner| {
        let boxed = inner.prop_map(Box::new);
        prop_oneof![
            boxed.clone().prop_map(SearchExpr::Not),
            (boxed.clone(), boxed.clone()).prop_map(|(l, r)| SearchExpr::And(l, r)),
            (boxed.clone(), boxed).prop_map(|(l, r)| SearchExpr::Or(l, r)),
        ]
    })
}

/// Pieces of a value that print longer than they may be sent: characters
/// sent raw that print as `%XX` (`é` as `%C3%A9`), `+` for a space (`%20`),
/// an undecodable `%zz` (`%25zz`), escapes kept as they are (`''`, `\"`).
const GROWING: [&str; 12] = [
    "<", "é", "+", "%zz", "{", "|", "`", "^", "#", "[", "%20", "''",
];

/// A query string of up to a little over [`MAX_QUERY_LENGTH`] bytes whose
/// `$filter`, `$search`, `$select`, `$orderby`, `$expand` or extra parameter
/// is long and mostly made of one [`GROWING`] piece, with or without `$top`
/// and `$skip`.
fn long_query() -> impl Strategy<Value = String> {
    let shapes = vec![
        ("$filter=name eq 'x", "'"),
        ("$search=\"x", "\""),
        ("$search=x", ""),
        ("$search=x+OR+y", ""),
        ("$orderby=a", ""),
        ("$select=a", ""),
        ("$expand=m($filter=b eq 'x", "')"),
        ("$expand=m($search=x", ")"),
        ("k=x", ""),
    ];
    (
        select(shapes),
        select(GROWING.to_vec()),
        1usize..MAX_QUERY_LENGTH + 100,
        prop::option::of(any::<u64>()),
        prop::option::of(any::<u64>()),
    )
        .prop_map(|((head, tail), piece, bytes, top, skip)| {
            let piece = match head {
                // Keep the list an ordering or a selection: `,a desc` and
                // `,+b` print as `,a%20desc` and `,b`.
                "$orderby=a" => ",a+desc",
                "$select=a" => ",+b",
                _ => piece,
            };
            let mut raw = format!("{head}{}{tail}", piece.repeat(bytes / piece.len()));
            for (name, value) in [("$top", top), ("$skip", skip)] {
                if let Some(value) = value {
                    raw.push_str(&format!("&{name}={value}"));
                }
            }
            raw
        })
}

/// Text made of the characters OData syntax cares about, so random inputs
/// reach deep into the parsers instead of failing on the first character.
const ODATA_ISH: &str = "[a-z0-9 ()',:/*$=&;.\"+%-]{0,80}";

fn apply_strategy() -> impl Strategy<Value = Apply> {
    let method = select(vec![
        Method::Sum,
        Method::Min,
        Method::Max,
        Method::Average,
        Method::CountDistinct,
    ]);
    let aggregate = prop_oneof![
        ident().prop_map(|alias| Aggregate {
            expr: AggregateExpr::Count,
            alias
        }),
        (path(), method, ident()).prop_map(|(path, method, alias)| Aggregate {
            expr: AggregateExpr::Method { path, method },
            alias,
        }),
    ];
    let aggregates = prop::collection::vec(aggregate, 1..3).prop_filter("distinct aliases", |a| {
        let mut aliases: Vec<&String> = a.iter().map(|x| &x.alias).collect();
        aliases.sort();
        aliases.dedup();
        aliases.len() == a.len()
    });
    let order = prop::collection::vec(
        (path(), any::<bool>()).prop_map(|(path, descending)| OrderItem { path, descending }),
        1..3,
    );
    let step = prop_oneof![
        expr().prop_map(Transformation::Filter),
        search().prop_map(Transformation::Search),
        aggregates.clone().prop_map(Transformation::Aggregate),
        (
            prop::collection::vec(path(), 1..3),
            prop::option::of(aggregates)
        )
            .prop_map(|(paths, then)| Transformation::GroupBy {
                paths,
                then: then.map(|a| Apply(vec![Transformation::Aggregate(a)])),
            }),
        order.prop_map(Transformation::OrderBy),
        any::<u64>().prop_map(Transformation::Top),
        any::<u64>().prop_map(Transformation::Skip),
        Just(Transformation::Identity),
    ];
    let sequence = prop::collection::vec(step, 1..4).prop_map(Apply);
    sequence.prop_recursive(2, 12, 3, |inner| {
        prop::collection::vec(inner, 2..4)
            .prop_map(|branches| Apply(vec![Transformation::Concat(branches)]))
    })
}

proptest! {
    #[test]
    fn printed_applies_survive_the_query_string(apply in apply_strategy()) {
        let query = Query { apply: Some(apply), ..Query::default() };
        let printed = query.to_query_string();
        prop_assert_eq!(parse_query(&printed), Ok(query), "printed: {}", printed);
    }

    #[test]
    fn printed_expressions_parse_back_to_themselves(e in expr()) {
        let printed = e.to_string();
        let parsed = parse_filter(&printed);
        prop_assert_eq!(parsed.as_ref(), Ok(&e), "printed: {}", printed);
    }

    #[test]
    fn printed_searches_parse_back_to_themselves(e in search()) {
        let printed = e.to_string();
        prop_assert_eq!(parse_search(&printed), Ok(e), "printed: {}", printed);
    }

    #[test]
    fn printed_filters_survive_the_query_string(e in expr()) {
        let query = Query { filter: Some(e), ..Query::default() };
        prop_assert_eq!(parse_query(&query.to_query_string()), Ok(query));
    }

    /// The property the fuzz target `query_parser` checks, near the length
    /// limit: whatever is accepted prints to a query string that parses back
    /// to the same query, and so does every next link written for it.
    #[test]
    fn next_links_of_long_accepted_queries_are_accepted(
        raw in long_query(),
        delivered in 1u64..=u64::MAX,
    ) {
        if let Ok(query) = parse_query(&raw) {
            let printed = query.to_query_string();
            let again = parse_query(&printed);
            prop_assert_eq!(again.as_ref(), Ok(&query), "sent: {}", raw);
            let furthest = Query {
                top: Some(u64::MAX),
                skip: Some(u64::MAX),
                skiptoken: Some("a".repeat(MAX_SKIPTOKEN_LENGTH)),
                ..query.clone()
            };
            let printed = furthest.to_query_string();
            prop_assert_eq!(parse_query(&printed), Ok(furthest), "sent: {}", raw);
            let page = Page::from_prefer(None, DEFAULT_PAGE_SIZE, None).of(&query);
            if let Some(link) = page.next_link("http://h", "Things", &query, delivered, true, None) {
                let (_, next) = link.split_once('?').expect("a next link has a query");
                let mut expected = query.clone();
                expected.skip = Some(query.skip.unwrap_or(0).saturating_add(delivered));
                expected.top = query.top.map(|top| top - delivered);
                prop_assert_eq!(parse_query(next), Ok(expected), "sent: {}", raw);
            }
        }
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(s in any::<String>()) {
        let _ = parse_query(&s);
        let _ = parse_filter(&s);
        let _ = parse_search(&s);
    }

    #[test]
    fn parsing_odata_like_text_never_panics(s in ODATA_ISH, option in select(vec![
        "$filter", "$expand", "$orderby", "$select", "$search", "$top", "$apply",
    ])) {
        let _ = parse_filter(&s);
        let _ = parse_search(&s);
        let _ = parse_query(&s);
        let _ = parse_query(&format!("{option}={s}"));
        let _ = parse_query(&format!("$expand=a({option}={s})"));
    }

    #[test]
    fn errors_point_inside_the_value(s in ODATA_ISH) {
        if let Err(e) = parse_filter(&s) {
            prop_assert!(e.position <= s.chars().count());
            prop_assert_eq!(e.option, "$filter");
        }
    }
}
