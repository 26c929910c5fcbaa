//! Each vector is what PostgreSQL 15 answered, in a UTC session, for
//! `encode(<type>_send(x), 'hex')` and `x::text`.

use super::{civil, date, is_finite_numeric, numeric, time, timestamp, uuid, Instant, Malformed};

/// Asserts that `write` writes each vector's bytes (in hex) as its text.
fn assert_writes(
    write: impl Fn(&[u8], &mut Vec<u8>) -> Result<(), Malformed>,
    vectors: &[(&str, &str)],
) {
    for (raw, text) in vectors {
        let mut out = Vec::new();
        write(&hex::decode(raw).expect("hex"), &mut out).expect("well formed");
        assert_eq!(String::from_utf8(out).expect("text"), *text, "{raw}");
    }
}

/// PostgreSQL's `numeric` vectors: bytes in hex and text.
const NUMERICS: &[(&str, &str)] = &[
    ("0000000000000000", "0"),
    ("0000000000000002", "0.00"),
    ("0001ffff400000011388", "-0.5"),
    ("0002000000000002000107d0", "1.20"),
    ("0002000000000002000c1388", "12.50"),
    ("0004000200000006000109291a850001", "123456789.000100"),
    ("0001fffe000000080001", "0.00000001"),
    ("000200004000000404d215e0", "-1234.5600"),
    ("0003000100000002270f270f26ac", "99999999.99"),
    ("00010001000000000001", "10000"),
    ("00010005000000000001", "100000000000000000000"),
    ("00000000c0000000", "NaN"),
    ("00000000d0000020", "Infinity"),
    ("00000000f0000020", "-Infinity"),
    ("0001ffff400000040001", "-0.0001"),
    (
        "000c00050000001500010000000000000000000004d2162e23340d801ed203e8",
        "100000000000000000000.123456789012345678901",
    ),
];

#[test]
fn numerics_are_written_as_postgresql_writes_them() {
    assert_writes(numeric, NUMERICS);
}

#[test]
fn a_numeric_is_finite_unless_it_is_nan_or_an_infinity() {
    for (raw, text) in NUMERICS {
        let special = ["NaN", "Infinity", "-Infinity"].contains(text);
        assert_eq!(
            is_finite_numeric(&hex::decode(raw).expect("hex")),
            !special,
            "{raw} {text}"
        );
    }
    assert!(!is_finite_numeric(b"\0\0"), "too short to say");
}

#[test]
fn instants_are_written_as_postgresql_writes_them_in_utc() {
    let utc = |raw: &[u8], out: &mut Vec<u8>| timestamp(raw, Instant::Utc, out);
    let local = |raw: &[u8], out: &mut Vec<u8>| timestamp(raw, Instant::Local, out);
    assert_writes(
        utc,
        &[
            ("0002b5938800e000", "2024-03-01 08:00:00+00"),
            ("0002b5a126e3d990", "2024-03-02 00:15:00.25+00"),
            ("ffffffffffffffff", "1999-12-31 23:59:59.999999+00"),
            ("0000000000000000", "2000-01-01 00:00:00+00"),
            ("ff1af9e8fb46d000", "0044-03-15 12:00:00+00 BC"),
            ("7fffffffffffffff", "infinity"),
            ("8000000000000000", "-infinity"),
            ("0380e70b912c3dc0", "9999-12-31 23:59:59+00"),
            ("0380e70b913b8000", "10000-01-01 00:00:00+00"),
            ("fffca2fec4c82001", "1970-01-01 00:00:00.000001+00"),
        ],
    );
    assert_writes(
        local,
        &[
            ("0002b594c9de5600", "2024-03-01 09:30:00"),
            ("0002b5a126e3d990", "2024-03-02 00:15:00.25"),
        ],
    );
}

#[test]
fn instants_in_rfc3339_are_utc_with_z_for_years_1_to_9999() {
    let rfc = |raw: &[u8], out: &mut Vec<u8>| timestamp(raw, Instant::Rfc3339, out);
    assert_writes(
        rfc,
        &[
            ("0002b5938800e000", "2024-03-01T08:00:00Z"),
            ("0002b5a126e3d990", "2024-03-02T00:15:00.25Z"),
            ("fffca2fec4c82001", "1970-01-01T00:00:00.000001Z"),
            ("0380e70b912c3dc0", "9999-12-31T23:59:59Z"),
            // Outside RFC 3339's years: as PostgreSQL writes it.
            ("0380e70b913b8000", "10000-01-01 00:00:00+00"),
            ("ff1af9e8fb46d000", "0044-03-15 12:00:00+00 BC"),
            ("7fffffffffffffff", "infinity"),
        ],
    );
}

#[test]
fn dates_and_times_are_written_as_postgresql_writes_them() {
    assert_writes(
        date,
        &[
            ("00001c97", "2020-01-15"),
            ("00001cc4", "2020-02-29"),
            ("00000000", "2000-01-01"),
            ("ffffffff", "1999-12-31"),
            ("fff4da8b", "0001-01-01 BC"),
            ("7fffffff", "infinity"),
            ("80000000", "-infinity"),
            ("0039a81f", "12345-06-07"),
        ],
    );
    assert_writes(
        time,
        &[
            ("000000071fe6f200", "08:30:00"),
            ("000000141dd75fff", "23:59:59.999999"),
            ("0000000000000000", "00:00:00"),
            ("000000141dd76000", "24:00:00"),
            ("0000000a4661fda0", "12:15:30.5"),
        ],
    );
}

#[test]
fn uuids_are_written_as_postgresql_writes_them() {
    assert_writes(
        uuid,
        &[
            (
                "00000000000000000000000000000000",
                "00000000-0000-0000-0000-000000000000",
            ),
            (
                "0b5c3f0e00004000800000000000000a",
                "0b5c3f0e-0000-4000-8000-00000000000a",
            ),
            (
                "ffffffffffffffffffffffffffffffff",
                "ffffffff-ffff-ffff-ffff-ffffffffffff",
            ),
            (
                "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            ),
        ],
    );
}

#[test]
fn bytes_that_are_not_the_binary_form_are_refused() {
    let mut out = Vec::new();
    for raw in [
        "",
        "0000",
        "00010000000000",
        "0001000000000000",
        "00010000000000002710",
    ] {
        assert!(
            numeric(&hex::decode(raw).expect("hex"), &mut out).is_err(),
            "{raw}"
        );
    }
    assert!(numeric(&hex::decode("00000000a0000000").expect("hex"), &mut out).is_err());
    assert!(date(&[0, 1], &mut out).is_err());
    assert!(time(&hex::decode("000000141dd76001").expect("hex"), &mut out).is_err());
    assert!(timestamp(&[0; 7], Instant::Utc, &mut out).is_err());
    assert!(uuid(&[0; 15], &mut out).is_err());
    assert!(uuid(&[0; 17], &mut out).is_err());
}

#[test]
fn every_day_from_9999_bc_to_9999_is_the_calendar_day_the_time_crate_gives() {
    // Julian day 2,440,588 is 1970-01-01.
    let first = time::Date::from_calendar_date(-9999, time::Month::January, 1).expect("date");
    let last = time::Date::from_calendar_date(9999, time::Month::December, 31).expect("date");
    for julian in first.to_julian_day()..=last.to_julian_day() {
        let expected = time::Date::from_julian_day(julian).expect("date");
        let got = civil(i64::from(julian) - 2_440_588);
        let want = (
            i64::from(expected.year()),
            u32::from(u8::from(expected.month())),
            u32::from(expected.day()),
        );
        assert_eq!(got, want, "julian day {julian}");
    }
}

#[test]
fn the_farthest_days_postgresql_holds_are_counted() {
    // PostgreSQL's last and first dates, '5874897-12-31' and
    // '4714-11-24 BC', are 2,145,031,948 days after and 2,451,545 days
    // before 2000-01-01 (`d - '2000-01-01'::date`), itself 10,957 days
    // after 1970-01-01. Year 4714 BC is year -4713 counted through year 0.
    assert_eq!(civil(2_145_031_948 + 10_957), (5_874_897, 12, 31));
    assert_eq!(civil(-2_451_545 + 10_957), (-4_713, 11, 24));
}
