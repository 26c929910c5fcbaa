//! The answer to a form a screen posted: without JavaScript a failure the
//! screen can show goes back to that screen, with its message and the fields
//! as typed in the session's one-time flash.

use rocket::request::Request;
use rocket::response::{self, Redirect, Responder};
use serde_json::Value;

use super::Screen;
use crate::body::OldInput;
use crate::error::AuthError;
use crate::session::Session;

/// A handler's result for a request that may be a screen's form post.
///
/// A failure the screen shows (a field, the credentials, throttling, a busy
/// server) answers a form post with 303 to the screen it came from and puts
/// the error body, with the submitted fields under `old` and the path it
/// was posted to under `form`, in the flash. JSON
/// requests, other failures and successes are answered as they are.
pub struct Posted<R>(pub Result<R, AuthError>);

impl<'r, R: Responder<'r, 'static>> Responder<'r, 'static> for Posted<R> {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let error = match self.0 {
            Ok(answer) => return answer.respond_to(req),
            Err(error) => error,
        };
        let shown_on_screen = matches!(
            error,
            AuthError::Validation(_)
                | AuthError::Credentials
                | AuthError::Throttled { .. }
                | AuthError::ResetFailed
                | AuthError::TwoFactorFailed
                | AuthError::TwoFactorState(_)
                | AuthError::Refused(_)
                | AuthError::ReauthRequired { .. }
                | AuthError::PasskeyFailed
                | AuthError::Busy
        );
        let is_form = req.content_type().is_some_and(|ct| ct.is_form());
        if let (true, true, Some(screen)) = (shown_on_screen, is_form, Screen::of_form_post(req.uri().path().as_str())) {
            if let Some(session) = Session::cached(req) {
                let mut flash = error.body();
                let old = req.local_cache(OldInput::default);
                flash["old"] = Value::Object(old.0.clone());
                flash["form"] = Value::String(req.uri().path().to_string());
                session.set_flash(flash);
            }
            return Redirect::to(screen.path()).respond_to(req);
        }
        error.respond_to(req)
    }
}
