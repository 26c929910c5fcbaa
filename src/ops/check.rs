//! What `gatehouse check` prints: each thing a serving instance needs —
//! its configuration, the primary database and its migrations, the mail
//! transport, the OpenID providers' discovery — checked once, now, as
//! `/readyz` and the start would find them.

use std::fmt;
use std::time::Duration;

use rocket::figment::Figment;

use crate::auth::oidc::Oidc;
use crate::config::Settings;
use crate::db::Db;
use crate::mail::Mailer;

/// How long a provider's discovery may take.
const DISCOVERY_WITHIN: Duration = Duration::from_secs(5);

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Check {
    /// What was checked (`database`, `mail`, `oidc.NAME`, …).
    pub name: String,
    /// `Ok` with what was found, or why it is not ready.
    pub outcome: Result<String, String>,
}

/// Every check, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness(pub Vec<Check>);

impl Readiness {
    /// Whether every check passed.
    pub fn is_ready(&self) -> bool {
        self.0.iter().all(|c| c.outcome.is_ok())
    }
}

impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.0 {
            match &check.outcome {
                Ok(found) => writeln!(f, "ok      {}: {found}", check.name)?,
                Err(why) => writeln!(f, "FAILED  {}: {why}", check.name)?,
            }
        }
        match self.is_ready() {
            true => write!(f, "ready"),
            false => write!(f, "not ready"),
        }
    }
}

fn check(name: &str, outcome: Result<String, String>) -> Check {
    Check {
        name: name.to_owned(),
        outcome,
    }
}

/// Checks what an instance on `figment` (Rocket's configuration) needs.
pub async fn readiness(figment: &Figment) -> Readiness {
    let settings = match Settings::from_figment(figment) {
        Ok(settings) => settings,
        Err(e) => return Readiness(vec![check("configuration", Err(e.to_string()))]),
    };
    let mut checks = vec![check("configuration", Ok("every key reads".to_owned()))];
    checks.push(match Db::open_configured(figment).await {
        Err(e) => check("database", Err(format!("cannot be opened: {e}"))),
        Ok(db) => {
            let answered = super::probes::database(&db).await;
            db.close().await;
            check(
                "database",
                answered.map(|()| "answers; migrations are current".to_owned()),
            )
        }
    });
    checks.push(check(
        "mail",
        Mailer::start(&settings.mail).map(|_| format!("{:?} transport", settings.mail.transport)),
    ));
    match Oidc::new(&settings) {
        Err(e) => checks.push(check("oidc", Err(e))),
        Ok(oidc) => {
            for (name, found) in oidc.discover_now(DISCOVERY_WITHIN).await {
                let found = found.map(|()| "discovered".to_owned());
                checks.push(check(&format!("oidc.{name}"), found));
            }
        }
    }
    Readiness(checks)
}
