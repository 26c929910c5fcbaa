//! Access for scripts: the caller's personal access tokens.
//! `GET /auth/tokens`, `POST /auth/tokens` (sudo mode) and
//! `POST /auth/tokens/<id>/revoke`, as JSON or as the account screen's form
//! posts. A token is answered once, when it is made (and its owner is
//! mailed): to a form, in the account screen rendered in place, never kept
//! in the session. The listing shows its first characters only. A token
//! reads no more than its owner may, and only the sets it was given.

use rocket::http::{ContentType, Status};
use rocket::response::{status, Redirect};
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::account_screen::shown_token;
use super::notify::{notify, recipient};
use super::posting::AccountRequest;
use super::sudo::Confirmed;
use super::token_list::{self, readable_sets};
use crate::auth::tokens::{self, NewToken};
use crate::body::Input;
use crate::clock::{rfc3339, unix_now};
use crate::domain::SecretToken;
use crate::error::{AuthError, FieldErrors};
use crate::events::AuthEvent;
use crate::mail::Notice;
use crate::odata::Caller;
use crate::screens::{Page, Posted, Screen};
use crate::session::AuthUser;
use crate::state::GatehouseState;

/// The lifetimes a token may be given, in days.
const EXPIRY_DAYS: [i64; 3] = [7, 30, 90];
/// The longest label.
const MAX_NAME_CHARS: usize = 64;
/// The most sets one token is given by name.
const MAX_SETS: usize = 64;

/// `GET /auth/tokens`: the caller's tokens, oldest first.
#[get("/auth/tokens")]
pub async fn list(user: AuthUser, gh: &State<GatehouseState>) -> Result<Json<Value>, AuthError> {
    Ok(Json(token_list::of_user(gh, &user).await?))
}

/// The lifetime a new token's body asks for, in days: 30 when it names
/// none; `None` for no expiry (JSON `null`, a form's `none`), which only
/// `tokens.allow_no_expiry` allows. Anything else records `in`.
fn lifetime(allow_no_expiry: bool, input: &Input, errors: &mut FieldErrors) -> Option<i64> {
    const FIELD: &str = "expires_days";
    if !input.names(FIELD) {
        return Some(tokens::DEFAULT_LIFETIME_DAYS);
    }
    let no_expiry = !input.carries(FIELD) || (input.is_form() && input.is_text(FIELD, "none"));
    if no_expiry && allow_no_expiry {
        return None;
    }
    let before = errors.count(FIELD);
    match input.integer(FIELD, errors) {
        Some(days) if EXPIRY_DAYS.contains(&days) => Some(days),
        _ => {
            if errors.count(FIELD) == before {
                errors.add(FIELD, "in");
            }
            None
        }
    }
}

/// The sets a new token's body names; `None` for every set its owner may
/// read. JSON names them in `sets` (absent for all); the account screen's
/// form says which with `scope`: `all` (the boxes checked under it are
/// ignored) or `some`, with at least one box of `sets` checked.
fn named_sets(input: &Input, errors: &mut FieldErrors) -> Option<Vec<String>> {
    if input.is_form() && input.names("scope") {
        match input.text("scope", errors).as_deref() {
            Some("all") => return None,
            Some("some") if !input.carries("sets") => {
                errors.add("sets", "required");
                return None;
            }
            Some("some") => {}
            _ => {
                if errors.count("scope") == 0 {
                    errors.add("scope", "in");
                }
                return None;
            }
        }
    }
    input.list("sets", errors)
}

/// What a new token's body asks for, checked: its label, its sets and its
/// lifetime.
fn asked(gh: &GatehouseState, owner: &Caller, input: &Input) -> Result<NewToken, AuthError> {
    let mut errors = FieldErrors::new();
    let name = input.required_text("name", &mut errors);
    if name.as_ref().is_some_and(|n| n.chars().count() > MAX_NAME_CHARS) {
        errors.add("name", "max");
    }
    let days = lifetime(gh.settings.tokens.allow_no_expiry, input, &mut errors);
    let sets = named_sets(input, &mut errors);
    if let Some(sets) = &sets {
        let readable = readable_sets(gh, owner);
        if sets.is_empty() || sets.len() > MAX_SETS {
            errors.add("sets", "in");
        } else if !sets.iter().all(|set| readable.contains(set)) {
            errors.add("sets", "unknown_set");
        }
    }
    errors.into_result()?;
    Ok(NewToken {
        name: name.unwrap_or_default(),
        sets: sets.map(|mut sets| {
            sets.sort();
            sets.dedup();
            sets
        }),
        expires_at: days.map(|days| unix_now() + days * 86_400),
    })
}

/// What making a token answers: 201 with it to a script, the account
/// screen showing it (200) to a form.
#[derive(rocket::Responder)]
pub enum Made {
    /// 201 with the token, as JSON.
    Json(status::Custom<Json<Value>>),
    /// The account screen, rendered in place.
    Page(Page),
}

/// `POST /auth/tokens` `{"name", "expires_days": 7|30|90|null, "sets":
/// [names]}` (sudo mode): 201 with the token, shown this once; to the
/// account screen's form (`scope`, `expires_days=none`), that screen
/// showing it.
#[post("/auth/tokens", data = "<body>")]
pub async fn create(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    body: Result<Confirmed, AuthError>,
) -> Posted<Made> {
    let answer = async {
        let input = body?.into_input();
        let user_id = caller.who.id;
        let new = asked(gh, &Caller::user(user_id), &input)?;
        let token = SecretToken::generate();
        let id = tokens::create_with(&gh.db, user_id, &new, &token).await?;
        let event = AuthEvent::TokenCreated {
            user_id,
            token_id: id,
            name: new.name.clone(),
        };
        gh.events.emit(event, &caller.from).await;
        let notice = Notice::TokenCreated {
            name: new.name.clone(),
        };
        notify(gh, recipient(&caller.who), caller.language, &notice);
        if input.is_form() {
            let page = shown_token(gh, &caller, &new.name, &token).await?;
            return Ok(Made::Page(page));
        }
        let made = json!({
            "id": id,
            "token": token.expose(),
            "name": new.name,
            "expires_at": new.expires_at.map(rfc3339),
            "sets": new.sets,
        });
        Ok(Made::Json(status::Custom(Status::Created, Json(made))))
    }
    .await;
    Posted(answer)
}

/// What a revoke answers: 204 to a script, a 303 back to the account
/// screen (with its message) to a form.
#[derive(rocket::Responder)]
pub enum Revoked {
    /// 204 No Content.
    Done(Status),
    /// 303 to the account screen.
    Screen(Box<Redirect>),
}

/// `POST /auth/tokens/<id>/revoke`: 204 (a form: 303 to the account
/// screen); 404 unless the token is the caller's. No password: revoking
/// only takes access away.
#[post("/auth/tokens/<id>/revoke")]
pub async fn revoke(
    caller: AccountRequest<'_>,
    content_type: Option<&ContentType>,
    gh: &State<GatehouseState>,
    id: i64,
) -> Posted<Revoked> {
    let answer = async {
        let user_id = caller.who.id;
        if !tokens::delete_own(&gh.db, user_id, id).await? {
            return Err(AuthError::NotFound);
        }
        let event = AuthEvent::TokenRevoked {
            user_id,
            token_id: id,
        };
        gh.events.emit(event, &caller.from).await;
        if content_type.is_some_and(|ct| ct.is_form()) {
            caller.session.set_flash(json!({"message": "token_revoked"}));
            let back = Redirect::to(Screen::Account.path());
            return Ok(Revoked::Screen(Box::new(back)));
        }
        Ok(Revoked::Done(Status::NoContent))
    }
    .await;
    Posted(answer)
}
