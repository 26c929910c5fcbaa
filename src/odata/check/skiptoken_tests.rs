use super::*;
use crate::odata::parse_query;

fn tokens() -> SkipTokens {
    SkipTokens::derive(b"a key of the application, long enough")
}

const TYPES: [EdmType; 3] = [EdmType::Decimal, EdmType::String, EdmType::Int64];

fn values() -> Vec<Literal> {
    vec![
        Literal::Decimal("12.34".into()),
        Literal::Null,
        Literal::Int(77),
    ]
}

fn binding(query: &str) -> String {
    SkipTokens::binding("Items", &parse_query(query).expect("parses"))
}

#[test]
fn a_token_opens_to_its_values_under_its_binding() {
    let b = binding("$filter=price gt 1&$orderby=price desc,name");
    let token = tokens().seal(&b, &values(), &TYPES).expect("seals");
    assert!(token
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)));
    assert_eq!(tokens().open(&b, &token, &TYPES), Ok(values()));
}

#[test]
fn select_top_count_and_expand_are_outside_the_binding() {
    let a = binding("$orderby=price&$select=id&$top=5&$count=true&$expand=cat");
    assert_eq!(a, binding("$orderby=price"));
    assert_ne!(a, binding("$orderby=price desc"));
    assert_ne!(a, binding("$orderby=price&$filter=id gt 1"));
    assert_ne!(a, binding("$orderby=price&$search=x"));
    assert_ne!(
        a,
        SkipTokens::binding("Other", &parse_query("$orderby=price").expect("parses"))
    );
}

#[test]
fn an_altered_foreign_or_malformed_token_is_refused_naming_the_option() {
    let b = binding("$orderby=price desc,name");
    let token = tokens().seal(&b, &values(), &TYPES).expect("seals");
    let (payload, tag) = token.split_once('.').expect("two parts");
    let other_payload = URL_SAFE_NO_PAD.encode(br#"["99.99",null,77]"#);
    let refused = [
        format!("{other_payload}.{tag}"),
        format!("{payload}.{}", &tag[1..]),
        format!("{payload}.A{}", &tag[1..]),
        payload.to_owned(),
        String::new(),
        "!!.!!".to_owned(),
    ];
    for bad in &refused {
        let e = tokens().open(&b, bad, &TYPES).expect_err(bad);
        assert_eq!(
            (e.code, e.target.as_str()),
            ("invalid_skiptoken", "$skiptoken")
        );
    }
    let e = tokens()
        .open(&binding("$orderby=price"), &token, &TYPES)
        .expect_err("another query");
    assert!(e.message.contains("another query"), "{}", e.message);
    let e = SkipTokens::derive(b"another application's key")
        .open(&b, &token, &TYPES)
        .expect_err("another key");
    assert_eq!(e.target, "$skiptoken");
}

#[test]
fn a_signed_token_of_the_wrong_shape_is_malformed() {
    let b = binding("$orderby=price");
    let t = tokens();
    let token = t
        .seal(&b, &[Literal::Int(1)], &[EdmType::Int32])
        .expect("seals");
    let e = t.open(&b, &token, &TYPES).expect_err("three values wanted");
    assert!(e.message.contains("malformed"), "{}", e.message);
    let token = t
        .seal(&b, &[Literal::String("x".into())], &[EdmType::String])
        .expect("seals");
    assert!(t.open(&b, &token, &[EdmType::Int32]).is_err());
}

#[test]
fn every_orderable_type_round_trips() {
    let b = binding("");
    let cases = [
        (Literal::Int(-5), EdmType::Int16),
        (Literal::Boolean(true), EdmType::Boolean),
        (Literal::Decimal("-0.001".into()), EdmType::Decimal),
        (Literal::Double(0.1), EdmType::Double),
        (Literal::String("größe 'x'".into()), EdmType::String),
        (
            Literal::Guid(Guid(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef)),
            EdmType::Guid,
        ),
        (
            Literal::Date(time::macros::date!(2024 - 02 - 29)),
            EdmType::Date,
        ),
        (Literal::Null, EdmType::Date),
        (
            Literal::DateTimeOffset(time::macros::datetime!(2024-03-01 09:30:00.123456 UTC)),
            EdmType::DateTimeOffset,
        ),
        (
            Literal::DateTimeOffset(time::macros::datetime!(1999-12-31 23:59:59 UTC)),
            EdmType::DateTimeOffset,
        ),
        (Literal::String("08:30:00.500".into()), EdmType::TimeOfDay),
        (Literal::String("24:00:00".into()), EdmType::TimeOfDay),
        (
            Literal::String("-838:59:59.000000".into()),
            EdmType::TimeOfDay,
        ),
        (Literal::Null, EdmType::TimeOfDay),
    ];
    for (value, edm) in cases {
        let token = tokens()
            .seal(&b, std::slice::from_ref(&value), &[edm])
            .expect("seals");
        assert_eq!(tokens().open(&b, &token, &[edm]), Ok(vec![value]));
    }
}

#[test]
fn an_instant_keeps_its_microseconds_whatever_its_offset() {
    let b = binding("$orderby=seen");
    let at = time::macros::datetime!(2024-03-01 10:30:00.000001 +01:00);
    let token = tokens()
        .seal(
            &b,
            &[Literal::DateTimeOffset(at)],
            &[EdmType::DateTimeOffset],
        )
        .expect("seals");
    let Ok(values) = tokens().open(&b, &token, &[EdmType::DateTimeOffset]) else {
        panic!("opens");
    };
    let [Literal::DateTimeOffset(back)] = values.as_slice() else {
        panic!("{values:?}");
    };
    assert_eq!(*back, at);
    assert_eq!(back.offset(), time::UtcOffset::UTC);
    assert_eq!(back.microsecond(), 1);
}

#[test]
fn a_time_of_day_a_token_cannot_name_gets_no_token() {
    for text in [
        "",
        "8",
        "08:3",
        "08:30:0",
        "08:30.5",
        "08:30:00.",
        "1234:00:00",
        "now",
    ] {
        let value = Literal::String(text.to_owned());
        assert_eq!(
            tokens().seal("", &[value], &[EdmType::TimeOfDay]),
            None,
            "{text:?}"
        );
    }
    let parsed = Literal::TimeOfDay(time::macros::time!(08:30));
    assert_eq!(tokens().seal("", &[parsed], &[EdmType::TimeOfDay]), None);
}

#[test]
fn a_signed_instant_or_time_not_spelled_as_tokens_spell_them_is_malformed() {
    let b = binding("$orderby=seen");
    let t = tokens();
    let signed = |json: &str| {
        let payload = json.as_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(t.tag(&b, payload))
        )
    };
    let cases = [
        (r#"["2024-03-01 09:30:00"]"#, EdmType::DateTimeOffset),
        (r#"["2024-03-01T09:30:00+01:00"]"#, EdmType::DateTimeOffset),
        (r#"["2024-02-30T09:30:00Z"]"#, EdmType::DateTimeOffset),
        (r#"[1709285400]"#, EdmType::DateTimeOffset),
        (r#"["08:30:00x"]"#, EdmType::TimeOfDay),
        (r#"["'; DROP TABLE x"]"#, EdmType::TimeOfDay),
        (r#"[830]"#, EdmType::TimeOfDay),
    ];
    for (json, edm) in cases {
        let e = t.open(&b, &signed(json), &[edm]).expect_err(json);
        assert_eq!(
            (e.code, e.target.as_str()),
            ("invalid_skiptoken", "$skiptoken"),
            "{json}"
        );
        assert!(e.message.contains("malformed"), "{json}: {}", e.message);
    }
    let fine = signed(r#"["2024-03-01T09:30:00.25Z"]"#);
    assert!(t.open(&b, &fine, &[EdmType::DateTimeOffset]).is_ok());
}

#[test]
fn a_row_whose_token_would_be_too_long_gets_none() {
    let long = Literal::String("x".repeat(MAX_SKIPTOKEN_LENGTH));
    assert_eq!(tokens().seal("", &[long], &[EdmType::String]), None);
}
