use super::*;

fn kinds(input: &str) -> Vec<TokenKind> {
    tokenize(input, "$filter")
        .expect("tokenizes")
        .into_iter()
        .map(|t| t.kind)
        .collect()
}

fn lit(input: &str) -> Literal {
    match kinds(input).into_iter().next() {
        Some(TokenKind::Literal(l)) => l,
        other => panic!("not a literal: {other:?}"),
    }
}

fn err(input: &str) -> ParseError {
    tokenize(input, "$filter").expect_err("refused")
}

#[test]
fn punctuation_identifiers_and_spacing() {
    let tokens = tokenize("a/b eq (1,x:*)", "$filter").expect("ok");
    let got: Vec<_> = tokens.iter().map(|t| (t.start, t.space_before)).collect();
    assert_eq!(
        got,
        vec![
            (0, false),
            (1, false),
            (2, false),
            (4, true),
            (7, true),
            (8, false),
            (9, false),
            (10, false),
            (11, false),
            (12, false),
            (13, false),
            (14, false)
        ]
    );
    assert_eq!(tokens[0].kind, TokenKind::Ident("a".into()));
    assert_eq!(tokens[1].kind, TokenKind::Slash);
    assert_eq!(tokens[9].kind, TokenKind::Star);
}

#[test]
fn numbers() {
    assert_eq!(lit("42"), Literal::Int(42));
    assert_eq!(lit("-7"), Literal::Int(-7));
    assert_eq!(lit("-9223372036854775808"), Literal::Int(i64::MIN));
    assert_eq!(
        lit("9223372036854775808"),
        Literal::Decimal("9223372036854775808".into())
    );
    assert_eq!(lit("1.50"), Literal::Decimal("1.50".into()));
    assert_eq!(lit("-0.1"), Literal::Decimal("-0.1".into()));
    assert_eq!(lit("1.5e3"), Literal::Double(1500.0));
    assert_eq!(lit("2E-2"), Literal::Double(0.02));
    assert_eq!(lit("1e+2"), Literal::Double(100.0));
    assert_eq!(err("1e999").message, "number out of range");
    assert_eq!(err("12abc").message, "malformed number");
    assert_eq!(err("1.2.3").message, "malformed number");
}

#[test]
fn minus_before_a_non_digit_is_negation() {
    assert_eq!(
        kinds("-a"),
        vec![
            TokenKind::Minus,
            TokenKind::Ident("a".into()),
            TokenKind::End
        ]
    );
    assert_eq!(
        kinds("- 1"),
        vec![
            TokenKind::Minus,
            TokenKind::Literal(Literal::Int(1)),
            TokenKind::End
        ]
    );
}

#[test]
fn strings_unescape_doubled_quotes() {
    assert_eq!(lit("'O''Neil'"), Literal::String("O'Neil".into()));
    assert_eq!(lit("''"), Literal::String(String::new()));
    assert_eq!(lit("'é ü'"), Literal::String("é ü".into()));
    let e = err("x eq 'abc");
    assert_eq!(
        (e.position, e.message.as_str()),
        (5, "unterminated string literal")
    );
}

#[test]
fn dates_times_and_offsets() {
    use time::macros::{date, datetime, time};
    assert_eq!(lit("2024-02-29"), Literal::Date(date!(2024 - 02 - 29)));
    assert_eq!(lit("12:30"), Literal::TimeOfDay(time!(12:30)));
    assert_eq!(lit("23:59:59.125"), Literal::TimeOfDay(time!(23:59:59.125)));
    assert_eq!(
        lit("2024-01-02T03:04:05Z"),
        Literal::DateTimeOffset(datetime!(2024-01-02 03:04:05 UTC))
    );
    assert_eq!(
        lit("2024-01-02T03:04+02:00"),
        Literal::DateTimeOffset(datetime!(2024-01-02 03:04 +2))
    );
    assert_eq!(
        lit("2024-01-02T03:04:05.5-01:30"),
        Literal::DateTimeOffset(datetime!(2024-01-02 03:04:05.5 -01:30))
    );
    assert_eq!(err("2023-02-29").message, "invalid date: no such day");
    assert_eq!(err("2023-13-01").message, "invalid date: no such day");
    assert_eq!(err("24:00").message, "invalid time: out of range");
    assert!(err("2024-01-02T03:04:05").message.contains("offset"));
    assert!(err("2024-01-02T03:04:05 01:00").message.contains("%2B"));
    assert!(err("2024-1-02").message.starts_with("invalid date"));
}

#[test]
fn guids_win_over_identifiers_and_numbers() {
    assert_eq!(
        lit("01234567-89ab-cdef-0123-456789ABCDEF"),
        Literal::Guid(Guid(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef))
    );
    assert_eq!(
        lit("deadbeef-0000-0000-0000-000000000000"),
        Literal::Guid(Guid(0xdead_beef_u128 << 96))
    );
    assert_eq!(kinds("deadbeef")[0], TokenKind::Ident("deadbeef".into()));
}

#[test]
fn unexpected_characters_are_located() {
    let e = err("a eq #");
    assert_eq!(
        (e.position, e.message.as_str()),
        (5, "unexpected character '#'")
    );
    assert_eq!(err("a eq \"x\"").message, "unexpected character '\"'");
    assert_eq!(err("é").message, "unexpected character 'é'");
}
