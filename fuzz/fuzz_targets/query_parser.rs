//! Feeds arbitrary query strings to the OData query parser: it must return
//! `Ok` or `Err`, never panic or overflow the stack, and whatever it accepts
//! must print to a query string that parses back to the same `Query`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(query) = gatehouse::odata::parse_query(raw) {
        let printed = query.to_query_string();
        let again = gatehouse::odata::parse_query(&printed);
        assert_eq!(again.as_ref(), Ok(&query), "printed: {printed}");
    }
});
