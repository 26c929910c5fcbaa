//! The fairing a host attaches: `rocket::build().attach(Gatehouse::new())`.
//!
//! On ignite it reads and validates the configuration, connects to and
//! migrates the database, checks the host's named routes, mounts Gatehouse's
//! routes and catchers and manages [`GatehouseState`]. On every response it
//! writes the session back and adds the screen headers.

use crate::auth::new_password::NewPasswords;
use crate::auth::oidc::Oidc;
use std::sync::Arc;

use rocket::fairing::{self, Fairing, Info, Kind};

use rocket::{Build, Request, Response, Rocket};
use secrecy::ExposeSecret;

use crate::auth::passkeys::{self, Passkeys};
use crate::auth::reset::requests::ResetRequests;
use crate::auth::two_factor::{self, TwoFactor};
use crate::auth::{PasswordHasher, Throttles};
use crate::config::Settings;
use crate::db::{Db, Readers};

use crate::domain::challenge::Challenges;
use crate::events::{AuthEventListener, Events};
use crate::host_routes::HostRoutes;
use crate::i18n::Catalog;
use crate::intents::{
    DefaultDispenser, IntentDispenser, IntentHandlers, IntentKind, OrgSetupHandler,
};
use crate::mail::{Composer, Mailer};
use crate::metrics::Metrics;
use crate::odata::{self, declared_sets, EntitySet, Model, Service, SkipTokens};
use crate::ops::request_id::{self, RequestId};
use crate::ops::scrape::Scrape;
use crate::ops::traced::traced;
use crate::screens::{Screen, Screens};
use crate::security::{common_headers, is_auth_path, screen_headers, CONTENT_SECURITY_POLICY};
use crate::session::Session;
use crate::shared::Shared;
use crate::state::GatehouseState;

/// The Gatehouse add-on, configured by the host before attaching.
///
/// ```no_run
/// use gatehouse::Gatehouse;
/// use rocket::{get, routes};
///
/// #[get("/")]
/// fn home() -> &'static str { "home" }
/// #[get("/dashboard")]
/// fn dashboard(user: gatehouse::AuthUser) -> String { user.email }
///
/// #[rocket::launch]
/// fn rocket() -> _ {
///     rocket::build().mount("/", routes![home, dashboard]).attach(Gatehouse::new())
/// }
/// ```
#[derive(Default)]
pub struct Gatehouse {
    dispenser: Option<Arc<dyn IntentDispenser>>,
    intent_handlers: IntentHandlers,
    events: Events,
    odata_sets: Vec<EntitySet>,
}

/// A named route the host must provide is missing.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("Gatehouse needs a route named `{0}` (a handler function called `{0}`); mount one before attaching Gatehouse")]
pub struct MissingRoute(pub &'static str);

impl Gatehouse {
    /// The add-on with the default dispenser and no org-setup handler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds the host's intent dispenser.
    pub fn dispenser(mut self, dispenser: impl IntentDispenser) -> Self {
        self.dispenser = Some(Arc::new(dispenser));
        self
    }

    /// Binds the host's org-setup handler.
    pub fn org_setup(mut self, handler: impl OrgSetupHandler) -> Self {
        self.intent_handlers.org_setup = Some(Arc::new(handler));
        self
    }

    /// Adds a listener for authentication events.
    pub fn listener(mut self, listener: impl AuthEventListener) -> Self {
        self.events.push(Arc::new(listener));
        self
    }

    /// Exposes an entity set declared in Rust under `/odata` (sets declared
    /// in configuration are added to these).
    pub fn odata_set(mut self, set: EntitySet) -> Self {
        self.odata_sets.push(set);
        self
    }

    /// Finds the host's named routes; `home` and `dashboard` are required.
    pub(crate) fn host_routes(rocket: &Rocket<Build>) -> Result<HostRoutes, MissingRoute> {
        let path_of = |name: &str| {
            rocket
                .routes()
                .find(|r| r.name.as_deref() == Some(name) && r.method == rocket::http::Method::Get)
                .map(|r| r.uri.path().to_string())
        };
        Ok(HostRoutes {
            home: path_of("home").ok_or(MissingRoute("home"))?,
            dashboard: path_of("dashboard").ok_or(MissingRoute("dashboard"))?,
            terms: path_of("terms"),
            privacy: path_of("privacy"),
            cookies: path_of("cookies"),
        })
    }

    /// The host's [`Db`] if it attached one, else the pool Gatehouse opens
    /// and manages itself.
    async fn database(
        rocket: Rocket<Build>,
    ) -> Result<(Rocket<Build>, Db), (Rocket<Build>, String)> {
        if let Some(db) = rocket.state::<Db>() {
            let db = db.clone();
            return Ok((rocket, db));
        }
        match Db::open_configured(rocket.figment()).await {
            Ok(db) => Ok((rocket.manage(db.clone()), db)),
            Err(e) => Err((
                rocket,
                format!("cannot open database `databases.main.url`: {e}"),
            )),
        }
    }

    async fn build_state(
        &self,
        rocket: &Rocket<Build>,
        settings: Settings,
        db: &Db,
    ) -> Result<(GatehouseState, Service), String> {
        let routes = Self::host_routes(rocket).map_err(|e| e.to_string())?;
        let readers = Readers::configured(db, &settings.odata.readers()).await?;
        db.migrate()
            .await
            .map_err(|e| format!("database migration failed: {e}"))?;
        let secret_key = two_factor::key::application_key(rocket.figment())?;
        let tokens = SkipTokens::derive(secret_key.expose_secret());
        let metrics = match settings.ops.metrics {
            true => Metrics::on(),
            false => Metrics::off(),
        };
        let odata = self
            .odata_service(db, readers, &settings, tokens)
            .await?
            .counted_in(&metrics);
        if !odata.model.sets.is_empty() && odata.readers.reads().is_none() {
            return Err(
                "`databases.main.url` names an in-memory SQLite database, whose OData \
                        reads could not be held to `odata.statement_timeout_ms`: name a \
                        database file to serve OData sets"
                    .to_owned(),
            );
        }
        let catalog = Arc::new(Catalog::load(Screen::messages)?);
        let settings = Arc::new(settings);
        let auth = &settings.auth;
        let mailer = Mailer::start(&settings.mail)?.counted_in(&metrics);
        let composer = Arc::new(Composer::new(&settings.app_name(), catalog.clone())?);
        let passkeys = Passkeys::new(db.clone(), &settings.base_url, &settings.app_name())?;
        let new_passwords = NewPasswords::new(auth)?;
        let oidc = Oidc::new(&settings)?;
        let state = GatehouseState {
            two_factor: TwoFactor::new(db.clone(), secret_key.expose_secret()),
            hasher: PasswordHasher::counted(auth.hash, auth.hash_queue, metrics.clone())
                .map_err(|e| format!("cannot start the password hashing threads: {e}"))?,
            throttles: Throttles::new(db, auth, &metrics),
            reset_requests: ResetRequests::new(
                db.clone(),
                settings.clone(),
                mailer.clone(),
                composer.clone(),
            ),
            mailer,
            composer,
            screens: Arc::new(
                Screens::load(
                    settings.templates_dir.as_deref(),
                    catalog,
                    routes.clone(),
                    settings
                        .public_dir
                        .join("assets/ci/logo-full.svg")
                        .is_file(),
                    settings.auth.password_min_length,
                    IntentKind::screen_paths().collect(),
                )?
                .with_passkeys(passkeys.is_on()),
            ),
            passkeys,
            events: self
                .events
                .clone()
                .stored_in(db.clone())
                .counted_in(metrics.clone()),
            shared: Shared {
                settings,
                db: db.clone(),
                dbsc: Challenges::derive(secret_key.expose_secret()),
            },
            dispenser: self
                .dispenser
                .clone()
                .unwrap_or_else(|| Arc::new(DefaultDispenser)),
            intent_handlers: self.intent_handlers.clone(),
            routes,
            new_passwords,
            oidc,
            metrics,
            odata_model: odata.model.clone(),
        };
        let odata = odata.reporting_to(&state.events);
        Ok((state, odata))
    }

    async fn odata_service(
        &self,
        db: &Db,
        readers: Readers,
        settings: &Settings,
        tokens: SkipTokens,
    ) -> Result<Service, String> {
        let configured = declared_sets(db, &settings.odata.sets)
            .await
            .map_err(|e| e.to_string())?;
        let model = self
            .odata_sets
            .iter()
            .cloned()
            .chain(configured)
            .fold(Model::new(), Model::set);
        Service::new(
            model,
            settings.origin(),
            &settings.odata,
            tokens,
            db.clone(),
            readers,
        )
        .map_err(|e| e.to_string())
    }
}

#[rocket::async_trait]
impl Fairing for Gatehouse {
    fn info(&self) -> Info {
        Info {
            name: "Gatehouse",
            kind: Kind::Ignite | Kind::Liftoff | Kind::Request | Kind::Response,
        }
    }

    async fn on_ignite(&self, rocket: Rocket<Build>) -> fairing::Result {
        let built = match Settings::from_figment(rocket.figment()) {
            Err(e) => Err((rocket, e.to_string())),
            Ok(settings) => match Self::database(rocket).await {
                Err(failed) => Err(failed),
                Ok((rocket, db)) => match self.build_state(&rocket, settings, &db).await {
                    Ok(built) => Ok((rocket, built)),
                    Err(message) => Err((rocket, message)),
                },
            },
        };
        match built {
            Ok((rocket, (state, odata))) => Ok(rocket
                .manage(Scrape::of(&state, &odata.readers))
                .manage(state.shared.clone())
                .manage(state)
                .manage(odata)
                .mount("/", traced(crate::routes::all()))
                .mount("/", traced(odata::routes::all()))
                .mount(
                    "/",
                    traced(rocket::routes![
                        crate::ops::probes::healthz,
                        crate::ops::probes::readyz,
                        crate::ops::scrape::metrics
                    ]),
                )
                .register("/", crate::routes::catchers())),
            Err((rocket, message)) => {
                tracing::error!("Gatehouse cannot start: {message}");
                eprintln!("Gatehouse cannot start: {message}");
                Err(rocket)
            }
        }
    }

    async fn on_liftoff(&self, rocket: &Rocket<rocket::Orbit>) {
        if let Some(gh) = rocket.state::<GatehouseState>() {
            let sweeper = crate::sweep::Sweeper::from(gh);
            tokio::spawn(async move { sweeper.run().await });
            tokio::spawn(gh.reset_requests.clone().run());
            gh.oidc.discover_in_background();
            if let (Some(address), Some(scrape)) =
                (gh.settings.ops.metrics_address, rocket.state::<Scrape>())
            {
                crate::ops::scrape::serve_apart(rocket, scrape.clone(), address);
            }
            if let Some(reason) = passkeys::off_reason(&gh.settings.base_url) {
                tracing::warn!(
                    "passkeys are off: {reason}; a base_url naming a host \
                     (http://localhost:8000, https://login.example.com) offers them"
                );
            }
        }
    }

    async fn on_request(&self, req: &mut Request<'_>, _data: &mut rocket::Data<'_>) {
        crate::ops::request_log::arrived(req);
    }

    async fn on_response<'r>(&self, req: &'r Request<'_>, res: &mut Response<'r>) {
        let gh = GatehouseState::of(req);
        if let (Some(session), Some(gh)) = (Session::cached(req), gh) {
            if let Err(e) = session.persist(gh, res).await {
                let request_id = RequestId::of(req).as_str();
                tracing::error!(request_id, error = %e, "session could not be saved");
            }
            crate::routes::notify::recall_notices(gh, req, session.take_notices()).await;
        }
        common_headers(res, gh.is_some_and(|gh| gh.settings.is_https()));
        // Every screen (a `Page` carries the policy wherever it answers) and
        // every sign-in endpoint get the screen headers, with the OpenID
        // providers a form may lead to; a host's own policy stays.
        let ours =
            res.headers().get_one("Content-Security-Policy") == Some(CONTENT_SECURITY_POLICY);
        if is_auth_path(req.uri().path().as_str()) || ours {
            let providers = gh.map(|gh| gh.oidc.origins()).unwrap_or_default();
            screen_headers(res, &providers);
        }
        let request_id = RequestId::of(req).as_str();
        res.set_raw_header(request_id::HEADER, request_id.to_owned());
        crate::ops::request_log::answered(req, res, gh);
    }
}
