//! `POST /logout`.

use rocket::http::CookieJar;
use rocket::response::Redirect;
use rocket::{post, State};

use crate::auth::users;
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::security::SameOrigin;
use crate::session::{forget_remembered, Session};
use crate::state::GatehouseState;

/// Ends the session (row deleted, cookie expired), voids and drops this
/// browser's remember cookie, rotates `remember_token` (Laravel's column)
/// and goes to `home`.
#[post("/logout")]
pub async fn logout(
    _origin: SameOrigin,
    session: Session,
    from: Origin,
    jar: &CookieJar<'_>,
    gh: &State<GatehouseState>,
) -> Result<Redirect, AuthError> {
    if let Some(user_id) = session.user_id() {
        users::rotate_remember_token(&gh.db, user_id).await?;
        gh.events.emit(AuthEvent::Logout { user_id }, &from).await;
    }
    session.destroy();
    forget_remembered(jar, gh).await?;
    Ok(Redirect::to(gh.routes.home.clone()))
}
