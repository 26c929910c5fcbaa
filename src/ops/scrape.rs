//! `GET /metrics`: the Prometheus exposition of [`Metrics`](crate::metrics),
//! served to loopback callers, to the networks of `ops.metrics_allow`, and
//! to anyone sending `Authorization: Bearer <ops.metrics_token>`; every
//! other caller gets the same 404 as an unknown path.

use rocket::http::{ContentType, Status};
use rocket::request::{FromRequest, Outcome};
use rocket::{get, Request, State};
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::clock::unix_now;
use crate::config::OpsSettings;
use crate::metrics::Held;
use crate::odata::Service;
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

/// The exposition, with what the database holds read now.
#[get("/metrics")]
pub async fn metrics(
    _reader: MetricsReader,
    gh: &State<GatehouseState>,
    odata: &State<Service>,
) -> Result<(ContentType, Vec<u8>), Status> {
    let idle_seconds = i64::from(gh.settings.session.idle_minutes) * 60;
    let sessions = store::active(&gh.db, unix_now(), idle_seconds)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "metrics: the active sessions could not be counted");
            0
        });
    let pool = gh.db.pool();
    let size = i64::from(pool.size());
    let idle = i64::try_from(pool.num_idle()).unwrap_or(size);
    let replicas = odata
        .readers
        .replica_states()
        .into_iter()
        .map(|r| (r.in_use, r.behind.map(|b| b.as_secs_f64())))
        .collect();
    let held = Held {
        ready: super::probes::database(&gh.db).await.is_ok(),
        sessions,
        busy: (size - idle).max(0),
        idle,
        failovers: gh.db.failovers(),
        replicas,
    };
    let (content_type, body) = gh.metrics.exposition(held).ok_or(Status::NotFound)?;
    let content_type = ContentType::parse_flexible(&content_type).unwrap_or(ContentType::Plain);
    Ok((content_type, body))
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
