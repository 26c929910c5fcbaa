//! `POST /auth/intents/<kind>`.

use rocket::{post, State};
use serde_json::{json, Value};

use crate::intents::{IntentResult, OrgSetupRequest};
use crate::body::{BodyError, Input};
use crate::error::AuthError;
use crate::reply::Reply;
use crate::security::SameOrigin;
use crate::session::{AuthUser, Session};
use crate::screens::{Posted, Screen};
use crate::state::GatehouseState;

/// Hands a validated org-setup submission to the host's handler.
#[post("/auth/intents/org-setup", data = "<body>")]
pub async fn org_setup(
    _origin: SameOrigin,
    user: AuthUser,
    session: Session,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let answer: Result<Reply, AuthError> = async {
        let handler = gh
            .org_setup
            .clone()
            .ok_or(AuthError::OrgSetupHandlerMissing)?;
        let input = body?;
        let request = OrgSetupRequest::from_input(&input)?;
        let ctx = gh.intent_context(session.clone());
        let result = handler.handle(&user, request, &ctx).await;
        let (status, next_step, errors, next) = match &result {
            IntentResult::Satisfied => {
                let next = gh.dispenser.dispense(&user, &ctx).await;
                ("satisfied", Value::Null, Value::Null, Some(next))
            }
            IntentResult::NeedsMoreInput(step) => ("needs_more_input", step.clone(), Value::Null, None),
            IntentResult::Error(errors) => ("error", Value::Null, errors.to_json(), None),
        };
        if input.is_form() {
            return Ok(match next {
                Some(next) => Reply::screen(next.screen_url()),
                None => {
                    session.set_flash(
                        json!({"message": status, "next_step": next_step, "errors": errors}),
                    );
                    Reply::screen(Screen::OrgSetup.path())
                }
            });
        }
        Ok(Reply::json(json!({
            "status": status,
            "next_step": next_step,
            "errors": errors,
            "next": next.map(|n| n.envelope()),
        })))
    }
    .await;
    Posted(answer)
}

/// Any other intent kind: 404 `unknown_intent`.
#[post("/auth/intents/<_kind>", rank = 2)]
pub fn unknown(_kind: &str) -> AuthError {
    AuthError::UnknownIntent
}
