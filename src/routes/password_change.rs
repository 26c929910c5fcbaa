//! `POST /auth/intents/password-change`: the answer to the `password_change`
//! intent, which Gatehouse dispenses itself to a user whose password was
//! found in the breached-password file. It is open only while a change is
//! due; setting the new password is a full change (every other session and
//! remember cookie ends, the mark is cleared, the mail goes out), and then
//! the host's dispenser chooses what comes next. Only the session whose own
//! sign-in dispensed the change, within its ten minutes, goes without the
//! current password; any other (a recall, a copied cookie) must send it.

use rocket::{post, State};

use super::new_password::set_new_password;
use super::posting::AccountRequest;
use super::submission::reply;
use super::sudo::current_password;
use crate::body::{BodyError, Input};
use crate::intents::{IntentResult, Submission};
use crate::reply::Reply;
use crate::screens::Posted;
use crate::session::{password_change, PasswordChangeDue};
use crate::state::GatehouseState;

/// Sets the new password `{password, password_confirmation}` of a session
/// that must choose one: 422 `validation_failed` as any new password (a
/// listed one is `breached`), else `satisfied` with the next intent. A
/// session that did not sign in to the change itself sends
/// `current_password` too (422 `required`; a wrong one is a failed
/// sign-in).
#[post("/auth/intents/password-change", data = "<body>")]
pub async fn submit(
    _due: PasswordChangeDue,
    submission: Submission,
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
        if !password_change::without_current_password(session) {
            current_password(gh, &caller, &input, "current_password").await?;
        }
        set_new_password(&caller, gh, &password).await?;
        password_change::lift(session);
        Ok(reply(gh, submission, &input, user, session, IntentResult::Satisfied).await)
    }
    .await;
    Posted(answer)
}
