//! What sessions, cookies and the request guards need of the add-on: the
//! validated settings and the database. Managed by Rocket on its own, so
//! that `session/` and `security/` depend on these two and nothing else.

use std::sync::Arc;

use crate::config::Settings;
use crate::db::Db;
use crate::domain::challenge::Challenges;

/// The settings and the database every request may read.
#[derive(Clone, Debug)]
pub struct Shared {
    /// Validated configuration.
    pub settings: Arc<Settings>,
    /// The `main` database, with the OData read connections.
    pub db: Db,
    /// Issues and opens device-bound sessions' challenges.
    pub dbsc: Challenges,
}

impl Shared {
    /// The shared parts from a request's Rocket instance; present once
    /// Gatehouse's ignite has run.
    pub fn of<'r>(req: &'r rocket::Request<'_>) -> Option<&'r Self> {
        req.rocket().state::<Self>()
    }
}
