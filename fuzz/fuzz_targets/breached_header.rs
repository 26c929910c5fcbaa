//! Opens arbitrary bytes as a breached-password filter file: the header and
//! shard table checks must refuse anything a query could not read safely,
//! so that whatever opens answers queries and a verify without panicking.
#![no_main]

use gatehouse::auth::breached::filter::{AlignedBytes, FilterView};
use gatehouse::auth::breached::format::{seal, table_end, HEADER_LEN, MAX_SHARD_BITS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Random bytes would stop at the checksum: give the table a right one,
    // so that the checks behind it are what is fuzzed.
    let mut file = data.to_vec();
    if file.len() >= HEADER_LEN && u32::from(file[13]) <= MAX_SHARD_BITS {
        let end = table_end(u32::from(file[13])) as usize;
        if end <= file.len() {
            seal(&mut file[..end]);
        }
    }
    let Ok(view) = FilterView::new(AlignedBytes::copy_of(&file)) else {
        return;
    };
    let _ = view.verify();
    for seed in 0..64u8 {
        let mut sha1 = [seed; 20];
        sha1[0] = seed.wrapping_mul(37);
        let _ = view.contains_sha1(&sha1);
    }
});
