//! Prometheus metrics (`GET /metrics`): what the server did, counted as it
//! happens, and what it holds, read at each scrape. Names carry the prefix
//! `gatehouse_`; labels take bounded values only (a route's template, an
//! event's type, a set's name), never a user, an address or a key.
//!
//! One [`Metrics`] a Gatehouse instance, cloned into what it counts; with
//! `ops.metrics = false` it counts nothing and `/metrics` is 404. It
//! imports nothing of the crate: everything may count into it.

use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::{prometheus_text, text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

mod format;
mod labels;
mod process;

pub use format::Format;
use labels::{
    EventLabels, HttpLabels, KindLabel, MailLabels, ODataLabels, ReplicaLabel, RouteLabel,
    SetLabel, StateLabel, StatementLabels, VersionLabel,
};
use process::Process;

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

type Latencies<L> = Family<L, Histogram, fn() -> Histogram>;
type IntGauge = Gauge<i64, AtomicI64>;
type FloatGauge = Gauge<f64, AtomicU64>;

fn latencies() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The registered metrics.
struct Families {
    /// Gatehouse's own under [`PREFIX`], the process collector's unprefixed
    /// (`process_*`).
    registry: Registry,
    http_requests: Family<HttpLabels, Counter>,
    http_duration: Latencies<RouteLabel>,
    auth_events: Family<EventLabels, Counter>,
    throttle_refusals: Family<KindLabel, Counter>,
    hash_duration: Histogram,
    hash_queue: IntGauge,
    sessions_active: IntGauge,
    odata_requests: Family<ODataLabels, Counter>,
    odata_rows: Family<SetLabel, Counter>,
    statement_duration: Latencies<StatementLabels>,
    pool_connections: Family<StateLabel, IntGauge>,
    mail_sent: Family<MailLabels, Counter>,
    ready: IntGauge,
    pool_waiting: IntGauge,
    failovers: Counter,
    replica_up: Family<ReplicaLabel, IntGauge>,
    replica_lag: Family<ReplicaLabel, FloatGauge>,
}

/// The rows of one set written, counted (nothing when metrics are off).
#[derive(Clone, Default)]
pub struct Rows(Option<Counter>);

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

/// `metric` registered in `registry` as `name`, and returned to count into.
fn registered<M>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M
where
    M: prometheus_client::registry::Metric + Clone,
{
    registry.register(name, help, metric.clone());
    metric
}

impl Metrics {
    /// Metrics that count nothing (`ops.metrics = false`).
    pub fn off() -> Metrics {
        Metrics(None)
    }

    /// A new registry with every metric at zero.
    pub fn on() -> Metrics {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Process));
        let r = registry.sub_registry_with_prefix(PREFIX);
        r.register(
            "build",
            "The running build: always 1, its version as a label.",
            Info::new(VersionLabel {
                version: env!("CARGO_PKG_VERSION"),
            }),
        );
        let families = Families {
            http_requests: registered(
                r,
                "http_requests",
                "HTTP requests answered, by route template, method and status.",
                Family::default(),
            ),
            http_duration: registered(
                r,
                "http_request_duration_seconds",
                "Time from a request's arrival to its answer's head, by route template.",
                Family::new_with_constructor(latencies as fn() -> Histogram),
            ),
            auth_events: registered(
                r,
                "auth_events",
                "Security events stored, by type and the way in.",
                Family::default(),
            ),
            throttle_refusals: registered(
                r,
                "throttle_refusals",
                "Attempts a throttle refused, by its kind.",
                Family::default(),
            ),
            hash_duration: registered(
                r,
                "password_hash_duration_seconds",
                "Time a password hash or check takes on its thread.",
                Histogram::new(HASH_BUCKETS),
            ),
            hash_queue: registered(
                r,
                "password_hash_queue_depth",
                "Sign-ins holding a place in the hash queue.",
                IntGauge::default(),
            ),
            sessions_active: registered(
                r,
                "sessions_active",
                "Sessions not ended or expired.",
                IntGauge::default(),
            ),
            odata_requests: registered(
                r,
                "odata_requests",
                "OData reads answered, by set, kind and status.",
                Family::default(),
            ),
            odata_rows: registered(
                r,
                "odata_rows",
                "OData rows written, by set.",
                Family::default(),
            ),
            statement_duration: registered(
                r,
                "db_statement_duration_seconds",
                "Time an OData statement takes to its last row, by engine and kind.",
                Family::new_with_constructor(latencies as fn() -> Histogram),
            ),
            pool_connections: registered(
                r,
                "db_pool_connections",
                "Connections of the main pool, by state.",
                Family::default(),
            ),
            mail_sent: registered(
                r,
                "mail_sent",
                "Mails handed to the transport, by kind and result.",
                Family::default(),
            ),
            ready: registered(
                r,
                "ready",
                "1 while /readyz answers ready: the primary answers, its migrations are current.",
                IntGauge::default(),
            ),
            pool_waiting: registered(
                r,
                "db_pool_waiting",
                "Statements waiting for a connection of the main pool.",
                IntGauge::default(),
            ),
            failovers: registered(
                r,
                "db_failovers",
                "Times the main pool found a new primary after losing one.",
                Counter::default(),
            ),
            replica_up: registered(
                r,
                "db_replica_up",
                "1 while OData reads go to the replica (by its place in odata.replicas).",
                Family::default(),
            ),
            replica_lag: registered(
                r,
                "db_replica_lag_seconds",
                "How far the replica's replay was behind the primary when last asked.",
                Family::default(),
            ),
            registry,
        };
        Metrics(Some(Arc::new(families)))
    }

    /// One HTTP answer of `route` (its template, or `unmatched`).
    pub fn http(&self, route: &str, method: &str, status: u16, took: Duration) {
        if let Some(f) = &self.0 {
            let labels = HttpLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            };
            f.http_requests.get_or_create(&labels).inc();
            let route = RouteLabel { route: labels.route };
            f.http_duration
                .get_or_create(&route)
                .observe(took.as_secs_f64());
        }
    }

    /// One security event of type `code`, by the way in `method`.
    pub fn auth_event(&self, code: &str, method: &str) {
        if let Some(f) = &self.0 {
            let labels = EventLabels {
                event: code.to_owned(),
                method: method.to_owned(),
            };
            f.auth_events.get_or_create(&labels).inc();
        }
    }

    /// One attempt a throttle of `kind` refused.
    pub fn throttle_refusal(&self, kind: &str) {
        if let Some(f) = &self.0 {
            let labels = KindLabel {
                kind: kind.to_owned(),
            };
            f.throttle_refusals.get_or_create(&labels).inc();
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
            f.hash_queue.inc_by(change);
        }
    }

    /// One OData read of `set` answered with `status`; `kind` is what it
    /// read (`collection`, `entity`, `count`, `navigation`, `metadata`).
    pub fn odata(&self, set: &str, kind: &str, status: u16) {
        if let Some(f) = &self.0 {
            let labels = ODataLabels {
                set: set.to_owned(),
                kind: kind.to_owned(),
                status,
            };
            f.odata_requests.get_or_create(&labels).inc();
        }
    }

    /// The count of OData rows of `set` written.
    pub fn odata_rows(&self, set: &str) -> Rows {
        Rows(self.0.as_ref().map(|f| {
            let labels = SetLabel {
                set: set.to_owned(),
            };
            f.odata_rows.get_or_create_owned(&labels)
        }))
    }

    /// One statement on `engine` that took `took` to its last row.
    pub fn statement(&self, engine: &str, kind: &str, took: Duration) {
        if let Some(f) = &self.0 {
            let labels = StatementLabels {
                engine: engine.to_owned(),
                kind: kind.to_owned(),
            };
            f.statement_duration
                .get_or_create(&labels)
                .observe(took.as_secs_f64());
        }
    }

    /// One mail of `kind` handed to the transport (`sent`) or refused by it
    /// (`failed`).
    pub fn mail(&self, kind: &str, sent: bool) {
        if let Some(f) = &self.0 {
            let labels = MailLabels {
                kind: kind.to_owned(),
                result: if sent { "sent" } else { "failed" },
            };
            f.mail_sent.get_or_create(&labels).inc();
        }
    }

    /// The exposition of every metric in `format`, `held` read just now.
    /// `None` when off.
    pub fn exposition(&self, held: Held, format: Format) -> Option<String> {
        let f = self.0.as_ref()?;
        f.ready.set(i64::from(held.ready));
        f.pool_waiting.set(held.waiting);
        // A counter: it takes what happened since the last scrape.
        f.failovers
            .inc_by(held.failovers.saturating_sub(f.failovers.get()));
        f.sessions_active.set(held.sessions);
        for (replica, (up, lag)) in held.replicas.iter().enumerate() {
            let label = ReplicaLabel { replica };
            f.replica_up.get_or_create(&label).set(i64::from(*up));
            match lag {
                Some(seconds) => {
                    f.replica_lag.get_or_create(&label).set(*seconds);
                }
                None => {
                    f.replica_lag.remove(&label);
                }
            }
        }
        let busy = StateLabel { state: "busy" };
        f.pool_connections.get_or_create(&busy).set(held.busy);
        let idle = StateLabel { state: "idle" };
        f.pool_connections.get_or_create(&idle).set(held.idle);
        let mut page = String::new();
        match format {
            Format::Prometheus => prometheus_text::encode(&mut page, &f.registry),
            Format::OpenMetrics => text::encode(&mut page, &f.registry),
        }
        .ok()?;
        Some(page)
    }
}

#[cfg(test)]
mod tests;
