//! Doubles written as JSON numbers: the shortest text that reads back as the
//! same double, exactly as ryu writes it, with a quick path for the common
//! case of a decimal with few fraction digits (prices, measures) stored as a
//! double.

/// Fraction digits the quick path writes at most, and `10^FRACTION_DIGITS`.
const FRACTION_DIGITS: usize = 4;
const SCALE: f64 = 10_000.0;

/// Below this magnitude a decimal with at most [`FRACTION_DIGITS`] fraction
/// digits has at most 15 significant digits, and doubles tell every such
/// decimal apart: its digits are then the shortest that read back.
const QUICK_LIMIT: f64 = 1e11;

/// Writes a double as a JSON number; infinities and NaN, which JSON lacks,
/// as the strings OData uses (`"INF"`, `"-INF"`, `"NaN"`).
pub fn write_double(out: &mut Vec<u8>, x: f64) {
    if let Some(scaled) = short_decimal(x) {
        write_scaled(out, scaled);
    } else if x.is_finite() {
        out.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    } else {
        let text: &[u8] = if x.is_nan() {
            b"\"NaN\""
        } else if x > 0.0 {
            b"\"INF\""
        } else {
            b"\"-INF\""
        };
        out.extend_from_slice(text);
    }
}

/// `x × 10^4` as an integer, when that is exact: the integer divided by
/// `10^4` (one correctly rounded division) gives `x` back, so its decimal
/// text also reads back as `x`. Zero keeps ryu's spelling (`0.0`, `-0.0`);
/// tiny values ryu writes with an exponent.
fn short_decimal(x: f64) -> Option<i64> {
    let magnitude = x.abs();
    // Also false for NaN.
    if !(0.001..QUICK_LIMIT).contains(&magnitude) {
        return None;
    }
    // Rounds half away from zero; in range, so the cast is exact.
    let scaled = (x * SCALE + 0.5f64.copysign(x)) as i64;
    (scaled as f64 / SCALE == x).then_some(scaled)
}

/// Writes `scaled / 10^4` in decimal, trailing fraction zeros dropped but one.
fn write_scaled(out: &mut Vec<u8>, scaled: i64) {
    if scaled < 0 {
        out.push(b'-');
    }
    let magnitude = scaled.unsigned_abs();
    let whole = magnitude / SCALE as u64;
    let fraction = magnitude % SCALE as u64;
    out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
    out.push(b'.');
    if fraction == 0 {
        out.push(b'0');
        return;
    }
    let mut digits = [b'0'; FRACTION_DIGITS];
    let mut rest = fraction;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    // The fraction is not zero, so some digit is not.
    let used = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
    out.extend_from_slice(&digits[..used]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(x: f64) -> String {
        let mut out = Vec::new();
        write_double(&mut out, x);
        String::from_utf8(out).unwrap()
    }

    fn ryu(x: f64) -> String {
        ryu::Buffer::new().format_finite(x).to_owned()
    }

    #[test]
    fn decimals_are_written_exactly_as_ryu_writes_them() {
        // Every cent up to 10,000, both signs, and every 1/10,000 below 2.
        for cents in 0..1_000_000i64 {
            for x in [cents as f64 / 100.0, -(cents as f64) / 100.0] {
                assert_eq!(ours(x), ryu(x), "{x:?}");
            }
        }
        for n in 0..20_000i64 {
            let x = n as f64 / 10_000.0;
            assert_eq!(ours(x), ryu(x), "{x:?}");
        }
    }

    #[test]
    fn other_doubles_are_written_exactly_as_ryu_writes_them() {
        let edges = [
            0.0,
            -0.0,
            0.001,
            0.000_999_9,
            1e-7,
            0.1 + 0.2,
            1.0 / 3.0,
            99_999_999_999.999_9,
            1e11,
            1e16,
            123_456_789.123_4,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        for x in edges {
            assert_eq!(ours(x), ryu(x), "{x:?}");
            assert_eq!(ours(-x), ryu(-x), "{:?}", -x);
        }
        // A spread of doubles of every magnitude, with many digits.
        let mut x: f64 = 1.234_567_890_123_4e-5;
        while x < 1e18 {
            for y in [x, x * 1.000_001, (x * 100.0).round() / 100.0] {
                assert_eq!(ours(y), ryu(y), "{y:?}");
            }
            x *= 1.37;
        }
    }

    #[test]
    fn short_decimals_take_the_quick_path_and_others_do_not() {
        assert_eq!(short_decimal(12.34), Some(123_400));
        assert_eq!(short_decimal(-0.37), Some(-3_700));
        assert_eq!(short_decimal(5.0), Some(50_000));
        assert_eq!(short_decimal(0.1 + 0.2), None);
        assert_eq!(short_decimal(1.0 / 3.0), None);
        assert_eq!(short_decimal(0.0), None);
        assert_eq!(short_decimal(1e11), None);
        assert_eq!(short_decimal(f64::NAN), None);
    }

    #[test]
    fn non_finite_doubles_are_odata_strings() {
        assert_eq!(ours(f64::NAN), "\"NaN\"");
        assert_eq!(ours(f64::INFINITY), "\"INF\"");
        assert_eq!(ours(f64::NEG_INFINITY), "\"-INF\"");
    }
}
