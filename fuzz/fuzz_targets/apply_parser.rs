//! Feeds arbitrary `$apply` values to the OData query parser: it must return
//! `Ok` or `Err`, never panic or overflow the stack, and whatever it accepts
//! must print to a query string that parses back to the same `Query` (the
//! next links of aggregated pages keep `$apply`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let raw = format!("$apply={}", value.replace('%', "%25").replace('&', "%26"));
    if let Ok(query) = gatehouse::odata::parse_query(&raw) {
        let printed = query.to_query_string();
        let again = gatehouse::odata::parse_query(&printed);
        assert_eq!(again.as_ref(), Ok(&query), "printed: {printed}");
    }
});
