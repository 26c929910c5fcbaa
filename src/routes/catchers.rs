//! Gatehouse's catchers: what a request that no handler answered, or whose
//! guard refused it, gets. Each answers an [`AuthError`], so the body is the
//! one `error.rs` maps that error to.

use rocket::response::Redirect;
use rocket::{catch, catchers, Catcher, Request};

use crate::error::AuthError;
use crate::screens::Screen;
use crate::session::wants_html;

/// Every catcher, for registering at `/`.
pub fn all() -> Vec<Catcher> {
    catchers![unauthorized, forbidden, server_error, unavailable]
}

/// A guest at a guarded route: a browser goes to the sign-in screen, a
/// script gets 401 `unauthenticated`.
#[catch(401)]
fn unauthorized(req: &Request<'_>) -> Result<Redirect, AuthError> {
    if wants_html(req) {
        Ok(Redirect::to(Screen::Login.path()))
    } else {
        Err(AuthError::Unauthenticated)
    }
}

/// `SameOrigin` refused the request.
#[catch(403)]
fn forbidden() -> AuthError {
    AuthError::CrossOrigin
}

/// The database could not be reached while loading the session.
#[catch(503)]
fn unavailable() -> AuthError {
    AuthError::Unavailable
}

/// A failure no handler answered.
#[catch(500)]
fn server_error() -> AuthError {
    AuthError::Internal("a request failed before its handler answered".to_owned())
}
