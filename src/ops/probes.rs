//! The probes an orchestrator polls (Kubernetes' liveness and readiness):
//! `GET /healthz` answers while the process serves, without asking the
//! database; `GET /readyz` answers ready only while the primary answers
//! within a second and its migrations are the ones this build carries.
//! Neither loads a session or sets a cookie, nor counts toward a throttle;
//! their requests are logged at debug level only.

use std::time::Duration;

use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{get, State};
use serde_json::{json, Value};

use crate::db::{Db, Migrations};
use crate::state::GatehouseState;

/// How long `/readyz` waits for the primary.
pub const READY_WITHIN: Duration = Duration::from_secs(1);

/// The probes' paths, which the request log writes at debug level.
pub const PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// `GET /healthz`: 200 `{"status":"ok"}` while the process serves.
#[get("/healthz")]
pub fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `GET /readyz`: 200 `{"status":"ready"}` when the primary answers within
/// [`READY_WITHIN`] and its migrations are current; else 503
/// `{"status":"unavailable","checks":{"database":"…"}}`, the reason in
/// words (never a URL or a password).
#[get("/readyz")]
pub async fn readyz(gh: &State<GatehouseState>) -> (Status, Json<Value>) {
    match database(&gh.db).await {
        Ok(()) => (Status::Ok, Json(json!({"status": "ready"}))),
        Err(reason) => (
            Status::ServiceUnavailable,
            Json(json!({"status": "unavailable", "checks": {"database": reason}})),
        ),
    }
}

/// Whether the primary answers within [`READY_WITHIN`] with current
/// migrations; else why not.
pub async fn database(db: &Db) -> Result<(), String> {
    match tokio::time::timeout(READY_WITHIN, Migrations::of(db)).await {
        Err(_) => Err(format!(
            "the database did not answer within {} s",
            READY_WITHIN.as_secs()
        )),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "readiness: the database did not answer");
            Err("the database cannot be reached".to_owned())
        }
        Ok(Ok(migrations)) => migrations.current(),
    }
}
