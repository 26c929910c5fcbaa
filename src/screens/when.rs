//! Times on the screens, for a person: in the reader's language ("26 Nov
//! 2026, 04:14" / "26.11.2026, 04:14", month names from chrono's locale
//! data), in UTC marked as such (the screens' script rewrites them in the
//! browser's own zone), and relative for the last day ("5 minutes ago" /
//! "vor 5 Minuten").

use chrono::{DateTime, Locale, Utc};
use serde_json::{json, Value};

use crate::i18n::{Catalog, Language};

/// Seconds in the day shown relative to now.
const DAY: i64 = 24 * 3600;

/// The pattern and locale of a date with its time, per language.
fn pattern(language: Language) -> (&'static str, Locale) {
    match language {
        Language::En => ("%-d %b %Y, %H:%M", Locale::en_GB),
        Language::De => ("%d.%m.%Y, %H:%M", Locale::de_DE),
    }
}

/// The RFC 3339 instant `at` as the screens show it, `now` being Unix
/// seconds: `{"iso", "text"}` (the date and time in UTC, marked), with
/// `"relative"` when it lies within the last day. `null` for no instant.
pub fn when(catalog: &Catalog, language: Language, at: Option<&str>, now: i64) -> Value {
    let Some(instant) = at.and_then(|at| DateTime::parse_from_rfc3339(at).ok()) else {
        return Value::Null;
    };
    let instant = instant.with_timezone(&Utc);
    let (format, locale) = pattern(language);
    let utc = catalog.text(language, "common-utc", &[]);
    let text = format!("{} {utc}", instant.format_localized(format, locale));
    let age = now - instant.timestamp();
    let relative = (-60..DAY).contains(&age).then(|| ago(catalog, language, age.max(0)));
    json!({"iso": instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), "text": text, "relative": relative})
}

/// "just now", "1 minute ago", "5 hours ago", in `language`.
fn ago(catalog: &Catalog, language: Language, seconds: i64) -> String {
    let (one, many, n) = match seconds {
        ..60 => return catalog.text(language, "common-just_now", &[]),
        60..3600 => ("common-minute_ago", "common-minutes_ago", seconds / 60),
        _ => ("common-hour_ago", "common-hours_ago", seconds / 3600),
    };
    let id = if n == 1 { one } else { many };
    catalog.text(language, id, &[("n", &n.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::load(|_| std::iter::empty()).expect("catalog")
    }

    /// 2026-11-26T04:14:41Z.
    const AT: &str = "2026-11-26T04:14:41Z";
    const AT_UNIX: i64 = 1_795_666_481;

    #[test]
    fn a_time_reads_in_the_readers_language_in_utc() {
        let c = catalog();
        let later = AT_UNIX + 2 * DAY;
        let en = when(&c, Language::En, Some(AT), later);
        assert_eq!(en["text"], "26 Nov 2026, 04:14 UTC");
        assert_eq!(en["iso"], AT);
        assert_eq!(en["relative"], Value::Null);
        let de = when(&c, Language::De, Some(AT), later);
        assert_eq!(de["text"], "26.11.2026, 04:14 UTC");
        let march = when(&c, Language::En, Some("2026-03-05T21:07:00+00:00"), later);
        assert_eq!(march["text"], "5 Mar 2026, 21:07 UTC");
        assert_eq!(when(&c, Language::En, None, later), Value::Null);
        assert_eq!(when(&c, Language::En, Some("yesterday"), later), Value::Null);
    }

    #[test]
    fn the_last_day_reads_relative() {
        let c = catalog();
        let cases = [
            (10, "just now", "gerade eben"),
            (60, "1 minute ago", "vor 1 Minute"),
            (5 * 60 + 20, "5 minutes ago", "vor 5 Minuten"),
            (3600, "1 hour ago", "vor 1 Stunde"),
            (23 * 3600, "23 hours ago", "vor 23 Stunden"),
        ];
        for (age, en, de) in cases {
            let now = AT_UNIX + age;
            assert_eq!(when(&c, Language::En, Some(AT), now)["relative"], en, "{age}");
            assert_eq!(when(&c, Language::De, Some(AT), now)["relative"], de, "{age}");
        }
        let day = when(&c, Language::En, Some(AT), AT_UNIX + DAY);
        assert_eq!(day["relative"], Value::Null, "a day ago reads as a date");
    }
}
