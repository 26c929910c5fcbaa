//! Gatehouse: sign-in, sessions, throttling, password reset by mail, a
//! post-login intent loop and OData collection routes for Rocket
//! applications.
//!
//! # Attaching it
//!
//! A host keeps its own routes and attaches the add-on with one call. It must
//! name two routes: `home` (where every sign-out lands) and `dashboard` (where
//! a sign-in lands when nothing else is pending); `terms`, `privacy` and
//! `cookies` are linked from the screens when present.
//!
//! ```no_run
//! use gatehouse::{AuthUser, Gatehouse};
//! use rocket::{get, routes};
//!
//! #[get("/")]
//! fn home() -> &'static str { "welcome" }
//!
//! /// Only for signed-in users: a browser without a session is sent to
//! /// `/login`, a script gets 401.
//! #[get("/dashboard")]
//! fn dashboard(user: AuthUser) -> String { format!("hello {}", user.name) }
//!
//! #[rocket::launch]
//! fn rocket() -> _ {
//!     rocket::build()
//!         .mount("/", routes![home, dashboard])
//!         .attach(Gatehouse::new())
//! }
//! ```
//!
//! On ignite it reads its configuration ([`Settings`], from `Rocket.toml`
//! and `ROCKET_*`), opens `databases.main` as [`Db`] and migrates it, and
//! mounts `/login`, `/logout`, `/forgot-password`, `/reset-password`,
//! `/intents/…` and `/odata`.
//!
//! # After sign-in: intents
//!
//! An [`IntentDispenser`] decides what a signed-in user must do before going
//! on (set up an organisation, accept terms …); the [`DefaultDispenser`]
//! sends everyone to the page they asked for or to `dashboard`. Bind one with
//! [`Gatehouse::dispenser`] and the handler of the organisation form with
//! [`Gatehouse::org_setup`].
//!
//! # OData sets
//!
//! A table becomes a read-only OData entity set under `/odata`, paged by the
//! server, filtered by the caller's [`odata::Scope`]:
//!
//! ```no_run
//! use gatehouse::odata::{parse_filter, EdmType, EntitySet, Property, Scope};
//! use gatehouse::Gatehouse;
//!
//! // Everyone may read published items; nobody else's drafts.
//! let items = EntitySet::new("Items", "items", "id")
//!     .property(Property::new("id", EdmType::Int64).not_null())
//!     .property(Property::new("name", EdmType::String))
//!     .property(Property::new("status", EdmType::String))
//!     .public(true)
//!     .scoped(Scope::new(|_caller| parse_filter("status eq 'published'").unwrap()));
//! let gatehouse = Gatehouse::new().odata_set(items);
//! ```
//!
//! Sets can also be declared in configuration (`[default.odata.sets.*]`).
//!
//! # The host's own queries
//!
//! [`Db`] is a `rocket_db_pools` database over the same pool Gatehouse uses:
//! a handler takes `Connection<Db>` and runs its own sqlx statements.
//!
//! ```no_run
//! use gatehouse::Db;
//! use rocket::get;
//! use rocket_db_pools::Connection;
//!
//! #[get("/users/count")]
//! async fn user_count(mut db: Connection<Db>) -> Option<String> {
//!     let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
//!         .fetch_one(&mut **db)
//!         .await
//!         .ok()?;
//!     Some(n.to_string())
//! }
//! ```
//!
//! Gatehouse attaches [`Db`] itself unless the host attached `Db::init()`
//! before it. For administration outside a request (a command line, a
//! seeding script) there is [`Accounts`].
//!
//! `ARCHITECTURE.md` in the repository maps the modules.

#![warn(missing_docs)]

/// Declares modules (`internal! { mod a, b; }`) or re-exports
/// (`internal! { use a::B; }`) that only the crate itself uses: crate-private
/// in a normal build; public but hidden from the docs, with no stability
/// promise, under the `internals` feature, which the project's own tests,
/// benchmarks and fuzz targets turn on.
macro_rules! internal {
    (mod $($name:ident),+ $(,)?;) => {
        $(
            #[cfg(feature = "internals")]
            #[doc(hidden)]
            pub mod $name;
            #[cfg(not(feature = "internals"))]
            mod $name;
        )+
    };
    (use $($tree:tt)+) => {
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub use $($tree)+
        #[cfg(not(feature = "internals"))]
        #[allow(unused_imports)]
        pub(crate) use $($tree)+
    };
}
pub(crate) use internal;

mod accounts;
pub mod config;
mod gatehouse;
pub mod odata;

internal! {
    mod auth, body, clock, db, domain, error, events, host_routes, i18n, intents, mail, metrics, ops,
        reply, routes, screens, security, session, shared, state, sweep, workers;
}

pub use accounts::{AccountError, Accounts, CredentialInfo, TokenInfo};
pub use auth::breached;
pub use auth::breached::BreachedPasswords;
pub use config::{ConfigError, Settings};
pub use db::{Db, DbError, DbPool, Dialect};
pub use domain::Email;
pub use error::FieldErrors;
pub use events::{AuthEvent, AuthEventListener};
pub use gatehouse::{Gatehouse, MissingRoute};
pub use intents::{
    CompanySize, DefaultDispenser, Intent, IntentContext, IntentDispenser, IntentKind,
    IntentResult, JobFunction, LegalForm, OrgSetupHandler, OrgSetupRequest, PasswordChangeReason,
};
pub use ops::check::{readiness, Check, Readiness};
pub use ops::traced::traced;
pub use session::{AuthUser, Guest, HostData, Session};
