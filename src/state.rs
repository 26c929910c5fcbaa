//! What every Gatehouse route shares, built once on ignite and managed by Rocket.

use std::sync::Arc;

use crate::auth::{PasswordHasher, Throttles};
use crate::shared::Shared;
use crate::events::Events;
use crate::host_routes::HostRoutes;
use crate::intents::{IntentContext, IntentDispenser, IntentHandlers};
use crate::session::Session;

/// The shared state of the add-on, available as `&State<Gatehouse>` to host code
/// through [`crate::GatehouseState`].
pub struct GatehouseState {
    /// The settings and the database (also managed on their own).
    pub shared: Shared,
    /// Password hashing off the async workers.
    pub hasher: PasswordHasher,
    /// Attempt counters kept in the database.
    pub throttles: Throttles,
    /// Two-factor sign-in: enrolment, codes, recovery codes.
    pub two_factor: crate::auth::two_factor::TwoFactor,
    /// Passkeys: registration, sign-in, the second step.
    pub passkeys: crate::auth::passkeys::Passkeys,
    /// Answered forgot-password requests and their worker.
    pub reset_requests: crate::auth::reset::requests::ResetRequests,
    /// The background mail sender.
    pub mailer: crate::mail::Mailer,
    /// Renders notifications.
    pub composer: Arc<crate::mail::Composer>,
    /// Renders the screens.
    pub screens: Arc<crate::screens::Screens>,
    /// Host listeners for authentication events.
    pub events: Events,
    /// Chooses what a signed-in user does next.
    pub dispenser: Arc<dyn IntentDispenser>,
    /// The host's handlers of the intent kinds answered on a screen.
    pub intent_handlers: IntentHandlers,
    /// The host's named routes.
    pub routes: HostRoutes,
    /// What a new password must pass (the policy, the breached list).
    pub new_passwords: crate::auth::new_password::NewPasswords,
    /// The OpenID providers a user may sign in with.
    pub oidc: crate::auth::oidc::Oidc,
    /// What this instance counts for `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// The OData sets (the `Service`'s model): those a person may give a
    /// new token for scripts, on the account screen.
    pub odata_model: crate::odata::Model,
}

impl std::ops::Deref for GatehouseState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl GatehouseState {
    /// The state from a request's Rocket instance.
    ///
    /// Only Gatehouse's own routes and guards call this; they are mounted by
    /// the fairing that also manages the state, so it is always present.
    pub fn of<'r>(req: &'r rocket::Request<'_>) -> Option<&'r Self> {
        req.rocket().state::<Self>()
    }

    /// What the host's intent code may use for a request of `session`.
    pub fn intent_context(&self, session: Session) -> IntentContext {
        IntentContext::new(
            self.db.clone(),
            self.settings.clone(),
            self.routes.clone(),
            session,
        )
    }

    /// Where a signed-in browser that asks for a guest-only route goes.
    pub fn to_dashboard(&self) -> rocket::response::Redirect {
        rocket::response::Redirect::to(self.routes.dashboard.clone())
    }
}
