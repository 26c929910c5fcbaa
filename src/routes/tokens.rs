//! Access for scripts: the caller's personal access tokens.
//! `GET /auth/tokens`, `POST /auth/tokens` (sudo mode) and
//! `POST /auth/tokens/<id>/revoke`. A token is answered once, when it is
//! made (and its owner is mailed); the listing shows its first characters
//! only. A token reads no more than its owner may, and only the sets it
//! was given.

use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde_json::{json, Value};

use super::notify::{notify, recipient};
use super::posting::AccountRequest;
use super::sudo::Confirmed;
use crate::auth::tokens::{self, NewToken, StoredToken};
use crate::body::Input;
use crate::clock::{rfc3339, unix_now};
use crate::domain::SecretToken;
use crate::error::{AuthError, FieldErrors};
use crate::events::AuthEvent;
use crate::mail::Notice;
use crate::odata::{Caller, Service};
use crate::session::AuthUser;
use crate::state::GatehouseState;

/// The lifetimes a token may be given, in days.
const EXPIRY_DAYS: [i64; 3] = [7, 30, 90];
/// The longest label.
const MAX_NAME_CHARS: usize = 64;
/// The most sets one token is given by name.
const MAX_SETS: usize = 64;

/// A token as its owner's listing shows it: never the token.
fn listed(token: &StoredToken) -> Value {
    json!({
        "id": token.id,
        "name": token.name,
        "prefix": token.prefix,
        "created_at": token.created_at.map(rfc3339),
        "last_used_at": token.last_used_at.map(rfc3339),
        "expires_at": token.expires_at.map(rfc3339),
        "sets": token.sets,
    })
}

/// `GET /auth/tokens`: the caller's tokens, oldest first.
#[get("/auth/tokens")]
pub async fn list(user: AuthUser, gh: &State<GatehouseState>) -> Result<Json<Value>, AuthError> {
    let value: Vec<Value> = tokens::of_user(&gh.db, user.id)
        .await?
        .iter()
        .map(listed)
        .collect();
    Ok(Json(json!({ "value": value })))
}

/// What a new token's body asks for, checked: its label, its sets and its
/// lifetime.
fn asked(
    gh: &GatehouseState,
    service: &Service,
    owner: &Caller,
    input: &Input,
) -> Result<NewToken, AuthError> {
    let mut errors = FieldErrors::new();
    let name = input.required_text("name", &mut errors);
    if name.as_ref().is_some_and(|n| n.chars().count() > MAX_NAME_CHARS) {
        errors.add("name", "max");
    }
    let days = match (input.names("expires_days"), input.integer("expires_days", &mut errors)) {
        (false, _) => Some(tokens::DEFAULT_LIFETIME_DAYS),
        (true, Some(days)) if EXPIRY_DAYS.contains(&days) => Some(days),
        (true, None) if gh.settings.tokens.allow_no_expiry && errors.count("expires_days") == 0 => {
            None
        }
        (true, _) => {
            errors.add("expires_days", "in");
            None
        }
    };
    let sets = input.list("sets", &mut errors);
    if let Some(sets) = &sets {
        let readable = |name: &String| {
            service
                .model
                .find(name)
                .is_some_and(|set| set.readable_by(owner))
        };
        if sets.is_empty() || sets.len() > MAX_SETS {
            errors.add("sets", "in");
        } else if !sets.iter().all(readable) {
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

/// `POST /auth/tokens` `{"name", "expires_days": 7|30|90|null, "sets":
/// [names]}` (sudo mode): 201 with the token, shown this once.
#[post("/auth/tokens", data = "<body>")]
pub async fn create(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    service: &State<Service>,
    body: Result<Confirmed, AuthError>,
) -> Result<(Status, Json<Value>), AuthError> {
    let input = body?.into_input();
    let user_id = caller.who.id;
    let new = asked(gh, service, &Caller::user(user_id), &input)?;
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
    Ok((
        Status::Created,
        Json(json!({
            "id": id,
            "token": token.expose(),
            "name": new.name,
            "expires_at": new.expires_at.map(rfc3339),
            "sets": new.sets,
        })),
    ))
}

/// `POST /auth/tokens/<id>/revoke`: 204; 404 unless the token is the
/// caller's.
#[post("/auth/tokens/<id>/revoke")]
pub async fn revoke(
    caller: AccountRequest<'_>,
    gh: &State<GatehouseState>,
    id: i64,
) -> Result<Status, AuthError> {
    let user_id = caller.who.id;
    if !tokens::delete_own(&gh.db, user_id, id).await? {
        return Err(AuthError::NotFound);
    }
    let event = AuthEvent::TokenRevoked {
        user_id,
        token_id: id,
    };
    gh.events.emit(event, &caller.from).await;
    Ok(Status::NoContent)
}
