use super::*;
use crate::odata::query::syntax::Guid;
use time::macros::{date, datetime, time};

fn parse(s: &str) -> Expr {
    parse_filter(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn err(s: &str) -> ParseError {
    parse_filter(s).expect_err(s)
}

fn path(p: &str) -> Expr {
    Expr::Path(Path(p.split('/').map(str::to_owned).collect()))
}

fn int(i: i64) -> Expr {
    Expr::Literal(Literal::Int(i))
}

fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
    }
}

fn lit(s: &str) -> Literal {
    match parse(s) {
        Expr::Literal(l) => l,
        other => panic!("{s} is not a literal: {other:?}"),
    }
}

#[test]
fn every_literal_kind() {
    assert_eq!(lit("null"), Literal::Null);
    assert_eq!(lit("true"), Literal::Boolean(true));
    assert_eq!(lit("false"), Literal::Boolean(false));
    assert_eq!(lit("42"), Literal::Int(42));
    assert_eq!(lit("-42"), Literal::Int(-42));
    assert_eq!(lit("3.14"), Literal::Decimal("3.14".into()));
    assert_eq!(lit("6.02e23"), Literal::Double(6.02e23));
    assert_eq!(lit("'it''s'"), Literal::String("it's".into()));
    assert_eq!(lit("2024-05-01"), Literal::Date(date!(2024 - 05 - 01)));
    assert_eq!(
        lit("2024-05-01T10:00:00Z"),
        Literal::DateTimeOffset(datetime!(2024-05-01 10:00 UTC))
    );
    assert_eq!(
        lit("2024-05-01T10:00:00.250+05:30"),
        Literal::DateTimeOffset(datetime!(2024-05-01 10:00:00.25 +05:30))
    );
    assert_eq!(lit("07:15:30"), Literal::TimeOfDay(time!(07:15:30)));
    assert_eq!(
        lit("00000000-0000-0000-0000-00000000002a"),
        Literal::Guid(Guid(42))
    );
}

#[test]
fn comparison_and_logic() {
    assert_eq!(
        parse("a eq 1 or b ne 2 and c gt 3"),
        bin(
            BinaryOp::Or,
            bin(BinaryOp::Eq, path("a"), int(1)),
            bin(
                BinaryOp::And,
                bin(BinaryOp::Ne, path("b"), int(2)),
                bin(BinaryOp::Gt, path("c"), int(3))
            )
        )
    );
    for op in [
        "eq", "ne", "gt", "ge", "lt", "le", "and", "or", "add", "sub", "mul", "div", "divby", "mod",
    ] {
        let e = parse(&format!("x {op} 1"));
        let Expr::Binary { op: got, .. } = e else {
            panic!("{op}")
        };
        assert_eq!(got.keyword(), op);
    }
}

#[test]
fn precedence_follows_part_2() {
    let cases = [
        ("a add b mul c", "a add b mul c", "add(a, mul(b, c))"),
        ("a sub b sub c", "a sub b sub c", "left-assoc"),
        ("a sub (b sub c)", "a sub (b sub c)", "right grouping kept"),
        ("a mul (b add c)", "a mul (b add c)", "grouping"),
        ("a add b gt c", "a add b gt c", "additive over relational"),
        (
            "a gt b eq c lt d",
            "a gt b eq c lt d",
            "relational over equality",
        ),
        (
            "a eq b and c eq d or e",
            "a eq b and c eq d or e",
            "and over or",
        ),
        ("a or b and c", "a or b and c", "and binds tighter"),
        ("(a or b) and c", "(a or b) and c", "grouping"),
        ("not a eq b", "not a eq b", "not binds tighter than eq"),
        ("not (a eq b)", "not (a eq b)", "grouped not"),
        ("-a mul b", "-a mul b", "negation binds tighter"),
        ("-(a mul b)", "-(a mul b)", "grouped negation"),
        (
            "a in (1,2) eq true",
            "a in (1,2) eq true",
            "in is relational",
        ),
        (
            "a add 1 in (2, 3)",
            "a add 1 in (2,3)",
            "additive inside in",
        ),
        ("((a))", "a", "redundant parentheses vanish"),
        ("a mod 2 eq 0", "a mod 2 eq 0", "mod"),
        ("a divby 2 gt 1.5", "a divby 2 gt 1.5", "divby"),
    ];
    for (input, printed, why) in cases {
        assert_eq!(parse(input).to_string(), printed, "{why}");
    }
    assert_eq!(
        parse("not a eq b"),
        bin(
            BinaryOp::Eq,
            Expr::Unary {
                op: UnaryOp::Not,
                operand: Box::new(path("a"))
            },
            path("b")
        )
    );
    assert_eq!(
        parse("a sub b sub c"),
        bin(
            BinaryOp::Sub,
            bin(BinaryOp::Sub, path("a"), path("b")),
            path("c")
        )
    );
}

#[test]
fn unary_minus_and_negative_literals() {
    assert_eq!(parse("a sub -1"), bin(BinaryOp::Sub, path("a"), int(-1)));
    let neg = |e| Expr::Unary {
        op: UnaryOp::Neg,
        operand: Box::new(e),
    };
    assert_eq!(parse("-a"), neg(path("a")));
    assert_eq!(parse("- 1"), neg(int(1)));
    assert_eq!(parse("-(1)"), neg(int(1)));
    assert_eq!(parse("--a"), neg(neg(path("a"))));
    assert_eq!(parse("not(a)"), parse("not a"));
}

#[test]
fn paths_and_navigation() {
    assert_eq!(parse("organisation/name"), path("organisation/name"));
    assert_eq!(parse("a/b/c eq null").to_string(), "a/b/c eq null");
    assert_eq!(err("a/ b").message, "no spaces are allowed around '/'");
    assert_eq!(err("a /b").message, "no spaces are allowed around '/'");
    assert_eq!(
        err("a/1").message,
        "expected a property name, found a literal"
    );
}

#[test]
fn in_lists() {
    assert_eq!(
        parse("name in ('a', 'b')"),
        Expr::In {
            operand: Box::new(path("name")),
            list: vec![
                Expr::Literal(Literal::String("a".into())),
                Expr::Literal(Literal::String("b".into()))
            ]
        }
    );
    assert_eq!(parse("x in(1)").to_string(), "x in (1)");
    assert_eq!(err("x in ()").message, "the list after 'in' is empty");
    assert_eq!(
        err("x in 1").message,
        "expected '(' after 'in', found a literal"
    );
    assert_eq!(
        err("x in (1,").message,
        "expected an expression, found the end"
    );
    let long = format!("x in ({})", vec!["1"; MAX_IN_LIST + 1].join(","));
    let e = err(&long);
    assert_eq!(e.message, "list is longer than 1000 items");
    let ok = format!("x in ({})", vec!["1"; MAX_IN_LIST].join(","));
    assert!(parse_filter(&ok).is_ok());
}

#[test]
fn every_function_with_its_arity() {
    let calls = [
        "contains(name,'a')",
        "startswith(name,'a')",
        "endswith(name,'a')",
        "length(name)",
        "indexof(name,'a')",
        "substring(name,1)",
        "substring(name,1,2)",
        "tolower(name)",
        "toupper(name)",
        "trim(name)",
        "concat(name,'a')",
        "year(d)",
        "month(d)",
        "day(d)",
        "hour(d)",
        "minute(d)",
        "second(d)",
        "date(d)",
        "time(d)",
        "now()",
        "round(n)",
        "floor(n)",
        "ceiling(n)",
    ];
    for call in calls {
        let e = parse(call);
        assert!(matches!(e, Expr::Call { .. }), "{call}");
        assert_eq!(e.to_string(), call);
    }
    for f in Function::ALL {
        let (min, max) = f.arity();
        let args = vec!["x"; max + 1].join(",");
        let e = err(&format!("{}({args})", f.name()));
        assert!(e.message.contains("argument(s)"), "{}", e.message);
        assert_eq!(e.position, 0);
        if min > 0 {
            let args = vec!["x"; min - 1].join(",");
            assert!(parse_filter(&format!("{}({args})", f.name())).is_err());
        }
    }
    assert_eq!(
        err("substring(a)").message,
        "substring() takes 2 to 3 argument(s), got 1"
    );
    assert_eq!(
        err("x eq frobnicate(1)").message,
        "unknown function 'frobnicate'"
    );
    assert_eq!(err("x eq frobnicate(1)").position, 5);
    assert_eq!(
        parse("contains(tolower(name), 'ab') and length(trim(x)) gt 2").to_string(),
        "contains(tolower(name),'ab') and length(trim(x)) gt 2"
    );
}

#[test]
fn lambdas() {
    let e = parse("members/any(m: m/age gt 30)");
    let Expr::Lambda {
        collection,
        quantifier,
        predicate: Some(p),
    } = e
    else {
        panic!("not a lambda")
    };
    assert_eq!(collection, Path(vec!["members".into()]));
    assert_eq!(quantifier, Quantifier::Any);
    assert_eq!(p.variable, "m");
    assert_eq!(*p.body, bin(BinaryOp::Gt, path("m/age"), int(30)));
    assert_eq!(
        parse("a/b/all(x:x/c eq 1)").to_string(),
        "a/b/all(x:x/c eq 1)"
    );
    assert_eq!(parse("tags/any()").to_string(), "tags/any()");
    assert_eq!(
        parse("o/any(a:a/m/all(b:b eq 1))").to_string(),
        "o/any(a:a/m/all(b:b eq 1))"
    );
    assert_eq!(
        err("tags/all()").message,
        "all() needs a variable and a predicate"
    );
    assert_eq!(
        err("tags/any(1: x)").message,
        "expected a lambda variable, found a literal"
    );
    assert_eq!(
        err("tags/any(x x)").message,
        "expected ':' after the lambda variable, found 'x'"
    );
    assert_eq!(
        err("tags/any(x: x eq 1").message,
        "expected ')', found the end"
    );
}

#[test]
fn operators_need_surrounding_spaces() {
    let e = err("a eq(1)");
    assert_eq!(
        (e.position, e.message.as_str()),
        (4, "'eq' must be followed by a space")
    );
    let e = err("(a)eq 1");
    assert_eq!(
        (e.position, e.message.as_str()),
        (3, "'eq' must be preceded by a space")
    );
    let e = err("a eq1");
    assert_eq!(
        (e.position, e.message.as_str()),
        (2, "expected an operator, found 'eq1'")
    );
}

#[test]
fn keywords_are_case_sensitive() {
    assert_eq!(err("a EQ 1").message, "expected an operator, found 'EQ'");
    assert_eq!(parse("NULL"), path("NULL"));
    assert_eq!(
        err("x eq Contains(a,'b')").message,
        "unknown function 'Contains'"
    );
}

#[test]
fn syntax_errors_are_located() {
    let cases = [
        ("", 0, "expected an expression"),
        ("a eq", 4, "expected an expression, found the end"),
        ("a eq 1 b", 7, "expected an operator, found 'b'"),
        ("(a eq 1", 7, "expected ')', found the end"),
        ("a eq 1)", 6, "expected an operator, found ')'"),
        ("a eq ,", 5, "expected an expression, found ','"),
        ("not", 3, "expected an expression after 'not'"),
        ("contains(a 'b')", 11, "expected ',' or ), found a literal"),
        ("a eq 'x' and é", 13, "unexpected character 'é'"),
        ("'é' eq 1 2", 9, "expected an operator, found a literal"),
    ];
    for (input, position, message) in cases {
        let e = err(input);
        assert_eq!(e.option, "$filter", "{input}");
        assert_eq!(
            (e.position, e.message.as_str()),
            (position, message),
            "{input}"
        );
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing() {
    for n in [65, 1000, 100_000] {
        let deep = format!("{}a{}", "(".repeat(n), ")".repeat(n));
        assert!(err(&deep).message.contains("nested too deeply"));
        let nots = "not ".repeat(n) + "a";
        assert!(err(&nots).message.contains("nested too deeply"));
        let negs = "-".repeat(n) + "a";
        assert!(err(&negs).message.contains("nested too deeply"));
        let calls = "tolower(".repeat(n) + "a" + &")".repeat(n);
        assert!(err(&calls).message.contains("nested too deeply"));
        let lambdas = "a/any(x:".repeat(n) + "x" + &")".repeat(n);
        assert!(err(&lambdas).message.contains("nested too deeply"));
    }
    let ok = format!("{}a{}", "(".repeat(30), ")".repeat(30));
    assert!(parse_filter(&ok).is_ok());
}

#[test]
fn long_chains_are_bounded_in_height() {
    let ok = vec!["a eq 1"; 200].join(" or ");
    assert!(parse_filter(&ok).is_ok());
    let long = vec!["a"; 300].join(" or ");
    assert!(err(&long).message.contains("too long to nest"));
}
