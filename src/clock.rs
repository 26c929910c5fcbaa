//! Wall-clock time as Unix seconds, the unit of every stored expiry.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Unix seconds as RFC 3339 in UTC (`2026-11-24T10:00:00Z`); an instant
/// outside what RFC 3339 can write comes out as the epoch.
pub fn rfc3339(unix_seconds: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_seconds)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn unix_seconds_read_as_utc() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_521_600), "2026-11-24T12:00:00Z");
    }
}
