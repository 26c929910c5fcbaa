//! Every route Gatehouse mounts, and every route a host mounts through
//! [`traced`], runs inside a span of its request
//! (`request`: `request_id`, `method`, `route`, and the status once
//! answered): each log line it writes, and each span it opens (a statement,
//! a password hash, a mail), belongs to that request. Exported as traces,
//! a W3C `traceparent` the request carries makes it a child of the
//! caller's trace.

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rocket::http::HeaderMap;
use rocket::route::{Handler, Outcome, Route};
use rocket::{Data, Request};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::request_id::RequestId;

/// A route's handler, run inside its request's span.
#[derive(Clone)]
struct Traced(Box<dyn Handler>);

/// A request's headers, as the trace context propagator reads them.
struct Headers<'a>(&'a HeaderMap<'a>);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get_one(key)
    }

    /// The only keys the W3C trace context reads.
    fn keys(&self) -> Vec<&str> {
        ["traceparent", "tracestate"]
            .into_iter()
            .filter(|key| self.0.contains(*key))
            .collect()
    }
}

#[rocket::async_trait]
impl Handler for Traced {
    async fn handle<'r>(&self, req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r> {
        let method = req.method().as_str();
        let route = req.route().map_or("", |r| r.uri.path());
        let span = tracing::info_span!(
            "request",
            otel.name = format!("{method} {route}"),
            otel.kind = "server",
            request_id = RequestId::of(req).as_str(),
            method,
            route,
            http.response.status_code = tracing::field::Empty,
        );
        if req.headers().contains("traceparent") {
            let parent = TraceContextPropagator::new().extract(&Headers(req.headers()));
            let _ = span.set_parent(parent);
        }
        let outcome = self.0.handle(req, data).instrument(span.clone()).await;
        if let Outcome::Success(response) = &outcome {
            span.record("http.response.status_code", response.status().code);
        }
        outcome
    }
}

/// `routes`, each run inside its request's span, as Gatehouse runs its
/// own: a host mounts its pages with it so that their log lines and
/// statements belong to their requests too.
///
/// ```
/// # use rocket::{get, routes};
/// #[get("/")]
/// fn home() -> &'static str {
///     "home"
/// }
///
/// let rocket = rocket::build().mount("/", gatehouse::traced(routes![home]));
/// # let _ = rocket;
/// ```
pub fn traced(routes: Vec<Route>) -> Vec<Route> {
    routes
        .into_iter()
        .map(|mut route| {
            route.handler = Box::new(Traced(route.handler));
            route
        })
        .collect()
}
