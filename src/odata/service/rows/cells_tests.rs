//! A PostgreSQL value written straight as JSON is written exactly as its
//! text would be: vectors are PostgreSQL 15's binary forms (see
//! `db::pg_text`'s tests).

use super::{write_bytes, Written};
use crate::odata::EdmType;

/// What `written` writes for `raw` (hex) as a property of type `edm`
/// through its text and [`write_bytes`], and straight, when it does.
fn both(written: Written, raw: &str, edm: EdmType) -> (String, Option<String>) {
    let raw = hex::decode(raw).expect("hex");
    let mut text = Vec::new();
    written
        .write(&raw, Some(edm), &mut text)
        .expect("well formed");
    let mut through_text = Vec::new();
    write_bytes(&mut through_text, &text, edm);
    let mut straight = b"[".to_vec();
    let taken = written
        .write_json(&raw, edm, &mut straight)
        .expect("well formed");
    assert!(taken || straight == b"[", "nothing written when not taken");
    let straight = taken.then(|| String::from_utf8(straight[1..].to_vec()).expect("utf-8"));
    (String::from_utf8(through_text).expect("utf-8"), straight)
}

#[test]
fn values_written_straight_are_written_as_their_text_is() {
    use EdmType as E;
    use Written as W;
    let cases = [
        // Taken straight.
        (W::Numeric, "0002000000000002000c1388", E::Decimal, true),
        (W::Numeric, "0001ffff400000040001", E::Double, true),
        (
            W::Numeric,
            "0004000200000006000109291a850001",
            E::Int64,
            true,
        ),
        (W::Timestamp, "0002b5a126e3d990", E::DateTimeOffset, true),
        (W::TimestampTz, "fffca2fec4c82001", E::DateTimeOffset, true),
        (W::TimestampTz, "0380e70b912c3dc0", E::DateTimeOffset, true),
        (W::Date, "00001cc4", E::Date, true),
        (W::Time, "000000141dd75fff", E::TimeOfDay, true),
        (W::Time, "000000141dd76000", E::TimeOfDay, true),
        // Through their text.
        (W::Numeric, "00000000c0000000", E::Decimal, false),
        (W::Numeric, "00000000f0000020", E::Double, false),
        (W::Numeric, "0002000000000002000c1388", E::String, false),
        (W::Timestamp, "0380e70b913b8000", E::DateTimeOffset, false),
        (W::TimestampTz, "ff1af9e8fb46d000", E::DateTimeOffset, false),
        (W::TimestampTz, "7fffffffffffffff", E::DateTimeOffset, false),
        (W::Timestamp, "0002b5a126e3d990", E::String, false),
        (W::Date, "fff4da8b", E::Date, false),
        (W::Date, "0039a81f", E::Date, false),
        (W::Date, "7fffffff", E::Date, false),
        (W::Date, "00001cc4", E::String, false),
        (W::Time, "000000071fe6f200", E::String, false),
    ];
    for (written, raw, edm, straight) in cases {
        let (through_text, taken) = both(written, raw, edm);
        assert_eq!(taken.is_some(), straight, "{written:?} {raw} {edm:?}");
        if let Some(taken) = taken {
            assert_eq!(taken, through_text, "{written:?} {raw} {edm:?}");
        }
    }
}

#[test]
fn integers_are_read_from_their_binary_form_of_the_right_length() {
    use super::{pg_int, Kind};
    assert_eq!(pg_int(Kind::I16, &[0xff, 0xfe]), Some(-2));
    assert_eq!(pg_int(Kind::I32, &[0, 0, 1, 0]), Some(256));
    assert_eq!(
        pg_int(Kind::I64, &[0x80, 0, 0, 0, 0, 0, 0, 0]),
        Some(i64::MIN)
    );
    assert_eq!(
        pg_int(Kind::I32, &[0, 1]),
        None,
        "a length that is not the type's"
    );
    assert_eq!(pg_int(Kind::F64, &[0; 8]), None, "not an integer");
}

#[test]
fn bits_are_read_as_big_endian_integers() {
    use super::{bits, Cell};
    assert_eq!(bits(&[1]), Cell::Int(1));
    assert_eq!(bits(&[0]), Cell::Int(0));
    assert_eq!(bits(&[0x01, 0x00]), Cell::Int(256));
    assert_eq!(bits(&[]), Cell::Int(0));
    assert_eq!(
        bits(&[0xff; 9]),
        Cell::Blob(&[0xff; 9]),
        "wider than 64 bits"
    );
}

#[test]
fn instants_from_mysql_written_straight_are_written_as_their_text_is() {
    use crate::db::MyTemporal;
    use mysql_async::Value;
    let cases = [
        (
            MyTemporal::DateTime(0),
            Value::Date(2024, 3, 1, 9, 30, 0, 0),
            true,
        ),
        (
            MyTemporal::DateTime(3),
            Value::Date(2024, 2, 29, 23, 59, 59, 120_000),
            true,
        ),
        (
            MyTemporal::DateTime(6),
            Value::Date(1970, 1, 1, 0, 0, 0, 1),
            true,
        ),
        (
            MyTemporal::DateTime(6),
            Value::Date(9999, 12, 31, 0, 0, 0, 999_990),
            true,
        ),
        (
            MyTemporal::DateTime(3),
            Value::Date(1000, 1, 1, 0, 0, 0, 0),
            true,
        ),
        // From their text: no such day, or not an instant.
        (
            MyTemporal::DateTime(0),
            Value::Date(0, 0, 0, 0, 0, 0, 0),
            false,
        ),
        (
            MyTemporal::DateTime(0),
            Value::Date(2023, 2, 29, 0, 0, 0, 0),
            false,
        ),
        (MyTemporal::Date, Value::Date(2024, 3, 1, 0, 0, 0, 0), false),
        (
            MyTemporal::Time(0),
            Value::Time(false, 0, 8, 30, 0, 0),
            false,
        ),
    ];
    for (temporal, value, straight) in cases {
        let mut text = Vec::new();
        assert!(temporal.write(&value, &mut text), "{value:?}");
        let mut through_text = Vec::new();
        write_bytes(&mut through_text, &text, EdmType::DateTimeOffset);
        let mut out = Vec::new();
        assert_eq!(
            temporal.write_rfc3339(&value, &mut out),
            straight,
            "{value:?}"
        );
        if straight {
            assert_eq!(out, through_text, "{value:?}");
        } else {
            assert!(out.is_empty(), "{value:?}");
        }
    }
}

#[test]
fn a_quoted_number_becomes_a_string_and_nothing_else_changes() {
    use super::quote_number;
    for (written, expected) in [
        ("9007199254740993", "\"9007199254740993\""),
        ("-12.50", "\"-12.50\""),
        ("null", "null"),
        ("\"n/a\"", "\"n/a\""),
    ] {
        let mut out = b"{\"a\":".to_vec();
        let start = out.len();
        out.extend_from_slice(written.as_bytes());
        quote_number(&mut out, start);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{{\"a\":{expected}")
        );
    }
}
