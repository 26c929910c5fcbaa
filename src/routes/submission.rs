//! What every route answering an intent shares (`POST /auth/intents/<kind>`
//! for the host's kinds, `POST /auth/intents/password-change` for
//! Gatehouse's own): the guard that reads the kind from the path, and the
//! reply to a submission, which asks the dispenser what comes next once the
//! intent is satisfied. It declares no route.

use std::convert::Infallible;

use rocket::http::Status;
use rocket::request::{self, FromRequest, Request};
use serde_json::{json, Value};

use crate::body::Input;
use crate::intents::{IntentResult, Submission};
use crate::reply::Reply;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// The kind a request's path answers. Rocket runs request guards before it
/// reads path segments, so this guard comes first: a path no kind is
/// answered at forwards to `intents::unknown` before any other guard is
/// asked, which makes it a 404 for a guest or another origin too.
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

/// The answer to one submission of `submission`'s kind, after `result`:
/// JSON `{status, next_step, errors, next}` (the dispenser chooses `next`
/// when the intent is satisfied), or for a form post a 303 to the next
/// intent's screen (when satisfied) or back to the kind's screen.
pub async fn reply(
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
                session.set_flash(
                    json!({"message": status, "next_step": next_step, "errors": errors}),
                );
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
