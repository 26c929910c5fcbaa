//! What a dispenser or handler may use besides the user.

use std::sync::Arc;

use serde_json::Value;

use crate::config::Settings;
use crate::db::Db;
use crate::session::{Session, INTENDED_KEY};
use crate::host_routes::HostRoutes;

/// The request's surroundings, handed to host intent code.
#[derive(Clone)]
pub struct IntentContext {
    db: Db,
    settings: Arc<Settings>,
    routes: HostRoutes,
    session: Session,
}

impl IntentContext {
    pub(crate) fn new(db: Db, settings: Arc<Settings>, routes: HostRoutes, session: Session) -> Self {
        Self {
            db,
            settings,
            routes,
            session,
        }
    }

    /// The `main` database.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The configuration.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Takes (and removes) the URL the user was headed for before signing in.
    pub fn take_intended(&self) -> Option<String> {
        match self.session.remove(INTENDED_KEY) {
            Some(Value::String(url)) => Some(url),
            _ => None,
        }
    }

    /// Absolute URL of the host's `dashboard` route.
    pub fn dashboard_url(&self) -> String {
        self.settings.absolute(&self.routes.dashboard)
    }

    /// Absolute URL of the host's `home` route.
    pub fn home_url(&self) -> String {
        self.settings.absolute(&self.routes.home)
    }
}
