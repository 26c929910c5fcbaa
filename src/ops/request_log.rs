//! Each answered request, told once: one log line (`gatehouse::request`,
//! with its id, method, route, path with its secrets hidden, status, time,
//! client address and user) and its count in the metrics. A probe polled
//! every few seconds is logged at debug level only.

use std::time::Instant;

use rocket::{Request, Response};

use super::request_id::RequestId;
use crate::security::ClientIp;
use crate::security::loggable;
use crate::session::Session;
use crate::state::GatehouseState;

/// When a request arrived.
struct Arrived(Instant);

/// Notes that `req` arrived now.
pub fn arrived(req: &Request<'_>) {
    req.local_cache(|| Arrived(Instant::now()));
}

/// Logs and counts the answer `res` to `req`.
pub fn answered(req: &Request<'_>, res: &Response<'_>, gh: Option<&GatehouseState>) {
    let took = req.local_cache(|| Arrived(Instant::now())).0.elapsed();
    // The route's template, never the path as sent.
    let route = req.route().map_or("unmatched", |r| r.uri.path());
    let status = res.status().code;
    if let Some(gh) = gh {
        gh.metrics.http(route, req.method().as_str(), status, took);
    }
    let request_id = RequestId::of(req).as_str();
    let ip = gh.map(|gh| ClientIp::of(req, &gh.settings).0.to_string());
    let user_id = Session::cached(req).and_then(|s| s.user_id());
    let duration_ms = took.as_secs_f64() * 1000.0;
    macro_rules! line {
        ($level:ident) => {
            tracing::$level!(
                target: "gatehouse::request",
                request_id,
                method = %req.method(),
                route,
                uri = %loggable(req),
                status,
                duration_ms,
                ip,
                user_id,
            )
        };
    }
    if super::probes::PATHS.contains(&req.uri().path().as_str()) {
        line!(debug);
    } else {
        line!(info);
    }
}
