//! Prometheus metrics (`GET /metrics`): what the server did, counted as it
//! happens, and what it holds, read at each scrape. Names carry the prefix
//! `gatehouse_`; labels take bounded values only (a route's template, an
//! event's type, a set's name), never a user, an address or a key.
//!
//! One [`Metrics`] a Gatehouse instance, cloned into what it counts; with
//! `ops.metrics = false` it counts nothing and `/metrics` is 404. It
//! imports nothing of the crate: everything may count into it.

use std::sync::Arc;
use std::time::Duration;

use prometheus::core::Collector;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// The prefix of every metric.
pub const PREFIX: &str = "gatehouse";

/// Seconds an HTTP answer or a statement takes: 1 ms to 10 s.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Seconds a password hash takes: 10 ms to 5 s.
const HASH_BUCKETS: [f64; 9] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];

/// What an instance counts, cheap to clone (every clone counts into the
/// same registry); counts nothing when metrics are off.
#[derive(Clone, Default)]
pub struct Metrics(Option<Arc<Families>>);

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Metrics").field(&self.0.is_some()).finish()
    }
}

/// The registered metrics.
struct Families {
    registry: Registry,
    /// The process collector's own registry, unprefixed (`process_*`).
    process: Registry,
    http_requests: IntCounterVec,
    http_duration: HistogramVec,
    auth_events: IntCounterVec,
    throttle_refusals: IntCounterVec,
    hash_duration: Histogram,
    hash_queue: IntGauge,
    sessions_active: IntGauge,
    odata_requests: IntCounterVec,
    odata_rows: IntCounterVec,
    statement_duration: HistogramVec,
    pool_connections: IntGaugeVec,
    mail_sent: IntCounterVec,
    ready: IntGauge,
    pool_waiting: IntGauge,
    failovers: prometheus::IntCounter,
    replica_up: IntGaugeVec,
    replica_lag: prometheus::GaugeVec,
}

/// The rows of one set written, counted (nothing when metrics are off).
#[derive(Clone, Default)]
pub struct Rows(Option<prometheus::IntCounter>);

impl Rows {
    /// `n` more rows written.
    pub fn add(&self, n: u64) {
        if let Some(counter) = &self.0 {
            counter.inc_by(n);
        }
    }
}

/// What a scrape reads at the moment it asks: readiness, the sessions
/// alive, the main pool's connections and the replicas.
#[derive(Debug, Clone, Default)]
pub struct Held {
    /// What `/readyz` would answer: the primary answers, its migrations are
    /// current.
    pub ready: bool,
    /// Signed-in sessions active within the idle timeout.
    pub sessions: i64,
    /// Connections of the main pool in use.
    pub busy: i64,
    /// Connections of the main pool idle.
    pub idle: i64,
    /// Statements waiting for a connection of the main pool.
    pub waiting: i64,
    /// How many times the main pool found a new primary after losing one.
    pub failovers: u64,
    /// Each replica in the order of `odata.replicas`: whether reads go to
    /// it, and how many seconds its replay was behind (`None`: it did not
    /// answer).
    pub replicas: Vec<(bool, Option<f64>)>,
}

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let family = IntCounterVec::new(Opts::new(name, help), labels).expect("a valid metric");
    registered(registry, family)
}

fn histogram(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: &[f64],
) -> HistogramVec {
    let opts = HistogramOpts::new(name, help).buckets(buckets.to_vec());
    registered(registry, HistogramVec::new(opts, labels).expect("a valid metric"))
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    registered(registry, IntGauge::new(name, help).expect("a valid metric"))
}

fn registered<C: Collector + Clone + 'static>(registry: &Registry, collector: C) -> C {
    registry
        .register(Box::new(collector.clone()))
        .expect("each metric is registered once");
    collector
}

impl Metrics {
    /// Metrics that count nothing (`ops.metrics = false`).
    pub fn off() -> Metrics {
        Metrics(None)
    }

    /// A new registry with every metric at zero.
    pub fn on() -> Metrics {
        let registry =
            Registry::new_custom(Some(PREFIX.to_owned()), None).expect("a valid prefix");
        let r = &registry;
        let build = IntGaugeVec::new(
            Opts::new("build_info", "The running build: always 1, its version as a label."),
            &["version"],
        )
        .expect("a valid metric");
        registered(r, build.clone())
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        let process = Registry::new();
        #[cfg(target_os = "linux")]
        process
            .register(Box::new(
                prometheus::process_collector::ProcessCollector::for_self(),
            ))
            .expect("the process collector is registered once");
        let families = Families {
            http_requests: counter(
                r,
                "http_requests_total",
                "HTTP requests answered, by route template, method and status.",
                &["route", "method", "status"],
            ),
            http_duration: histogram(
                r,
                "http_request_duration_seconds",
                "Time from a request's arrival to its answer's head, by route template.",
                &["route"],
                &LATENCY_BUCKETS,
            ),
            auth_events: counter(
                r,
                "auth_events_total",
                "Security events stored, by type and the way in.",
                &["event", "method"],
            ),
            throttle_refusals: counter(
                r,
                "throttle_refusals_total",
                "Attempts a throttle refused, by its kind.",
                &["kind"],
            ),
            hash_duration: registered(
                r,
                Histogram::with_opts(
                    HistogramOpts::new(
                        "password_hash_duration_seconds",
                        "Time a password hash or check takes on its thread.",
                    )
                    .buckets(HASH_BUCKETS.to_vec()),
                )
                .expect("a valid metric"),
            ),
            hash_queue: gauge(
                r,
                "password_hash_queue_depth",
                "Sign-ins holding a place in the hash queue.",
            ),
            sessions_active: gauge(r, "sessions_active", "Sessions not ended or expired."),
            odata_requests: counter(
                r,
                "odata_requests_total",
                "OData reads answered, by set, kind and status.",
                &["set", "kind", "status"],
            ),
            odata_rows: counter(r, "odata_rows_total", "OData rows written, by set.", &["set"]),
            statement_duration: histogram(
                r,
                "db_statement_duration_seconds",
                "Time an OData statement takes to its last row, by engine and kind.",
                &["engine", "kind"],
                &LATENCY_BUCKETS,
            ),
            pool_connections: registered(
                r,
                IntGaugeVec::new(
                    Opts::new("db_pool_connections", "Connections of the main pool, by state."),
                    &["state"],
                )
                .expect("a valid metric"),
            ),
            mail_sent: counter(
                r,
                "mail_sent_total",
                "Mails handed to the transport, by kind and result.",
                &["kind", "result"],
            ),
            ready: gauge(
                r,
                "ready",
                "1 while /readyz answers ready: the primary answers, its migrations are current.",
            ),
            pool_waiting: gauge(
                r,
                "db_pool_waiting",
                "Statements waiting for a connection of the main pool.",
            ),
            failovers: registered(
                r,
                prometheus::IntCounter::new(
                    "db_failovers_total",
                    "Times the main pool found a new primary after losing one.",
                )
                .expect("a valid metric"),
            ),
            replica_up: registered(
                r,
                IntGaugeVec::new(
                    Opts::new(
                        "db_replica_up",
                        "1 while OData reads go to the replica (by its place in odata.replicas).",
                    ),
                    &["replica"],
                )
                .expect("a valid metric"),
            ),
            replica_lag: registered(
                r,
                prometheus::GaugeVec::new(
                    Opts::new(
                        "db_replica_lag_seconds",
                        "How far the replica's replay was behind the primary when last asked.",
                    ),
                    &["replica"],
                )
                .expect("a valid metric"),
            ),
            registry,
            process,
        };
        Metrics(Some(Arc::new(families)))
    }

    /// One HTTP answer of `route` (its template, or `unmatched`).
    pub fn http(&self, route: &str, method: &str, status: u16, took: Duration) {
        if let Some(f) = &self.0 {
            let status = status.to_string();
            f.http_requests
                .with_label_values(&[route, method, &status])
                .inc();
            f.http_duration
                .with_label_values(&[route])
                .observe(took.as_secs_f64());
        }
    }

    /// One security event of type `code`, by the way in `method`.
    pub fn auth_event(&self, code: &str, method: &str) {
        if let Some(f) = &self.0 {
            f.auth_events.with_label_values(&[code, method]).inc();
        }
    }

    /// One attempt a throttle of `kind` refused.
    pub fn throttle_refusal(&self, kind: &str) {
        if let Some(f) = &self.0 {
            f.throttle_refusals.with_label_values(&[kind]).inc();
        }
    }

    /// One password hash or check that took `took`.
    pub fn hashed(&self, took: Duration) {
        if let Some(f) = &self.0 {
            f.hash_duration.observe(took.as_secs_f64());
        }
    }

    /// A sign-in took (`1`) or gave back (`-1`) a place in the hash queue.
    pub fn hash_queue(&self, change: i64) {
        if let Some(f) = &self.0 {
            f.hash_queue.add(change);
        }
    }

    /// One OData read of `set` answered with `status`; `kind` is what it
    /// read (`collection`, `entity`, `count`, `navigation`, `metadata`).
    pub fn odata(&self, set: &str, kind: &str, status: u16) {
        if let Some(f) = &self.0 {
            let status = status.to_string();
            f.odata_requests
                .with_label_values(&[set, kind, &status])
                .inc();
        }
    }

    /// The count of OData rows of `set` written.
    pub fn odata_rows(&self, set: &str) -> Rows {
        Rows(self.0.as_ref().map(|f| f.odata_rows.with_label_values(&[set])))
    }

    /// One statement on `engine` that took `took` to its last row.
    pub fn statement(&self, engine: &str, kind: &str, took: Duration) {
        if let Some(f) = &self.0 {
            f.statement_duration
                .with_label_values(&[engine, kind])
                .observe(took.as_secs_f64());
        }
    }

    /// One mail of `kind` handed to the transport (`sent`) or refused by it
    /// (`failed`).
    pub fn mail(&self, kind: &str, sent: bool) {
        if let Some(f) = &self.0 {
            let result = if sent { "sent" } else { "failed" };
            f.mail_sent.with_label_values(&[kind, result]).inc();
        }
    }

    /// The exposition of every metric, `held` read just now, in the
    /// Prometheus text format; with its content type. `None` when off.
    pub fn exposition(&self, held: Held) -> Option<(String, Vec<u8>)> {
        let f = self.0.as_ref()?;
        f.ready.set(i64::from(held.ready));
        f.pool_waiting.set(held.waiting);
        // A counter: it takes what happened since the last scrape.
        f.failovers
            .inc_by(held.failovers.saturating_sub(f.failovers.get()));
        f.sessions_active.set(held.sessions);
        for (i, (up, lag)) in held.replicas.iter().enumerate() {
            let replica = i.to_string();
            f.replica_up
                .with_label_values(&[&replica])
                .set(i64::from(*up));
            match lag {
                Some(seconds) => f.replica_lag.with_label_values(&[&replica]).set(*seconds),
                None => {
                    let _ = f.replica_lag.remove_label_values(&[&replica]);
                }
            }
        }
        f.pool_connections.with_label_values(&["busy"]).set(held.busy);
        f.pool_connections.with_label_values(&["idle"]).set(held.idle);
        let mut families = f.registry.gather();
        families.extend(f.process.gather());
        let encoder = TextEncoder::new();
        let mut body = Vec::new();
        encoder.encode(&families, &mut body).ok()?;
        Some((encoder.format_type().to_owned(), body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(metrics: &Metrics) -> String {
        let (_, body) = metrics.exposition(Held::default()).expect("on");
        String::from_utf8(body).expect("text")
    }

    #[test]
    fn counts_move_exactly_with_what_happened() {
        let metrics = Metrics::on();
        for _ in 0..3 {
            metrics.http("/auth/login", "POST", 303, Duration::from_millis(3));
        }
        metrics.throttle_refusal("login");
        let text = page(&metrics);
        assert!(
            text.contains(
                r#"gatehouse_http_requests_total{method="POST",route="/auth/login",status="303"} 3"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"gatehouse_throttle_refusals_total{kind="login"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"gatehouse_build_info{version=""#),
            "{text}"
        );
    }

    #[test]
    fn metrics_off_count_nothing_and_expose_nothing() {
        let metrics = Metrics::off();
        metrics.http("/", "GET", 200, Duration::ZERO);
        assert!(metrics.exposition(Held::default()).is_none());
    }
}
