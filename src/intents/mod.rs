//! The intent loop: after signing in, the host decides what the user does next.
//!
//! The host's [`IntentDispenser`] answers an [`Intent`] — go somewhere
//! (`redirect`) or set up an organisation first (`org_setup`). Gatehouse
//! dispenses one kind itself, before the host is asked: `password_change`,
//! while the user's password is marked breached. The screens
//! follow it; an `org_setup` submission reaches the host's
//! [`OrgSetupHandler`], whose [`IntentResult`] either satisfies the intent
//! (the dispenser is asked again) or asks for more input.
//!
//! Every kind is declared once, in `registry.rs`: its wire name and payload,
//! its screen, where its answer is posted, its request and its handler. A
//! kind's own file holds its request type and its handler trait.

mod context;
mod dispenser;
mod org_setup;
mod registry;

pub use context::IntentContext;
pub use dispenser::DefaultDispenser;
pub use org_setup::{CompanySize, JobFunction, LegalForm, OrgSetupHandler, OrgSetupRequest};
pub use registry::{Intent, IntentHandlers, IntentKind, PasswordChangeReason, Submission};

use serde_json::Value;

use crate::error::FieldErrors;
use crate::session::AuthUser;

/// A handler's verdict on one submission.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum IntentResult {
    /// Done; the dispenser chooses what comes next.
    Satisfied,
    /// The screen must ask for more; the payload says what.
    NeedsMoreInput(Value),
    /// The submission was refused: codes per field.
    Error(FieldErrors),
}

impl IntentResult {
    /// The intent is fulfilled.
    pub fn satisfied() -> Self {
        Self::Satisfied
    }

    /// More input is needed; `next_step` describes it.
    pub fn needs_more_input(next_step: Value) -> Self {
        Self::NeedsMoreInput(next_step)
    }

    /// The submission is refused with these field errors.
    pub fn error(errors: FieldErrors) -> Self {
        Self::Error(errors)
    }
}

/// Chooses the next intent for a signed-in user. Every host has one: Gatehouse
/// binds [`DefaultDispenser`] when the host binds none.
#[rocket::async_trait]
pub trait IntentDispenser: Send + Sync + 'static {
    /// The next intent for `user`.
    async fn dispense(&self, user: &AuthUser, ctx: &IntentContext) -> Intent;
}
