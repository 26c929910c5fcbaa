//! The intent loop: after signing in, the host decides what the user does next.
//!
//! The host's [`IntentDispenser`] answers an [`Intent`] — go somewhere
//! (`redirect`) or set up an organisation first (`org_setup`). The screens
//! follow it; an `org_setup` submission reaches the host's
//! [`OrgSetupHandler`], whose [`IntentResult`] either satisfies the intent
//! (the dispenser is asked again) or asks for more input.

mod context;
mod dispenser;
mod org_setup;

pub use context::IntentContext;
pub use dispenser::DefaultDispenser;
pub use org_setup::{CompanySize, JobFunction, LegalForm, OrgSetupRequest};

use serde_json::{json, Value};

use crate::error::FieldErrors;
use crate::screens::Screen;
use crate::session::AuthUser;

/// The kinds of intent; closed, like the screens that follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentKind {
    /// Navigate to an absolute URL.
    Redirect,
    /// Show the organisation set-up screen.
    OrgSetup,
}

impl IntentKind {
    /// The wire name (`redirect`, `org_setup`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Redirect => "redirect",
            Self::OrgSetup => "org_setup",
        }
    }
}

/// What the signed-in user should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// Go to `target`, an absolute URL.
    Redirect {
        /// Absolute URL.
        target: String,
    },
    /// Create an organisation first.
    OrgSetup {
        /// How the screen greets the user.
        person_name: String,
    },
}

impl Intent {
    /// The kind of this intent.
    pub fn kind(&self) -> IntentKind {
        match self {
            Self::Redirect { .. } => IntentKind::Redirect,
            Self::OrgSetup { .. } => IntentKind::OrgSetup,
        }
    }

    /// The wire envelope `{"kind", "version": "1", "payload"}`.
    ///
    /// ```
    /// use gatehouse::Intent;
    /// let next = Intent::Redirect { target: "https://example.org/dashboard".into() };
    /// assert_eq!(next.envelope()["payload"]["target"], "https://example.org/dashboard");
    /// ```
    pub fn envelope(&self) -> Value {
        let payload = match self {
            Self::Redirect { target } => json!({ "target": target }),
            Self::OrgSetup { person_name } => json!({ "personName": person_name }),
        };
        json!({ "kind": self.kind().as_str(), "version": "1", "payload": payload })
    }

    /// Where a browser without JavaScript goes to follow this intent.
    pub fn screen_url(&self) -> String {
        match self {
            Self::Redirect { target } => target.clone(),
            Self::OrgSetup { .. } => Screen::OrgSetup.path().to_owned(),
        }
    }
}

/// A handler's verdict on one submission.
#[derive(Debug, Clone, PartialEq)]
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

/// Handles an organisation set-up submission, already validated and typed.
#[rocket::async_trait]
pub trait OrgSetupHandler: Send + Sync + 'static {
    /// Creates the organisation (or says why not).
    async fn handle(
        &self,
        user: &AuthUser,
        request: OrgSetupRequest,
        ctx: &IntentContext,
    ) -> IntentResult;
}
