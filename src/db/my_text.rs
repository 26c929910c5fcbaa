//! MySQL's and MariaDB's dates and times, as the binary protocol sends
//! them, written as the text the server itself writes for them (what
//! `CAST(… AS CHAR)` yields): `2024-03-01`, `2024-03-01 09:30:00.120`,
//! `-838:59:59`.
//!
//! The bulk reads take these columns in binary: the server then sends a
//! few bytes per value instead of formatting each, and the service writes
//! the text (then the value's JSON) itself.

use mysql_async::consts::ColumnType;
use mysql_async::{Column, Value};

use super::pg_text::{four_digits, two_digits, write_time};

/// How a date or time column's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporal {
    /// `DATE`: `YYYY-MM-DD`.
    Date,
    /// `DATETIME` or `TIMESTAMP` with this many fractional digits.
    DateTime(u8),
    /// `TIME` with this many fractional digits.
    Time(u8),
}

impl Temporal {
    /// How `column`'s values are written; `None` for a column that is not
    /// a date or a time.
    pub fn of(column: &Column) -> Option<Temporal> {
        // Columns carry their fractional digits; an expression may carry
        // MariaDB's "not fixed" (39), shown as six.
        let digits = column.decimals().min(6);
        match column.column_type() {
            ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE => Some(Temporal::Date),
            ColumnType::MYSQL_TYPE_DATETIME
            | ColumnType::MYSQL_TYPE_DATETIME2
            | ColumnType::MYSQL_TYPE_TIMESTAMP
            | ColumnType::MYSQL_TYPE_TIMESTAMP2 => Some(Temporal::DateTime(digits)),
            ColumnType::MYSQL_TYPE_TIME | ColumnType::MYSQL_TYPE_TIME2 => {
                Some(Temporal::Time(digits))
            }
            _ => None,
        }
    }

    /// Writes `value` onto `out` as the server writes it; answers `false`,
    /// having written nothing, when `value` is not a date or a time.
    pub fn write(self, value: &Value, out: &mut Vec<u8>) -> bool {
        match (self, value) {
            (Temporal::Date, Value::Date(year, month, day, ..)) => {
                write_date(*year, *month, *day, out);
            }
            (Temporal::DateTime(digits), Value::Date(year, month, day, h, m, s, micros)) => {
                write_date(*year, *month, *day, out);
                out.push(b' ');
                write_clock(u32::from(*h), *m, *s, *micros, digits, out);
            }
            (Temporal::Time(digits), Value::Time(negative, days, h, m, s, micros)) => {
                if *negative {
                    out.push(b'-');
                }
                let hours = days.saturating_mul(24).saturating_add(u32::from(*h));
                write_clock(hours, *m, *s, *micros, digits, out);
            }
            _ => return false,
        }
        true
    }

    /// Writes a `DATETIME` or `TIMESTAMP` value that is a real instant
    /// (held in UTC) onto `out` as a JSON string in RFC 3339, `Z` and the
    /// fraction without trailing zeros: what its text becomes as an
    /// `Edm.DateTimeOffset`. Answers `false`, having written nothing, for
    /// any other value (a zero date, say), which is then written from its
    /// text.
    pub fn write_rfc3339(self, value: &Value, out: &mut Vec<u8>) -> bool {
        let (Temporal::DateTime(_), &Value::Date(year, month, day, h, m, s, micros)) =
            (self, value)
        else {
            return false;
        };
        let exists = time::Month::try_from(month)
            .is_ok_and(|month| time::Date::from_calendar_date(i32::from(year), month, day).is_ok())
            && year <= 9999
            && h < 24
            && m < 60
            && s < 60
            && micros < 1_000_000;
        if !exists {
            return false;
        }
        out.push(b'"');
        write_date(year, month, day, out);
        out.push(b'T');
        let seconds = (i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s);
        write_time(seconds * 1_000_000 + i64::from(micros), out);
        out.extend_from_slice(b"Z\"");
        true
    }
}

/// `YYYY-MM-DD`.
fn write_date(year: u16, month: u8, day: u8, out: &mut Vec<u8>) {
    let [y0, y1, y2, y3] = four_digits(year);
    let ([m0, m1], [d0, d1]) = (two_digits(month.into()), two_digits(day.into()));
    out.extend_from_slice(&[y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1]);
}

/// `HH:MM:SS` (hours of at least two digits), then `.` and the first
/// `digits` digits of the six of `micros` when `digits` is not 0.
fn write_clock(hours: u32, minutes: u8, seconds: u8, micros: u32, digits: u8, out: &mut Vec<u8>) {
    match u16::try_from(hours) {
        Ok(hours @ 0..100) => out.extend_from_slice(&two_digits(hours)),
        _ => out.extend_from_slice(itoa::Buffer::new().format(hours).as_bytes()),
    }
    let ([m0, m1], [s0, s1]) = (two_digits(minutes.into()), two_digits(seconds.into()));
    out.extend_from_slice(&[b':', m0, m1, b':', s0, s1]);
    if digits > 0 {
        let mut fraction = itoa::Buffer::new();
        let fraction = fraction.format(micros % 1_000_000 + 1_000_000).as_bytes();
        out.push(b'.');
        out.extend_from_slice(&fraction[1..=usize::from(digits)]);
    }
}

#[cfg(test)]
mod tests {
    use super::Temporal;
    use mysql_async::Value;

    /// Each value with what MariaDB 10.11 answered for
    /// `CAST(x AS CHAR)` on a column of that type.
    #[test]
    fn dates_and_times_are_written_as_the_server_writes_them() {
        let cases = [
            (
                Temporal::Date,
                Value::Date(2024, 3, 1, 0, 0, 0, 0),
                "2024-03-01",
            ),
            (
                Temporal::Date,
                Value::Date(0, 0, 0, 0, 0, 0, 0),
                "0000-00-00",
            ),
            (
                Temporal::DateTime(0),
                Value::Date(2024, 3, 1, 9, 30, 0, 0),
                "2024-03-01 09:30:00",
            ),
            (
                Temporal::DateTime(0),
                Value::Date(0, 0, 0, 0, 0, 0, 0),
                "0000-00-00 00:00:00",
            ),
            (
                Temporal::DateTime(0),
                Value::Date(9999, 12, 31, 23, 59, 59, 0),
                "9999-12-31 23:59:59",
            ),
            (
                Temporal::DateTime(3),
                Value::Date(2024, 3, 1, 9, 30, 0, 120_000),
                "2024-03-01 09:30:00.120",
            ),
            (
                Temporal::DateTime(3),
                Value::Date(1000, 1, 1, 0, 0, 0, 0),
                "1000-01-01 00:00:00.000",
            ),
            (
                Temporal::DateTime(3),
                Value::Date(2024, 2, 29, 12, 0, 0, 999_000),
                "2024-02-29 12:00:00.999",
            ),
            (
                Temporal::DateTime(6),
                Value::Date(2024, 3, 1, 9, 30, 0, 1),
                "2024-03-01 09:30:00.000001",
            ),
            (
                Temporal::DateTime(6),
                Value::Date(1970, 1, 2, 0, 0, 0, 0),
                "1970-01-02 00:00:00.000000",
            ),
            (
                Temporal::Time(0),
                Value::Time(false, 0, 8, 30, 0, 0),
                "08:30:00",
            ),
            (
                Temporal::Time(0),
                Value::Time(false, 34, 22, 59, 59, 0),
                "838:59:59",
            ),
            (
                Temporal::Time(0),
                Value::Time(true, 34, 22, 59, 59, 0),
                "-838:59:59",
            ),
            (
                Temporal::Time(2),
                Value::Time(true, 0, 1, 2, 3, 500_000),
                "-01:02:03.50",
            ),
            (
                Temporal::Time(2),
                Value::Time(false, 0, 0, 0, 0, 0),
                "00:00:00.00",
            ),
            (
                Temporal::Time(2),
                Value::Time(false, 1, 0, 0, 0, 10_000),
                "24:00:00.01",
            ),
        ];
        for (how, value, text) in cases {
            let mut out = Vec::new();
            assert!(how.write(&value, &mut out), "{value:?}");
            assert_eq!(String::from_utf8(out).expect("ascii"), text, "{value:?}");
        }
    }

    #[test]
    fn a_value_that_is_not_a_date_or_time_is_left_unwritten() {
        let mut out = Vec::new();
        for value in [
            Value::Bytes(b"2024-03-01".to_vec()),
            Value::Int(1),
            Value::NULL,
        ] {
            assert!(!Temporal::DateTime(0).write(&value, &mut out), "{value:?}");
        }
        assert!(!Temporal::Date.write(&Value::Time(false, 0, 1, 0, 0, 0), &mut out));
        assert!(out.is_empty());
    }
}
