//! Column values written as OData JSON: numbers as numbers (decimals too),
//! booleans from 0/1 where the engine has none, instants as RFC 3339 UTC
//! with `Z`, whatever spelling the database stored them in.

use super::number::write_double;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

use crate::odata::{EdmType, Guid, Literal};

/// One value of a row, borrowed from the driver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// SQL null.
    Null,
    /// A boolean (engines with a boolean type).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// Writes one cell, a property of type `edm`, as a JSON value.
pub fn write_value(out: &mut Vec<u8>, cell: Cell<'_>, edm: EdmType) {
    match cell {
        Cell::Null => out.extend_from_slice(b"null"),
        Cell::Bool(b) => write_bool(out, b),
        Cell::Int(n) => write_int(out, n, edm),
        Cell::Real(x) => match edm {
            EdmType::String => write_str(out, &x.to_string()),
            _ => write_double(out, x),
        },
        Cell::Text(text) => write_text(out, text, edm),
        Cell::Blob(bytes) => write_str(out, &hex::encode(bytes)),
    }
}

/// Writes an integer, a property of type `edm`, as [`write_value`] writes
/// [`Cell::Int`].
pub fn write_int(out: &mut Vec<u8>, n: i64, edm: EdmType) {
    match edm {
        EdmType::Boolean => write_bool(out, n != 0),
        EdmType::String => write_str(out, itoa::Buffer::new().format(n)),
        _ => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
    }
}

/// Writes a value read as bytes (text, or anything else the service reads
/// as text) as [`write_value`] writes it as text when it is UTF-8, else as
/// bytes. A string of printable ASCII, the most common value, is copied in
/// one look at its bytes; everything else goes through [`write_value`].
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8], edm: EdmType) {
    match edm {
        EdmType::String if is_plain(bytes) => write_quoted(out, bytes),
        _ if write_as_is(out, bytes, edm) => {}
        _ => write_value(
            out,
            std::str::from_utf8(bytes).map_or(Cell::Blob(bytes), Cell::Text),
            edm,
        ),
    }
}

/// Writes text that is already its JSON value (a number, an instant spelled
/// as [`rfc3339`] spells it) or that [`write_utc_instant`] rewrites, looking
/// at its bytes alone; answers `false`, having written nothing, otherwise.
/// These spellings are ASCII, so the bytes need no UTF-8 check first.
fn write_as_is(out: &mut Vec<u8>, b: &[u8], edm: EdmType) -> bool {
    match edm {
        EdmType::Decimal | EdmType::Int16 | EdmType::Int32 | EdmType::Int64 | EdmType::Double
            if is_json_number(b) =>
        {
            out.extend_from_slice(b);
            true
        }
        EdmType::DateTimeOffset if is_written_as_output(b) => {
            write_quoted(out, b);
            true
        }
        EdmType::DateTimeOffset => write_utc_instant(out, b),
        _ => false,
    }
}

/// Writes `bytes`, which need no escaping, as a JSON string.
fn write_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.push(b'"');
}

/// Whether `bytes` are printable ASCII without `"` or `\`: a JSON string's
/// content as they are (and UTF-8).
fn is_plain(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |ok, &b| {
        ok & (0x20..0x80).contains(&b) & (b != b'"') & (b != b'\\')
    })
}

/// Writes a boolean as [`write_value`] writes [`Cell::Bool`].
pub fn write_bool(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

/// A JSON string with escapes.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    // Most values need no escape: copied between quotes in one piece.
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_text(out: &mut Vec<u8>, text: &str, edm: EdmType) {
    match edm {
        _ if write_as_is(out, text.as_bytes(), edm) => {}
        EdmType::Boolean => match text {
            "1" | "t" | "true" | "TRUE" => write_bool(out, true),
            "0" | "f" | "false" | "FALSE" => write_bool(out, false),
            _ => write_str(out, text),
        },
        EdmType::DateTimeOffset => match instant(text) {
            Some(t) => write_str(out, &rfc3339(t)),
            None => write_str(out, text),
        },
        EdmType::Date => write_str(out, text.get(..10).filter(|d| is_date(d)).unwrap_or(text)),
        EdmType::Guid => write_str(out, &text.to_ascii_lowercase()),
        _ => write_str(out, text),
    }
}

/// Whether a stored instant is already spelled as [`rfc3339`] writes it
/// (`YYYY-MM-DDTHH:MM:SS[.f]Z`, no trailing zero in the fraction), so it can
/// be copied as it is. Values out of range fail both ways alike: as stored.
fn is_written_as_output(b: &[u8]) -> bool {
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let fraction = &b[19..b.len() - 1];
    shape
        && match fraction.split_first() {
            None => true,
            Some((b'.', f)) => {
                !f.is_empty()
                    && f.len() <= 9
                    && f.iter().all(u8::is_ascii_digit)
                    && f.last() != Some(&b'0')
            }
            Some(_) => false,
        }
}

/// Writes an instant stored in UTC as `YYYY-MM-DD HH:MM:SS` (or with `T`),
/// with an optional fraction of up to 9 digits and no zone, `Z`, `+00` or
/// `+00:00` (PostgreSQL's and MySQL's text of their timestamps) exactly as
/// [`rfc3339`] writes what [`instant`] reads from it, without parsing it into
/// a date first. Answers `false`, having written nothing, for any other
/// spelling or an instant that does not exist.
fn write_utc_instant(out: &mut Vec<u8>, b: &[u8]) -> bool {
    if b.len() < 19 {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b' ' | b'T')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return false;
    }
    let (fraction, zone) = match b[19..].split_first() {
        Some((b'.', rest)) => {
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            (&rest[..n], &rest[n..])
        }
        _ => (&b[19..19], &b[19..]),
    };
    let utc = matches!(zone, b"" | b"Z" | b"+00" | b"+00:00");
    if !utc || (b.get(19) == Some(&b'.') && fraction.is_empty()) || fraction.len() > 9 {
        return false;
    }
    let number = |range: std::ops::Range<usize>| {
        b[range]
            .iter()
            .fold(0u16, |n, d| n * 10 + u16::from(d - b'0'))
    };
    let month = time::Month::try_from(number(5..7) as u8);
    let exists = month.is_ok_and(|m| {
        Date::from_calendar_date(i32::from(number(0..4)), m, number(8..10) as u8).is_ok()
    }) && number(11..13) < 24
        && number(14..16) < 60
        && number(17..19) < 60;
    if !exists {
        return false;
    }
    let fraction = match fraction.iter().rposition(|d| *d != b'0') {
        Some(last) => &fraction[..=last],
        None => &[],
    };
    out.reserve(24 + fraction.len());
    out.push(b'"');
    out.extend_from_slice(&b[..10]);
    out.push(b'T');
    out.extend_from_slice(&b[11..19]);
    if !fraction.is_empty() {
        out.push(b'.');
        out.extend_from_slice(fraction);
    }
    out.extend_from_slice(b"Z\"");
    true
}

fn is_date(s: &str) -> bool {
    Date::parse(s, format_description!("[year]-[month]-[day]")).is_ok()
}

/// Whether `s` is a JSON number (decimals stored as text are written bare):
/// `-`?, `0` or a digit 1-9 then digits, then `.` and digits, then `e` or
/// `E`, a sign and digits, the last two parts optional.
fn is_json_number(s: &[u8]) -> bool {
    let digits = |from: usize| from + s[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut at = usize::from(s.first() == Some(&b'-'));
    let int_end = match s.get(at) {
        Some(b'0') => at + 1,
        Some(b'1'..=b'9') => digits(at + 1),
        _ => return false,
    };
    at = int_end;
    if s.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return false;
        }
        at = end;
    }
    if matches!(s.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(s.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return false;
        }
        at = end;
    }
    at == s.len()
}

/// Reads an ISO 8601 instant as stored: `T` or space between date and time,
/// optional seconds and fraction, then `Z`, an offset (`+01`, `+01:00`,
/// `+0100`) or nothing (UTC).
pub fn instant(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    if let Ok(t) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(t);
    }
    let (date, rest) = text.split_at_checked(10)?;
    let date = Date::parse(date, format_description!("[year]-[month]-[day]")).ok()?;
    let rest = rest.strip_prefix(['T', ' ']).unwrap_or(rest);
    if rest.is_empty() {
        return Some(date.midnight().assume_utc());
    }
    let zone_at = rest
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, 'Z' | 'z' | '+' | '-'))
        .map_or(rest.len(), |(i, _)| i);
    let (clock, zone) = rest.split_at(zone_at);
    let time = time_of_day(clock.trim())?;
    let offset = offset(zone.trim())?;
    Some(PrimitiveDateTime::new(date, time).assume_offset(offset))
}

fn time_of_day(clock: &str) -> Option<Time> {
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.split(':').map(|p| p.parse::<u8>().ok());
    let (h, m) = (parts.next()??, parts.next()??);
    let s = parts.next().unwrap_or(Some(0))?;
    if parts.next().is_some() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos = format!("{fraction:0<9}").get(..9)?.parse::<u32>().ok()?;
    Time::from_hms_nano(h, m, s, nanos).ok()
}

fn offset(zone: &str) -> Option<UtcOffset> {
    if zone.is_empty() || zone.eq_ignore_ascii_case("z") {
        return Some(UtcOffset::UTC);
    }
    let sign: i8 = if zone.starts_with('-') { -1 } else { 1 };
    let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
    let (h, m) = match digits.len() {
        2 => (digits.parse::<i8>().ok()?, 0),
        4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        _ => return None,
    };
    UtcOffset::from_hms(sign * h, sign * m, 0).ok()
}

/// RFC 3339 in UTC with `Z`, fractional seconds only when present.
pub fn rfc3339(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    if t.nanosecond() != 0 {
        let fraction = format!("{:09}", t.nanosecond());
        s.push('.');
        s.push_str(fraction.trim_end_matches('0'));
    }
    s.push('Z');
    s
}

/// A cell as a key literal (integers, text, GUIDs), for restricting
/// related rows; `None` when null.
pub fn key_literal(cell: Cell<'_>, edm: EdmType) -> Option<Literal> {
    match cell {
        Cell::Null => None,
        Cell::Int(n) => Some(Literal::Int(n)),
        Cell::Bool(b) => Some(Literal::Boolean(b)),
        Cell::Real(x) => Some(Literal::Double(x)),
        Cell::Text(text) => match edm {
            EdmType::Guid => u128::from_str_radix(&text.replace('-', ""), 16)
                .ok()
                .map(|g| Literal::Guid(Guid(g))),
            _ => Some(Literal::String(text.to_owned())),
        },
        Cell::Blob(bytes) => Some(Literal::String(hex::encode(bytes))),
    }
}

/// A cell as the literal a `$skiptoken` carries for an order value of type
/// `edm` (null too); `None` for a value it does not carry.
///
/// An instant becomes the instant its text spells: PostgreSQL and MySQL
/// compare theirs to the microsecond, which the bound value keeps, and
/// SQLite orders by its normalised text, which a page reads for the token
/// and which spells the same text again. A time of day stays the text it
/// was read as, which SQLite compares as it is stored and the others
/// convert back to the same time: any other spelling of it could sort on
/// the other side of the row it names in SQLite.
pub fn order_literal(cell: Cell<'_>, edm: EdmType) -> Option<Literal> {
    use EdmType as E;
    Some(match (cell, edm) {
        (Cell::Null, _) => Literal::Null,
        (Cell::Bool(b), E::Boolean) => Literal::Boolean(b),
        (Cell::Int(n), E::Boolean) => Literal::Boolean(n != 0),
        (Cell::Int(n), E::Decimal) => Literal::Decimal(n.to_string()),
        (Cell::Int(n), E::Double) => Literal::Double(n as f64),
        (Cell::Int(n), edm) if edm.is_integer() => Literal::Int(n),
        (Cell::Real(x), E::Decimal) if x.is_finite() => {
            Literal::Decimal(ryu::Buffer::new().format_finite(x).to_owned())
        }
        (Cell::Real(x), E::Double) => Literal::Double(x),
        (Cell::Text(t), E::Decimal) => Literal::Decimal(t.to_owned()),
        (Cell::Text(t), E::Double) => Literal::Double(t.parse().ok()?),
        (Cell::Text(t), E::String) => Literal::String(t.to_owned()),
        (Cell::Text(_), E::Guid) => key_literal(cell, E::Guid)?,
        (Cell::Text(t), E::Date) => {
            Literal::Date(Date::parse(t, format_description!("[year]-[month]-[day]")).ok()?)
        }
        (Cell::Text(t), E::DateTimeOffset) => Literal::DateTimeOffset(instant(t)?),
        (Cell::Text(t), E::TimeOfDay) => Literal::String(t.to_owned()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_does() {
        for s in [
            "",
            "plain",
            "quote \" inside",
            "back\\slash",
            "tab\there",
            "nul\0",
            "\u{1f}",
            "größe ✓",
            "\u{7f}",
        ] {
            let mut ours = Vec::new();
            write_str(&mut ours, s);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn stored_instants_read_in_every_spelling() {
        let z = |s: &str| instant(s).map(rfc3339);
        assert_eq!(
            z("2024-01-02T03:04:05Z").as_deref(),
            Some("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            z("2024-01-02 03:04:05").as_deref(),
            Some("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            z("2024-01-02 03:04").as_deref(),
            Some("2024-01-02T03:04:00Z")
        );
        assert_eq!(
            z("2024-01-02T03:04:05.250+01:00").as_deref(),
            Some("2024-01-02T02:04:05.25Z")
        );
        assert_eq!(
            z("2024-01-02 03:04:05.5+00").as_deref(),
            Some("2024-01-02T03:04:05.5Z")
        );
        assert_eq!(
            z("2024-01-02 03:04:05-0130").as_deref(),
            Some("2024-01-02T04:34:05Z")
        );
        assert_eq!(z("2024-01-02").as_deref(), Some("2024-01-02T00:00:00Z"));
        assert_eq!(z("yesterday"), None);
        assert_eq!(z("2024-01-02 25:00:00"), None);
    }

    #[test]
    fn instants_already_in_output_form_are_copied_and_others_rewritten() {
        for same in ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.25Z"] {
            assert!(is_written_as_output(same.as_bytes()), "{same}");
        }
        for other in [
            "2024-01-02T03:04:05.250Z",
            "2024-01-02 03:04:05Z",
            "2024-01-02T03:04:05+00:00",
            "2024-01-02T03:04:05.Z",
            "x024-01-02T03:04:05Z",
        ] {
            assert!(!is_written_as_output(other.as_bytes()), "{other}");
            let mut out = Vec::new();
            write_text(&mut out, other, EdmType::DateTimeOffset);
            let written = String::from_utf8(out).unwrap();
            let canonical = instant(other).map(|t| format!("\"{}\"", rfc3339(t)));
            assert_eq!(
                Some(written),
                canonical.or(Some(format!("\"{other}\""))),
                "{other}"
            );
        }
    }

    #[test]
    fn utc_instants_are_written_without_parsing_as_when_parsed() {
        for text in [
            "2024-01-01 00:00:00",
            "2024-01-02T03:04:05",
            "2024-12-31 23:59:59.5",
            "2024-12-31 23:59:59.500",
            "2024-12-31 23:59:59.000",
            "2024-12-31 23:59:59.123456789",
            "2024-02-29 01:02:03+00",
            "2024-02-29 01:02:03.25+00:00",
            "2024-02-29 01:02:03Z",
            "0001-01-01 00:00:00",
        ] {
            let mut fast = Vec::new();
            assert!(write_utc_instant(&mut fast, text.as_bytes()), "{text}");
            let parsed = instant(text).map(|t| format!("\"{}\"", rfc3339(t)));
            assert_eq!(Some(String::from_utf8(fast).unwrap()), parsed, "{text}");
        }
        for text in [
            "2023-02-29 00:00:00",
            "2024-13-01 00:00:00",
            "2024-01-01 24:00:00",
            "2024-01-01 23:60:00",
            "2024-01-01 23:59:60",
            "2024-01-01 00:00:00.",
            "2024-01-01 00:00:00.1234567891",
            "2024-01-01 00:00:00+01",
            "2024-01-01 00:00:00 ",
            " 2024-01-01 00:00:00",
            "2024-01-01 00:00",
            "2024-01-01x00:00:00",
            "+2024-01-01 00:00:00",
        ] {
            let mut out = Vec::new();
            assert!(!write_utc_instant(&mut out, text.as_bytes()), "{text}");
            assert!(out.is_empty());
        }
    }

    #[test]
    fn bytes_are_written_as_their_text_or_as_bytes() {
        let types = [
            EdmType::String,
            EdmType::Decimal,
            EdmType::Int32,
            EdmType::Double,
            EdmType::Boolean,
            EdmType::DateTimeOffset,
            EdmType::Date,
            EdmType::Guid,
        ];
        let values: [&[u8]; 14] = [
            b"item-000123",
            b"",
            b"say \"hi\"",
            b"back\\slash",
            b"tab\there",
            b"\x7f",
            "gr\u{f6}\u{df}e".as_bytes(),
            b"\xff\xfe",
            b"12.50",
            b"-1e5",
            b"01",
            b"2024-01-02 03:04:05",
            b"2024-01-02T03:04:05.250Z",
            b"ABCDEF00-0000-0000-0000-000000000000",
        ];
        for edm in types {
            for bytes in values {
                let mut fast = Vec::new();
                write_bytes(&mut fast, bytes, edm);
                let mut slow = Vec::new();
                let cell = std::str::from_utf8(bytes).map_or(Cell::Blob(bytes), Cell::Text);
                write_value(&mut slow, cell, edm);
                assert_eq!(fast, slow, "{bytes:?} as {edm:?}");
            }
        }
    }

    #[test]
    fn decimals_stored_as_text_are_numbers_only_when_they_are() {
        for ok in [
            "0", "12", "-3.50", "1e5", "2.5E-3", "-0", "0.0", "10E+2", "7e0",
        ] {
            assert!(is_json_number(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "NaN", "1,5", " 1", "1 ", "--1", "1.2.3", "1e5e5",
            "1e+", "+1", "-01", "0x1", "1.e5", "Infinity",
        ] {
            assert!(!is_json_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn instants_and_times_become_what_a_token_carries() {
        let at = |text: &str| order_literal(Cell::Text(text), EdmType::DateTimeOffset);
        let micro = time::macros::datetime!(2024-03-01 09:30:00.000001 UTC);
        for text in [
            "2024-03-01 09:30:00.000001+00",
            "2024-03-01 09:30:00.000001",
            "2024-03-01T09:30:00.000001Z",
        ] {
            assert_eq!(at(text), Some(Literal::DateTimeOffset(micro)), "{text}");
        }
        for none in [
            "infinity",
            "-infinity",
            "0044-03-15 12:00:00+00 BC",
            "0000-00-00 00:00:00",
        ] {
            assert_eq!(at(none), None, "{none}");
        }
        assert_eq!(
            order_literal(Cell::Null, EdmType::DateTimeOffset),
            Some(Literal::Null)
        );
        for text in ["08:30:00", "08:30:00.500", "24:00:00", "-838:59:59.000000"] {
            assert_eq!(
                order_literal(Cell::Text(text), EdmType::TimeOfDay),
                Some(Literal::String(text.to_owned()))
            );
        }
        assert_eq!(order_literal(Cell::Int(830), EdmType::TimeOfDay), None);
    }

    /// SQLite orders instants by `strftime` of the stored text; a page reads
    /// that value for the token, and the token's instant, bound as a
    /// literal, must come out of the same `strftime` as the same text, or
    /// the row it names would land on either side of itself.
    #[test]
    fn an_instant_sqlite_orders_by_spells_the_same_value_again() {
        use crate::db::Dialect;
        let db = rusqlite::Connection::open_in_memory().expect("opens");
        let normalised = |text: &str| -> Option<String> {
            let sql = format!("SELECT {}", Dialect::Sqlite.instant_column("?1"));
            db.query_row(&sql, [text], |row| row.get(0)).expect("runs")
        };
        for stored in [
            "2024-03-01T09:30:00Z",
            "2024-03-01 09:30:00",
            "2024-03-01T10:30:00+01:00",
            "2024-03-01 09:30",
            "2024-03-01 09:30:00.000001",
            "2024-03-01 09:30:00.123456",
            "2024-03-01 09:30:00.1234999",
            "2024-03-01 09:30:00.9995",
            "2024-03-01 09:30:59.999999",
            "2024-02-29T23:59:59.999-05:30",
            "1999-12-31 23:59:59.5",
            "0001-01-01 00:00:00",
        ] {
            let read = normalised(stored).expect("an instant");
            let Some(Literal::DateTimeOffset(t)) =
                order_literal(Cell::Text(&read), EdmType::DateTimeOffset)
            else {
                panic!("{stored}: {read} is no instant");
            };
            let bound = Dialect::Sqlite.instant_text(t);
            assert_eq!(
                normalised(&bound).as_deref(),
                Some(read.as_str()),
                "{stored}"
            );
        }
    }

    #[test]
    fn text_values_follow_their_type() {
        let w = |text: &str, edm| {
            let mut out = Vec::new();
            write_text(&mut out, text, edm);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(w("12.50", EdmType::Decimal), "12.50");
        assert_eq!(w("n/a", EdmType::Decimal), "\"n/a\"");
        assert_eq!(w("t", EdmType::Boolean), "true");
        assert_eq!(w("2024-05-06 00:00:00", EdmType::Date), "\"2024-05-06\"");
        assert_eq!(w("say \"hi\"\n", EdmType::String), r#""say \"hi\"\n""#);
        assert_eq!(
            w("ABCDEF00-0000-0000-0000-000000000000", EdmType::Guid),
            "\"abcdef00-0000-0000-0000-000000000000\""
        );
    }
}
