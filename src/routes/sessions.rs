//! The signed-in user's sessions: `GET /auth/sessions`,
//! `POST /auth/sessions/<id>/end` and `POST /auth/sessions/end-others`.
//! Each session is named by its public handle, never by its key or cookie.

use rocket::http::{ContentType, Status};
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::account_screen;
use super::posting::{AccountRequest, Keeping};
use super::sudo::Confirmed;
use crate::error::AuthError;
use crate::events::AuthEvent;
use crate::reply::Reply;
use crate::screens::{Posted, Screen};
use crate::db::Tx;
use crate::session::{store, void_remembered_session, AuthUser, Session};
use crate::state::GatehouseState;

/// `GET /auth/sessions`.
#[get("/auth/sessions")]
pub async fn list(
    user: AuthUser,
    session: Session,
    gh: &State<GatehouseState>,
) -> Result<Json<Value>, AuthError> {
    account_screen::sessions(gh, &user, &session)
        .await
        .map(Json)
}

/// What ending one session answers: 204, or a 303 back to the account
/// screen for a form post.
#[derive(rocket::Responder)]
pub enum Ended {
    /// 204 No Content.
    Done(Status),
    /// 303 to the account screen.
    Screen(Box<rocket::response::Redirect>),
}

/// Ends one of the caller's sessions by its handle (404 for any other
/// handle), and voids the remember cookie of that device. Ending the current
/// one signs this browser out.
#[post("/auth/sessions/<id>/end")]
pub async fn end(
    caller: AccountRequest<'_>,
    content_type: Option<&ContentType>,
    gh: &State<GatehouseState>,
    id: &str,
) -> Result<Ended, AuthError> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let is_form = content_type.is_some_and(|ct| ct.is_form());
    let sessions = store::of_user(&gh.db, user.id).await?;
    let target = sessions
        .iter()
        .find(|s| store::handle(&s.id_hash) == id)
        .ok_or(AuthError::NotFound)?;
    store::delete(&gh.db, &target.id_hash).await?;
    // That device's remember cookie would sign it in again.
    void_remembered_session(&gh.db, &target.id_hash, target.remember_selector.as_deref()).await?;
    if session.stored_id().as_deref() == Some(target.id_hash.as_str()) {
        session.destroy();
    }
    gh.events.emit(AuthEvent::SessionEnded {
        user_id: user.id,
        ended: 1,
    }, from).await;
    if is_form {
        session.set_flash(json!({"message": "session_ended"}));
        let back = rocket::response::Redirect::to(Screen::Account.path());
        return Ok(Ended::Screen(Box::new(back)));
    }
    Ok(Ended::Done(Status::NoContent))
}

/// Ends every other session of the caller after checking the password, in
/// one transaction with every remember cookie of the user and every pending
/// second step; `remember_token` rotates, and this browser gets a new
/// remember cookie if it had one.
#[post("/auth/sessions/end-others", data = "<body>")]
pub async fn end_others(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Reply> {
    let AccountRequest {
        who: user,
        session,
        from,
        ..
    } = &caller;
    let answer = async {
        let input = body?.into_input();
        let nothing = async |_: &mut Tx| Ok::<_, AuthError>(());
        let ((), ended) = caller
            .change_credentials(gh, Keeping::ThisSession, nothing)
            .await?;
        gh.events.emit(AuthEvent::SessionEnded {
            user_id: user.id,
            ended,
        }, from).await;
        let body = json!({"message": "other_sessions_ended", "ended": ended});
        if input.is_form() {
            session.set_flash(body);
            return Ok(Reply::screen(Screen::Account.path()));
        }
        Ok(Reply::json(body))
    }
    .await;
    Posted(answer)
}
