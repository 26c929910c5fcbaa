//! Gatehouse's catchers: what a request that no handler answered, or whose
//! guard refused it, gets. Each answers an [`AuthError`], so the body is the
//! one `error.rs` maps that error to.

use rocket::response::Redirect;
use rocket::{catch, catchers, Catcher, Request};

use crate::error::AuthError;
use crate::screens::Screen;
use crate::session::{wants_html, PasswordChangeRefused};

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

/// `SameOrigin` refused the request, or a session that must choose a new
/// password asked for anything else: a browser goes to the change screen,
/// a script gets 403 `password_change_required`.
#[catch(403)]
fn forbidden(req: &Request<'_>) -> Result<Redirect, AuthError> {
    if !PasswordChangeRefused::of(req) {
        return Err(AuthError::CrossOrigin);
    }
    if wants_html(req) {
        Ok(Redirect::to(Screen::ChangePassword.path()))
    } else {
        Err(AuthError::PasswordChangeRequired)
    }
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
