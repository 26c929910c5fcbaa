//! The two ways a scrape is written, chosen by the scraper's `Accept`.

use prometheus_client::encoding::prometheus_text;

/// How a scrape is written: Prometheus text (version 0.0.4), or
/// OpenMetrics text (1.0.0) to a scraper whose `Accept` asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// The format an `Accept` header asks for: OpenMetrics when it names
    /// `application/openmetrics-text` without refusing it (`q=0`).
    pub fn asked(accept: Option<&str>) -> Format {
        let open = accept.unwrap_or_default().split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let named = parts
                .next()
                .is_some_and(|m| m.eq_ignore_ascii_case("application/openmetrics-text"));
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            named && !refused
        });
        match open {
            true => Format::OpenMetrics,
            false => Format::Prometheus,
        }
    }

    /// The `Content-Type` of a page in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => prometheus_text::CONTENT_TYPE,
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}
