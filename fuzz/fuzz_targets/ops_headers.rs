//! The two headers an operator's tooling sends that Gatehouse reads: an
//! `X-Request-Id` (kept only when it is 1–64 characters of
//! `[A-Za-z0-9._-]`, else replaced, never echoed) and a scraper's `Accept`
//! (which exposition format `/metrics` answers in). Any text must give an
//! id that fits and a format, without panicking.
#![no_main]

use gatehouse::metrics::Format;
use gatehouse::ops::request_id::{RequestId, MAX_CHARS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let id = RequestId::kept_or_new(Some(text));
    let kept = id.as_str();
    if kept == text {
        assert!(!kept.is_empty() && kept.len() <= MAX_CHARS);
        assert!(kept
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
    } else {
        // Replaced by a new id, nothing of what was sent.
        assert!(uuid::Uuid::parse_str(kept).is_ok(), "{kept}");
    }
    let _ = Format::asked(Some(text)).content_type();
});
