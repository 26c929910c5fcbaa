//! `GET /metrics`: the Prometheus exposition of [`Metrics`](crate::metrics),
//! served to loopback callers, to the networks of `ops.metrics_allow`, and
//! to anyone sending `Authorization: Bearer <ops.metrics_token>`; every
//! other caller gets the same 404 as an unknown path. With
//! `ops.metrics_address` it is also served on a listener of its own, to
//! whoever reaches that address.

use std::net::SocketAddr;

use rocket::http::{ContentType, Status};
use rocket::request::{FromRequest, Outcome};
use rocket::{get, Request, State};
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::clock::unix_now;
use crate::config::OpsSettings;
use crate::db::{Db, Readers};
use crate::metrics::{Format, Held, Metrics};
use crate::security::ClientIp;
use crate::session::store;
use crate::state::GatehouseState;

/// A caller that may read `/metrics`.
pub struct MetricsReader;

/// Whether a caller from `ip` that sent `authorization` may read the
/// metrics under `ops`.
fn may_read(ops: &OpsSettings, ip: std::net::IpAddr, authorization: Option<&str>) -> bool {
    if !ops.metrics {
        return false;
    }
    let ip = ip.to_canonical();
    if ip.is_loopback() || ops.metrics_allow.iter().any(|net| net.contains(&ip)) {
        return true;
    }
    let (Some(token), Some(sent)) = (
        &ops.metrics_token,
        authorization.and_then(|a| a.strip_prefix("Bearer ")),
    ) else {
        return false;
    };
    // Compared as digests: in constant time, whatever the lengths.
    let expected = Sha256::digest(token.expose_secret().as_bytes());
    Sha256::digest(sent.trim().as_bytes())
        .ct_eq(&expected)
        .into()
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for MetricsReader {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let Some(gh) = GatehouseState::of(req) else {
            return Outcome::Forward(Status::NotFound);
        };
        let ip = ClientIp::of(req, &gh.settings).0;
        let authorization = req.headers().get_one("Authorization");
        match may_read(&gh.settings.ops, ip, authorization) {
            true => Outcome::Success(MetricsReader),
            false => Outcome::Forward(Status::NotFound),
        }
    }
}

/// What a scrape reads: the counts, and where to read what is held now.
#[derive(Clone)]
pub struct Scrape {
    metrics: Metrics,
    db: Db,
    readers: Readers,
    idle_seconds: i64,
}

impl Scrape {
    /// The scrape of `gh`'s metrics, its OData reads through `readers`.
    pub fn of(gh: &GatehouseState, readers: &Readers) -> Scrape {
        Scrape {
            metrics: gh.metrics.clone(),
            db: gh.db.clone(),
            readers: readers.clone(),
            idle_seconds: i64::from(gh.settings.session.idle_minutes) * 60,
        }
    }

    /// The exposition in `format`, with what the database holds read now.
    async fn page(&self, format: Format) -> Result<(ContentType, String), Status> {
        let sessions = store::active(&self.db, unix_now(), self.idle_seconds)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "metrics: the active sessions could not be counted");
                0
            });
        let pool = self.db.pool();
        let size = i64::from(pool.size());
        let idle = i64::try_from(pool.num_idle()).unwrap_or(size);
        let replicas = self
            .readers
            .replica_states()
            .into_iter()
            .map(|r| (r.in_use, r.behind.map(|b| b.as_secs_f64())))
            .collect();
        let held = Held {
            ready: super::probes::database(&self.db).await.is_ok(),
            sessions,
            busy: (size - idle).max(0),
            idle,
            waiting: self.db.waiting(),
            failovers: self.db.failovers(),
            replicas,
        };
        let body = self
            .metrics
            .exposition(held, format)
            .ok_or(Status::NotFound)?;
        let content_type =
            ContentType::parse_flexible(format.content_type()).unwrap_or(ContentType::Plain);
        Ok((content_type, body))
    }
}

/// The format a scraper's `Accept` header asks for.
pub struct Asked(Format);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Asked {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        Outcome::Success(Asked(Format::asked(req.headers().get_one("Accept"))))
    }
}

/// The exposition, to a caller that may read it.
#[get("/metrics")]
pub async fn metrics(
    _reader: MetricsReader,
    asked: Asked,
    scrape: &State<Scrape>,
) -> Result<(ContentType, String), Status> {
    scrape.page(asked.0).await
}

/// The exposition on the listener of its own (`ops.metrics_address`),
/// whose network is its access rule.
#[get("/metrics")]
async fn own_listener(
    asked: Asked,
    scrape: &State<Scrape>,
) -> Result<(ContentType, String), Status> {
    scrape.page(asked.0).await
}

/// Serves `/metrics` alone at `address` until `rocket` shuts down; a
/// listener that cannot start is logged.
pub fn serve_apart(rocket: &rocket::Rocket<rocket::Orbit>, scrape: Scrape, address: SocketAddr) {
    let figment = rocket
        .figment()
        .clone()
        .merge(("address", address.ip()))
        .merge(("port", address.port()))
        .merge(("log_level", "off"));
    let apart = rocket::custom(figment)
        .manage(scrape)
        .mount("/", rocket::routes![own_listener]);
    let ended = rocket.shutdown();
    tokio::spawn(async move {
        let apart = match apart.ignite().await {
            Ok(apart) => apart,
            Err(e) => {
                tracing::error!("metrics listener {address} could not start: {e}");
                return;
            }
        };
        let stop = apart.shutdown();
        tokio::spawn(async move {
            ended.await;
            stop.notify();
        });
        if let Err(e) = apart.launch().await {
            tracing::error!("metrics listener {address} could not start: {e}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::SecretString;

    fn ops(allow: &[&str], token: Option<&str>) -> OpsSettings {
        OpsSettings {
            metrics_allow: allow.iter().map(|n| n.parse().expect("a CIDR")).collect(),
            metrics_token: token.map(|t| SecretString::from(t.to_owned())),
            ..OpsSettings::default()
        }
    }

    #[test]
    fn loopback_allowed_networks_and_the_token_may_read_no_one_else() {
        let ops = ops(&["10.1.0.0/16"], Some("s3cret"));
        let ip = |s: &str| s.parse().expect("an address");
        assert!(may_read(&ops, ip("127.0.0.1"), None));
        assert!(may_read(&ops, ip("::1"), None));
        assert!(may_read(&ops, ip("::ffff:127.0.0.1"), None));
        assert!(may_read(&ops, ip("10.1.200.3"), None));
        assert!(!may_read(&ops, ip("10.2.0.1"), None));
        assert!(may_read(&ops, ip("203.0.113.9"), Some("Bearer s3cret")));
        assert!(!may_read(&ops, ip("203.0.113.9"), Some("Bearer s3cre")));
        assert!(!may_read(&ops, ip("203.0.113.9"), Some("s3cret")));
        let off = OpsSettings {
            metrics: false,
            ..ops.clone()
        };
        assert!(!may_read(&off, ip("127.0.0.1"), None));
    }
}
