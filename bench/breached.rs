//! How long `BreachedPasswords::contains` takes with the file in the page
//! cache (the goal: under 2 µs), on a filter of generated hashes
//! (`BREACHED_BENCH_HASHES`, 1,000,000 by default) in as many shards as an
//! import of that size makes. Each iteration checks the next of 4,096
//! passwords, listed or not, so that the reads land all over the file.
//! Run it with `cargo bench --bench breached`.

use std::hint::black_box;
use std::io::{BufWriter, Write};

use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse::breached::{import, ImportOptions};
use gatehouse::BreachedPasswords;
use sha1::{Digest, Sha1};

fn contains(c: &mut Criterion) {
    let hashes: usize = std::env::var("BREACHED_BENCH_HASHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let corpus = dir.path().join("corpus.txt");
    let mut out = BufWriter::new(std::fs::File::create(&corpus).expect("the corpus"));
    for i in 0..hashes {
        let sha1 = Sha1::digest(format!("listed {i}").as_bytes());
        writeln!(out, "{}:1\r", hex::encode_upper(sha1)).expect("the corpus");
    }
    out.flush().expect("the corpus");
    drop(out);
    let filter = dir.path().join("breached.bin");
    import(&[&corpus], &filter, &ImportOptions::new(), |_| {}).expect("the import");
    let breached = BreachedPasswords::open(&filter).expect("the filter");

    let listed: Vec<String> = (0..4096)
        .map(|i| format!("listed {}", i * hashes / 4096))
        .collect();
    let unlisted: Vec<String> = (0..4096).map(|i| format!("not listed {i}")).collect();
    assert!(listed.iter().all(|p| breached.contains(p)));

    let mut group = c.benchmark_group("breached contains");
    let mut next = 0;
    group.bench_function("listed", |b| {
        b.iter(|| {
            next = (next + 1) % listed.len();
            breached.contains(black_box(&listed[next]))
        })
    });
    group.bench_function("not listed", |b| {
        b.iter(|| {
            next = (next + 1) % unlisted.len();
            breached.contains(black_box(&unlisted[next]))
        })
    });
    group.finish();
}

criterion_group!(benches, contains);
criterion_main!(benches);
