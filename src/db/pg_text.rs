//! PostgreSQL's binary form of its exact, date, time and uuid types written
//! as the text PostgreSQL itself writes for them in a UTC session (what
//! `CAST(… AS TEXT)` yields there), or for an instant as RFC 3339 in UTC.
//!
//! The bulk reads take these columns in binary: PostgreSQL then sends a
//! timestamp as eight bytes instead of formatting it, which for a page of
//! instants and decimals is a quarter of the server's time per statement
//! (BENCHMARKS.md); the text is made here, on the service's side.

/// A value whose bytes are not the binary form of its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a {0} value in a form PostgreSQL does not send")]
pub struct Malformed(&'static str);

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const EPOCH_DAYS: i64 = 10_957;

/// `numeric` (digits in base 10,000 with a weight, a sign and a display
/// scale) as its text: `-1234.5600`, `0.00000001`, `NaN`, `Infinity`.
pub fn numeric(raw: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    const BAD: Malformed = Malformed("numeric");
    let word = |i: usize| -> Result<u16, Malformed> {
        raw.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or(BAD)
    };
    let count = usize::from(word(0)?);
    let weight = i64::from(word(1)? as i16);
    let (sign, scale) = (word(2)?, usize::from(word(3)?));
    if raw.len() != 8 + 2 * count {
        return Err(BAD);
    }
    let mut special = |text: &[u8]| -> Result<(), Malformed> {
        out.extend_from_slice(text);
        Ok(())
    };
    let negative = match sign {
        0x0000 => false,
        0x4000 => true,
        0xC000 => return special(b"NaN"),
        0xD000 => return special(b"Infinity"),
        0xF000 => return special(b"-Infinity"),
        _ => return Err(BAD),
    };
    // The base-10,000 digit whose weight is `w` (10,000^w).
    let digit = |w: i64| -> Result<u16, Malformed> {
        let at = weight - w;
        if (0..count as i64).contains(&at) {
            word(4 + at as usize).and_then(|d| if d < 10_000 { Ok(d) } else { Err(BAD) })
        } else {
            Ok(0)
        }
    };
    if negative {
        out.push(b'-');
    }
    if weight < 0 {
        out.push(b'0');
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(digit(weight)?).as_bytes());
        for w in (0..weight).rev() {
            out.extend_from_slice(&four_digits(digit(w)?));
        }
    }
    if scale > 0 {
        out.push(b'.');
        // Whole groups of four digits, the last cut to the scale.
        let mut left = scale;
        let mut w = -1;
        while left > 0 {
            let shown = left.min(4);
            out.extend_from_slice(&four_digits(digit(w)?)[..shown]);
            left -= shown;
            w -= 1;
        }
    }
    Ok(())
}

/// Whether `raw`, a `numeric` in binary, is a number rather than `NaN` or
/// an infinity: what [`numeric`] writes for it is then a JSON number.
pub fn is_finite_numeric(raw: &[u8]) -> bool {
    matches!(raw.get(4..6), Some([0x00 | 0x40, 0x00]))
}

/// `n` (below 10,000) as four digits, with leading zeros.
pub(super) fn four_digits(n: u16) -> [u8; 4] {
    let n = n % 10_000;
    let [a, b] = two_digits(n / 100);
    let [c, d] = two_digits(n % 100);
    [a, b, c, d]
}

/// `n` (below 100) as two digits, with a leading zero.
pub(super) fn two_digits(n: u16) -> [u8; 2] {
    [b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8]
}

/// `uuid` (its 16 bytes) as PostgreSQL writes it: lowercase hexadecimal
/// in groups of 8-4-4-4-12 digits, `0b5c3f0e-0000-4000-8000-000000000005`.
pub fn uuid(raw: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    let bytes: &[u8; 16] = raw.try_into().map_err(|_| Malformed("uuid"))?;
    for (i, group) in [0..4, 4..6, 6..8, 8..10, 10..16].into_iter().enumerate() {
        if i > 0 {
            out.push(b'-');
        }
        let at = out.len();
        out.resize(at + 2 * group.len(), 0);
        hex::encode_to_slice(&bytes[group], &mut out[at..]).map_err(|_| Malformed("uuid"))?;
    }
    Ok(())
}

/// `date` (days since 2000-01-01) as `YYYY-MM-DD`, with ` BC` before
/// year 1, or `infinity` / `-infinity`.
pub fn date(raw: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    let days = i32::from_be_bytes(raw.try_into().map_err(|_| Malformed("date"))?);
    match days {
        i32::MAX => out.extend_from_slice(b"infinity"),
        i32::MIN => out.extend_from_slice(b"-infinity"),
        days => {
            let bc = write_date(i64::from(days), out);
            if bc {
                out.extend_from_slice(b" BC");
            }
        }
    }
    Ok(())
}

/// `time` (microseconds since midnight) as `HH:MM:SS` with the fraction's
/// significant digits.
pub fn time(raw: &[u8], out: &mut Vec<u8>) -> Result<(), Malformed> {
    let micros = i64::from_be_bytes(raw.try_into().map_err(|_| Malformed("time"))?);
    if !(0..=DAY_MICROS).contains(&micros) {
        return Err(Malformed("time"));
    }
    write_time(micros, out);
    Ok(())
}

/// How an instant is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instant {
    /// `timestamp`: `2024-03-01 09:30:00`.
    Local,
    /// `timestamptz`: `2024-03-01 09:30:00+00`.
    Utc,
    /// RFC 3339 in UTC, `2024-03-01T09:30:00Z`, for years 1 to 9999;
    /// other years as [`Instant::Utc`].
    Rfc3339,
}

/// `timestamp` or `timestamptz` (microseconds since 2000-01-01 00:00 UTC)
/// written as `how` says, or `infinity` / `-infinity`.
pub fn timestamp(raw: &[u8], how: Instant, out: &mut Vec<u8>) -> Result<(), Malformed> {
    let micros = i64::from_be_bytes(raw.try_into().map_err(|_| Malformed("timestamp"))?);
    match micros {
        i64::MAX => out.extend_from_slice(b"infinity"),
        i64::MIN => out.extend_from_slice(b"-infinity"),
        micros => {
            let (days, time) = (micros.div_euclid(DAY_MICROS), micros.rem_euclid(DAY_MICROS));
            let start = out.len();
            let bc = write_date(days, out);
            let rfc3339 = how == Instant::Rfc3339 && !bc && out.len() - start == 10;
            out.push(if rfc3339 { b'T' } else { b' ' });
            write_time(time, out);
            match how {
                _ if rfc3339 => out.push(b'Z'),
                Instant::Local => {}
                Instant::Utc | Instant::Rfc3339 => out.extend_from_slice(b"+00"),
            }
            if bc {
                out.extend_from_slice(b" BC");
            }
        }
    }
    Ok(())
}

/// Writes the day `days` after 2000-01-01 as `YYYY-MM-DD` (the year of at
/// least four digits, counted back from 1 BC as PostgreSQL counts);
/// answers whether it is before year 1.
fn write_date(days: i64, out: &mut Vec<u8>) -> bool {
    let (year, month, day) = civil(days + EPOCH_DAYS);
    if let Ok(year @ 1..10_000) = u16::try_from(year) {
        let ([y0, y1, y2, y3], [m0, m1], [d0, d1]) = (
            four_digits(year),
            two_digits(month as u16),
            two_digits(day as u16),
        );
        out.extend_from_slice(&[y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1]);
        return false;
    }
    let bc = year <= 0;
    let shown = if bc { 1 - year } else { year };
    padded(out, shown.unsigned_abs(), 4);
    out.push(b'-');
    padded(out, u64::from(month), 2);
    out.push(b'-');
    padded(out, u64::from(day), 2);
    bc
}

/// `HH:MM:SS`, then `.` and the fraction without trailing zeros if any.
pub(super) fn write_time(micros: i64, out: &mut Vec<u8>) {
    let seconds = micros / 1_000_000;
    let fraction = micros % 1_000_000;
    // Hours reach 24 at most: two digits each.
    let [h, m, s] =
        [seconds / 3600, seconds / 60 % 60, seconds % 60].map(|part| two_digits(part as u16));
    out.extend_from_slice(&[h[0], h[1], b':', m[0], m[1], b':', s[0], s[1]]);
    if fraction > 0 {
        let (mut shown, mut width) = (fraction.unsigned_abs(), 6);
        while shown % 10 == 0 {
            shown /= 10;
            width -= 1;
        }
        out.push(b'.');
        padded(out, shown, width);
    }
}

/// `n` in decimal, with leading zeros to at least `width` digits.
fn padded(out: &mut Vec<u8>, n: u64, width: usize) {
    match (width, u16::try_from(n)) {
        (2, Ok(n @ 0..100)) => out.extend_from_slice(&two_digits(n)),
        (4, Ok(n @ 0..10_000)) => out.extend_from_slice(&four_digits(n)),
        _ => {
            let mut digits = itoa::Buffer::new();
            let digits = digits.format(n).as_bytes();
            out.extend(std::iter::repeat_n(
                b'0',
                width.saturating_sub(digits.len()),
            ));
            out.extend_from_slice(digits);
        }
    }
}

/// Whole 400-year eras (146,097 days each) added to a day count so that
/// every day PostgreSQL can hold (a `date` is 2^31 days either side of
/// 2000-01-01) is counted from a March 1 before it.
const ERAS: u64 = 15_000;

/// The proleptic Gregorian (year, month, day) of the day `days` after
/// 1970-01-01, for `days` within 2^31 + 10,957 either side (every date and
/// instant PostgreSQL sends): Neri and Schneider's Euclidean affine
/// functions ("Euclidean affine functions and their application to
/// calendar algorithms", 2022), which need two divisions where a
/// `div_euclid` form needs six.
fn civil(days: i64) -> (i64, u32, u32) {
    const ERA_DAYS: u64 = 146_097;
    // Days since 0000-03-01, shifted into the positive.
    let n = (days + 719_468).wrapping_add_unsigned(ERA_DAYS * ERAS) as u64;
    let n1 = 4 * n + 3;
    let century = n1 / ERA_DAYS;
    let in_century = n1 % ERA_DAYS / 4;
    let p2 = 2_939_745 * (4 * in_century + 3);
    let in_year = (p2 & 0xFFFF_FFFF) / 2_939_745 / 4;
    let n3 = 2_141 * in_year + 197_913;
    let (month, day) = (n3 >> 16, (n3 & 0xFFFF) / 2_141 + 1);
    // Days from January on belong to the next year.
    let january = in_year >= 306;
    let year = (100 * century + (p2 >> 32)) as i64 - (400 * ERAS) as i64 + i64::from(january);
    let month = if january { month - 12 } else { month };
    (year, month as u32, day as u32)
}

#[cfg(test)]
#[path = "pg_text_tests.rs"]
mod tests;
