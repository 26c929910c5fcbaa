//! The `/device` screen of the device authorization grant: a signed-in
//! person types (or follows a link prefilled with) the user code a script
//! shows, sees which client asks to read what, and allows or denies it
//! (`POST /auth/device/approve`, `POST /auth/device/deny`). Nothing is
//! allowed without a press of "Allow". Wrong codes spend the client
//! address's budget (`throttles.user_codes_ip`): then every code, right or
//! wrong, is 429 `auth_throttle` until the window ends.

use rocket::{get, post, State};
use serde_json::{json, Value};

use super::posting::AccountRequest;
use crate::auth::device_grant::{self, Decision, Pending};
use crate::body::{BodyError, Input};
use crate::error::{AuthError, FieldErrors};
use crate::i18n::Language;
use crate::reply::Reply;
use crate::screens::{Page, Posted, Screen, View};
use crate::security::ClientIp;
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;
use crate::domain::UserCode;

/// The key of `client`'s budget for wrong codes, unless it is spent (429).
async fn within_budget(gh: &GatehouseState, client: &ClientIp) -> Result<String, AuthError> {
    let budget = &gh.throttles.user_codes_ip;
    let key = budget.ip_key(&client.to_string());
    match budget.refuses(&key).await? {
        Some(retry_after) => Err(AuthError::Throttled { retry_after }),
        None => Ok(key),
    }
}

/// A wrong, used or expired code: spends the budget `key` names.
async fn wrong_code(gh: &GatehouseState, key: &str) -> AuthError {
    match gh.throttles.user_codes_ip.record(key).await {
        Ok(()) => AuthError::Refused("device_code_unknown"),
        Err(failed) => failed.into(),
    }
}

/// The request `typed` names, while it waits for an answer; a wrong, used
/// or expired code spends `client`'s budget.
async fn waiting(
    gh: &GatehouseState,
    client: &ClientIp,
    typed: &str,
) -> Result<(UserCode, Pending), AuthError> {
    let key = within_budget(gh, client).await?;
    if let Some(code) = UserCode::parse(typed) {
        if let Some(pending) = device_grant::pending(&gh.db, &code).await? {
            return Ok((code, pending));
        }
    }
    Err(wrong_code(gh, &key).await)
}

/// A waiting request as the screen shows it: the code, the client's label
/// and the sets (`null` for every set the person may read).
fn shown(gh: &GatehouseState, code: &UserCode, pending: &Pending) -> Value {
    let label = gh
        .settings
        .auth
        .device_clients
        .get(&pending.client_id)
        .map_or(pending.client_id.as_str(), String::as_str);
    json!({"code": code.to_string(), "client": label, "sets": pending.sets})
}

/// `GET /device?user_code=…`: the code to answer (prefilled from the link
/// a script shows), and once it names a waiting request, what it asks and
/// the two buttons. A guest signs in first and comes back here.
#[get("/device?<user_code>")]
pub async fn screen(
    _user: AuthUser,
    session: Session,
    language: Language,
    client: ClientIp,
    gh: &State<GatehouseState>,
    user_code: Option<&str>,
) -> Result<Page, AuthError> {
    let mut view = View {
        flash: session.take_flash(),
        ..View::default()
    };
    let answered = view.flash.as_ref().and_then(|f| f["message"].as_str());
    let typed = user_code.map(str::trim).filter(|code| !code.is_empty());
    if let (None, Some(typed)) = (answered, typed) {
        match waiting(gh, &client, typed).await {
            Ok((code, pending)) => view.extra.push(("request", shown(gh, &code, &pending))),
            Err(refused @ (AuthError::Refused(_) | AuthError::Throttled { .. })) => {
                let mut flash = refused.body();
                flash["errors"] = json!({"user_code": [flash["message"].clone()]});
                view.flash = Some(flash);
            }
            Err(failed) => return Err(failed),
        }
        view.extra.push(("typed", json!(typed)));
    }
    gh.screens.render(Screen::Device, language, view)
}

/// Records the caller's answer to the body's `user_code`.
async fn answer(
    caller: &AccountRequest<'_>,
    gh: &GatehouseState,
    body: Result<Input, BodyError>,
    allow: bool,
) -> Result<Reply, AuthError> {
    let input = body?;
    let mut errors = FieldErrors::new();
    let typed = input.required_text("user_code", &mut errors);
    errors.into_result()?;
    let key = within_budget(gh, &caller.client).await?;
    let decision = match allow {
        true => Decision::Allow {
            user_id: caller.who.id,
            language: caller.language,
        },
        false => Decision::Deny,
    };
    // One conditional `UPDATE` finds the waiting request and answers it; a
    // code answered by another press at the same moment is as good as
    // unknown.
    let decided = match UserCode::parse(&typed.unwrap_or_default()) {
        Some(code) => device_grant::decide(&gh.db, &code, decision).await?,
        None => false,
    };
    if !decided {
        return Err(wrong_code(gh, &key).await);
    }
    let message = if allow { "device_approved" } else { "device_denied" };
    if input.is_form() {
        caller.session.set_flash(json!({"message": message}));
        return Ok(Reply::screen(Screen::Device.path()));
    }
    Ok(Reply::json(json!({"message": message})))
}

/// `POST /auth/device/approve` `{user_code}`: 200 `device_approved` (a
/// form goes back to the screen, which says so); the script's next poll
/// gets its token.
#[post("/auth/device/approve", data = "<body>")]
pub async fn approve(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    Posted(answer(&caller, gh, body, true).await)
}

/// `POST /auth/device/deny` `{user_code}`: 200 `device_denied`; the
/// script's next poll gets `access_denied`.
#[post("/auth/device/deny", data = "<body>")]
pub async fn deny(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Input, BodyError>,
) -> Posted<Reply> {
    Posted(answer(&caller, gh, body, false).await)
}
