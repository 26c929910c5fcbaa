//! `POST /auth/intents/<kind>`: the answer to any intent kind a screen asks
//! for, handed to the handler the host bound for that kind.

use std::convert::Infallible;

use rocket::http::Status;
use rocket::request::{self, FromRequest, Request};
use rocket::{post, State};
use serde_json::{json, Value};

use crate::body::{BodyError, Input};
use crate::error::AuthError;
use crate::intents::{IntentResult, Submission};
use crate::reply::Reply;
use crate::screens::Posted;
use crate::security::SameOrigin;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// The kind a request's path answers. Rocket runs request guards before it
/// reads path segments, so this guard comes first: a path no kind is
/// answered at forwards to [`unknown`] before any other guard is asked,
/// which makes it a 404 for a guest or another origin too.
#[rocket::async_trait]
impl<'r> FromRequest<'r> for Submission {
    type Error = Infallible;

    async fn from_request(req: &'r Request<'_>) -> request::Outcome<Self, Infallible> {
        match Submission::at(req.uri().path().as_str()) {
            Some(submission) => request::Outcome::Success(submission),
            None => request::Outcome::Forward(Status::NotFound),
        }
    }
}

/// Hands a validated answer to the host's handler of its kind.
#[post("/auth/intents/<_kind>", data = "<body>")]
pub async fn submit(
    submission: Submission,
    _origin: SameOrigin,
    user: AuthUser,
    session: Session,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
    _kind: &str,
) -> Posted<Reply> {
    let answer: Result<Reply, AuthError> = async {
        let handler = gh.intent_handlers.bound(submission.kind)?;
        let input = body?;
        let ctx = gh.intent_context(session.clone());
        let result = handler.handle(&input, &user, &ctx).await?;
        Ok(reply(gh, submission, &input, &user, &session, result).await)
    }
    .await;
    Posted(answer)
}

/// The answer to one submission of `submission`'s kind, after `result`:
/// JSON `{status, next_step, errors, next}` (the dispenser chooses `next`
/// when the intent is satisfied), or for a form post a 303 to the next
/// intent's screen (when satisfied) or back to the kind's screen.
pub(super) async fn reply(
    gh: &GatehouseState,
    submission: Submission,
    input: &Input,
    user: &AuthUser,
    session: &Session,
    result: IntentResult,
) -> Reply {
    let (status, next_step, errors, next) = match &result {
        IntentResult::Satisfied => {
            let ctx = gh.intent_context(session.clone());
            let next = gh.dispenser.dispense(user, &ctx).await;
            ("satisfied", Value::Null, Value::Null, Some(next))
        }
        IntentResult::NeedsMoreInput(step) => ("needs_more_input", step.clone(), Value::Null, None),
        IntentResult::Error(errors) => ("error", Value::Null, errors.to_json(), None),
    };
    if input.is_form() {
        return match next {
            Some(next) => Reply::screen(next.screen_url()),
            None => {
                session.set_flash(json!({"message": status, "next_step": next_step, "errors": errors}));
                Reply::screen(submission.screen.path())
            }
        };
    }
    Reply::json(json!({
        "status": status,
        "next_step": next_step,
        "errors": errors,
        "next": next.map(|n| n.envelope()),
    }))
}

/// Any other intent kind: 404 `unknown_intent`.
#[post("/auth/intents/<_kind>", rank = 2)]
pub fn unknown(_kind: &str) -> AuthError {
    AuthError::UnknownIntent
}
