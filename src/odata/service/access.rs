//! Who an OData request acts for: the user of a personal access token sent as
//! `Authorization: Bearer <token>`, else the signed-in user of the session
//! cookie, else a guest (who may read public sets only). A bearer token that
//! is not valid is refused outright rather than treated as a guest; a session
//! that must choose a new password first is refused too. A token's use from
//! another address than its last is a `token_used` event.

use rocket::http::Status;
use rocket::Request;

use crate::auth::tokens;
use crate::events::{AuthEvent, Origin};
use crate::odata::model::scope::Caller;
use crate::odata::plan::error::ODataError;
use crate::odata::service::state::Service;
use crate::session::{password_change_due, Session};

/// The caller of `req`.
pub async fn caller(req: &Request<'_>, service: &Service) -> Result<Caller, ODataError> {
    if let Some(header) = req.headers().get_one("Authorization") {
        let (scheme, token) = header.trim().split_once(' ').unwrap_or((header, ""));
        if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
            return Err(ODataError::unauthorized());
        }
        let from = req.guard::<Origin>().await.succeeded();
        let address = from.as_ref().and_then(Origin::ip).map(|ip| ip.to_string());
        let address = address.unwrap_or_default();
        let Some(grant) = tokens::user_of(&service.db, token.trim(), &address).await? else {
            return Err(ODataError::unauthorized());
        };
        if let (true, Some(from)) = (grant.new_ip, &from) {
            let event = AuthEvent::TokenUsed {
                user_id: grant.user_id,
                token_id: grant.token_id,
            };
            service.events.emit(event, from).await;
        }
        return Ok(Caller {
            user_id: Some(grant.user_id),
            sets: grant.sets.map(Into::into),
        });
    }
    if req.cookies().iter().next().is_none() {
        return Ok(Caller::default());
    }
    let session = Session::of(req).await?;
    let due = password_change_due(req)
        .await
        .map_err(|e| match e.status() {
            Status::ServiceUnavailable => ODataError::unavailable(&e),
            _ => ODataError::internal(&e),
        })?;
    if due {
        return Err(ODataError::password_change_required());
    }
    Ok(Caller {
        user_id: session.user_id(),
        sets: None,
    })
}
