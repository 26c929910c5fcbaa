//! `POST /auth/intents/<kind>`: the answer to any intent kind a screen asks
//! for, handed to the handler the host bound for that kind. The guard that
//! reads the kind and the reply are shared with Gatehouse's own kind
//! (`submission.rs`).

use rocket::{post, State};

use super::submission::reply;
use crate::body::{BodyError, Input};
use crate::error::AuthError;
use crate::intents::Submission;
use crate::reply::Reply;
use crate::screens::Posted;
use crate::security::SameOrigin;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

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

/// Any other intent kind: 404 `unknown_intent`.
#[post("/auth/intents/<_kind>", rank = 2)]
pub fn unknown(_kind: &str) -> AuthError {
    AuthError::UnknownIntent
}
