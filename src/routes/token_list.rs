//! The caller's tokens for scripts as `GET /auth/tokens` and the account
//! screen list them (never a token itself: its first characters), and the
//! sets a new one may be given. It declares no route.

use serde_json::{json, Value};

use crate::auth::tokens::{self, StoredToken};
use crate::clock::rfc3339;
use crate::error::AuthError;
use crate::odata::Caller;
use crate::session::AuthUser;
use crate::state::GatehouseState;

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

/// The caller's tokens as `{"value": [...]}`, oldest first.
pub async fn of_user(gh: &GatehouseState, user: &AuthUser) -> Result<Value, AuthError> {
    let value: Vec<Value> = tokens::of_user(&gh.db, user.id)
        .await?
        .iter()
        .map(listed)
        .collect();
    Ok(json!({ "value": value }))
}

/// The names of the OData sets `owner` may read, in service-document
/// order: those a new token of theirs may be given.
pub fn readable_sets(gh: &GatehouseState, owner: &Caller) -> Vec<String> {
    gh.odata_model
        .sets
        .iter()
        .filter(|set| set.readable_by(owner))
        .map(|set| set.name.clone())
        .collect()
}
