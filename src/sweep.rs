//! The background sweep: removes expired reset tokens, idle sessions, ended
//! throttle windows, spent once-only values and security events past their
//! retention, every few minutes, on every instance (the deletes are
//! idempotent, so instances need no coordination).

use std::sync::Arc;
use std::time::Duration;

use crate::auth::once;
use crate::auth::reset::broker;
use crate::auth::Throttle;
use crate::clock::unix_now;
use crate::config::Settings;
use crate::db::Db;
use crate::events;
use crate::session::{device, store};
use crate::state::GatehouseState;

/// How often the sweep runs.
pub const INTERVAL: Duration = Duration::from_secs(300);

/// Rows removed by one sweep.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Expired reset tokens.
    pub reset_tokens: u64,
    /// Idle sessions.
    pub sessions: u64,
    /// Ended throttle windows.
    pub throttle_counters: u64,
    /// Security events older than `auth.security_events_days`.
    pub security_events: u64,
    /// Remember records of cookies past `session.remember_days`.
    pub remember_cookies: u64,
    /// Devices whose cookie has expired.
    pub devices: u64,
    /// Once-only values (an OpenID flow's `state`) past their lifetime.
    pub used_once: u64,
    /// Device authorization codes expired over a lifetime ago.
    pub device_codes: u64,
}

/// What the sweep needs, detached from the request state.
pub struct Sweeper {
    db: Db,
    settings: Arc<Settings>,
    throttle: Throttle,
}

impl From<&GatehouseState> for Sweeper {
    fn from(gh: &GatehouseState) -> Self {
        Self {
            db: gh.db.clone(),
            settings: gh.settings.clone(),
            throttle: gh.throttles.login.clone(),
        }
    }
}

impl Sweeper {
    /// Runs one sweep.
    pub async fn once(&self) -> Result<Swept, sqlx::Error> {
        // Every counter lives in one table: one sweep ends them all.
        let throttle_counters = self.throttle.sweep().await?;
        let idle_seconds = i64::from(self.settings.session.idle_minutes) * 60;
        let auth = &self.settings.auth;
        Ok(Swept {
            reset_tokens: broker::sweep(&self.db, auth.reset_token_minutes).await?,
            sessions: store::sweep(&self.db, unix_now(), idle_seconds).await?,
            throttle_counters,
            security_events: events::sweep(&self.db, unix_now(), auth.security_events_days)
                .await?,
            remember_cookies: crate::session::sweep_remembered(
                &self.db,
                self.settings.session.remember_days,
            )
            .await?,
            devices: device::sweep(&self.db, device::sweep_horizon(unix_now())).await?,
            used_once: once::sweep(&self.db).await?,
            device_codes: crate::auth::device_grant::sweep(&self.db).await?,
        })
    }

    /// Sweeps every [`INTERVAL`] until the process ends.
    pub async fn run(self) {
        let mut ticks = tokio::time::interval(INTERVAL);
        loop {
            ticks.tick().await;
            match self.once().await {
                Ok(swept) => tracing::debug!(?swept, "sweep done"),
                Err(e) => tracing::warn!(error = %e, "sweep failed"),
            }
        }
    }
}
