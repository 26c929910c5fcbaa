//! Feeds arbitrary batch bodies to the OData batch reader, in both formats
//! and with a content type taken from the input: it must return `Ok` or
//! `Err`, never panic, and never yield more requests than allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;

const MAX: usize = 8;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the content type; the rest is the body.
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let content_type = match pick % 4 {
        0 => "multipart/mixed; boundary=b",
        1 => "multipart/mixed; boundary=batch_1",
        2 => "application/json",
        _ => match std::str::from_utf8(body)
            .ok()
            .and_then(|s| s.split_once('\n'))
        {
            Some((content_type, _)) => content_type,
            None => return,
        },
    };
    if let Ok(batch) = gatehouse::odata::parse_batch(content_type, body, MAX) {
        assert!(batch.requests.len() <= MAX);
    }
});
