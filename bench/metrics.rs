//! What counting costs a request: the metrics one OData read and one
//! sign-in record (`ops.metrics = true`), against the same calls on
//! metrics that are off. A read records its HTTP answer (a counter and a
//! histogram by route), its OData answer, its rows and its statement's
//! time; a sign-in its HTTP answer, its security event, the hash's time
//! and its place in the hash queue. Each iteration records one request
//! from several threads' worth of label values already seen (the steady
//! state of a server: every label set exists after the first scrape).
//! Run it with `cargo bench --bench metrics`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse::metrics::Metrics;

/// One OData read's worth of counting.
fn read(metrics: &Metrics) {
    metrics.http("/odata/<path..>", "GET", 200, Duration::from_micros(180));
    metrics.odata("Items", "collection", 200);
    metrics.odata_rows("Items").add(black_box(50));
    metrics.statement("sqlite", "page", Duration::from_micros(120));
}

/// One sign-in's worth of counting.
fn sign_in(metrics: &Metrics) {
    metrics.hash_queue(1);
    metrics.hashed(Duration::from_millis(18));
    metrics.hash_queue(-1);
    metrics.auth_event("login", "password");
    metrics.http("/auth/login", "POST", 303, Duration::from_millis(21));
}

fn counting(c: &mut Criterion) {
    let mut group = c.benchmark_group("a request's metrics");
    for (name, metrics) in [("on", Metrics::on()), ("off", Metrics::off())] {
        read(&metrics);
        sign_in(&metrics);
        group.bench_function(format!("OData read, {name}"), |b| {
            b.iter(|| read(black_box(&metrics)))
        });
        group.bench_function(format!("sign-in, {name}"), |b| {
            b.iter(|| sign_in(black_box(&metrics)))
        });
    }
    group.finish();
}

criterion_group!(benches, counting);
criterion_main!(benches);
