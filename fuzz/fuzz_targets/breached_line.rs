//! Feeds arbitrary lines to the breached-password import's line parser: it
//! must return `Ok` or `Err`, never panic, and whatever it accepts must be
//! 40 hex digits and a count that print back to the same entry.
#![no_main]

use gatehouse::auth::breached::line::parse_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(entry)) = parse_line(data) {
        let printed = format!("{}:{}", hex_upper(&entry.sha1), entry.count);
        assert_eq!(parse_line(printed.as_bytes()), Ok(Some(entry)));
        let trimmed = data.strip_suffix(b"\r").unwrap_or(data);
        assert!(trimmed.len() >= 42 && trimmed[40] == b':');
    }
});

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}
