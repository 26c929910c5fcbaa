//! The dispenser bound when the host binds none.

use super::{Intent, IntentContext, IntentDispenser};
use crate::session::AuthUser;

/// Sends the user where they were headed (`url.intended`, taken from the
/// session), else to `dashboard`. Host dispensers delegate to it once their
/// own steps are done.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultDispenser;

#[rocket::async_trait]
impl IntentDispenser for DefaultDispenser {
    async fn dispense(&self, _user: &AuthUser, ctx: &IntentContext) -> Intent {
        let target = ctx.take_intended().unwrap_or_else(|| ctx.dashboard_url());
        Intent::Redirect { target }
    }
}
