//! The account screen (`GET /account`) and `POST /auth/password`: the
//! signed-in user changes their password.

use rocket::{get, post, State};
use serde_json::json;

use super::account_screen::render;
use super::new_password::set_new_password;
use super::notices;
use super::posting::AccountRequest;
use super::sudo::current_password;
use crate::body::{BodyError, Input};
use crate::error::AuthError;
use crate::i18n::Language;
use crate::reply::Reply;
use crate::screens::{Page, Posted, Screen, View};
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// Replaces the password after checking the current one, in one
/// transaction with every session of the user, every remember cookie and
/// every pending second step it ends; `remember_token` rotates, this
/// session goes on under a new id (with a new remember cookie if it had
/// one), and the "password changed" mail goes out.
#[post("/auth/password", data = "<body>")]
pub async fn change_password(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    let AccountRequest {
        who: user, session, ..
    } = &caller;
    let answer = async {
        let input = body?;
        let password = input.valid_new_password(&gh.new_passwords, &[&user.email])?;
        current_password(gh, &caller, &input, "current_password").await?;
        set_new_password(&caller, gh, &password).await?;
        if input.is_form() {
            session.set_flash(json!({"message": "password_changed"}));
            return Ok(Reply::screen(Screen::Account.path()));
        }
        Ok(Reply::json(json!({"message": "password_changed"})))
    }
    .await;
    Posted(answer)
}

/// `GET /account`: the account screen.
#[get("/account?<notice>")]
pub async fn screen(
    user: AuthUser,
    session: Session,
    language: Language,
    gh: &State<GatehouseState>,
    notice: Option<&str>,
) -> Result<Page, AuthError> {
    let view = View {
        flash: session.take_flash(),
        notice: notices::shown(notice),
        ..View::default()
    };
    render(gh, &user, &session, language, view).await
}
