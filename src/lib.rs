//! Gatehouse: sign-in, sessions, throttling and a post-login intent loop for
//! Rocket applications.
//!
//! A host attaches the add-on with one call and keeps its own routes:
//!
//! ```no_run
//! # use rocket::{get, routes};
//! # #[get("/")] fn home() {}
//! # #[get("/dashboard")] fn dashboard(_user: gatehouse::AuthUser) {}
//! let rocket = rocket::build()
//!     .mount("/", routes![home, dashboard])
//!     .attach(gatehouse::Gatehouse::new());
//! ```
//!
//! See `ARCHITECTURE.md` for the map of modules.

pub mod auth;
pub mod body;
pub mod clock;
pub mod config;
pub mod db;
pub mod domain;
pub mod error;
pub mod events;
mod gatehouse;
pub mod host;
pub mod i18n;
pub mod intents;
pub mod mail;
pub mod odata;
pub mod reply;
pub mod screens;
pub mod security;
pub mod session;
pub mod state;
pub mod sweep;
pub mod workers;

pub use config::{ConfigError, Settings};
pub use error::{AuthError, FieldErrors};
pub use events::{AuthEvent, AuthEventListener};
pub use gatehouse::{Gatehouse, MissingRoute};
pub use intents::{
    DefaultDispenser, Intent, IntentContext, IntentDispenser, IntentKind, IntentResult,
    OrgSetupHandler, OrgSetupRequest,
};
pub use session::{AuthUser, Guest, Session};
pub use state::GatehouseState;
