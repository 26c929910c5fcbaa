//! The device authorization grant's endpoints for scripts (RFC 8628):
//! `POST /auth/device/code` hands out a device code and a user code;
//! `POST /auth/device/token`, polled with the device code, answers
//! `authorization_pending`, `slow_down`, `access_denied` or
//! `expired_token` until a person's answer on the `/device` screen, then a
//! personal access token, once (`invalid_grant` after). Only the clients
//! of `auth.device_clients` may ask (`invalid_client`).

use rocket::{post, State};
use serde_json::json;

use super::notify::{notify, Recipient};
use super::oauth::{OAuthForm, OAuthReply};
use crate::auth::device_grant::{
    self, scope_of, CodeRequest, OAuthError, Poll, TokenRequest, INTERVAL_SECONDS,
    LIFETIME_SECONDS,
};
use crate::auth::tokens::{self, NewToken, DEFAULT_LIFETIME_DAYS};
use crate::auth::{users, Attempt};
use crate::clock::unix_now;
use crate::domain::SecretToken;
use crate::events::{AuthEvent, Origin};
use crate::mail::Notice;
use crate::odata::Service;
use crate::screens::Screen;
use crate::security::{ClientIp, SameOrigin};
use crate::state::GatehouseState;

/// The label `client_id` is shown with, if it may ask.
fn client_label<'a>(gh: &'a GatehouseState, client_id: &str) -> Result<&'a str, OAuthError> {
    gh.settings
        .auth
        .device_clients
        .get(client_id)
        .map(String::as_str)
        .ok_or(OAuthError::InvalidClient)
}

/// `POST /auth/device/code` (`client_id`, `scope`): the codes, the screen
/// to type the user code on, how long they live and how often to poll.
#[post("/auth/device/code", data = "<body>")]
pub async fn code(
    _origin: SameOrigin,
    client: ClientIp,
    gh: &State<GatehouseState>,
    service: &State<Service>,
    body: Result<OAuthForm, OAuthError>,
) -> Result<OAuthReply, OAuthReply> {
    let request = CodeRequest::of(&body?.0)?;
    client_label(gh, &request.client_id)?;
    let served = |set: &String| service.model.find(set).is_some();
    if !request.sets.iter().flatten().all(served) {
        return Err(OAuthError::InvalidScope.into());
    }
    let budget = &gh.throttles.device_codes_ip;
    if let Attempt::Refused { retry_after, .. } =
        budget.hit(&budget.ip_key(&client.to_string())).await?
    {
        return Err(OAuthReply::Throttled { retry_after });
    }
    let issued = device_grant::issue(&gh.db, &request.client_id, request.sets.as_deref()).await?;
    let screen = gh.settings.absolute(Screen::Device.path());
    let user_code = issued.user_code.to_string();
    Ok(OAuthReply::Answer(json!({
        "device_code": issued.device_code.expose(),
        "user_code": user_code,
        "verification_uri": screen,
        "verification_uri_complete": format!("{screen}?user_code={user_code}"),
        "expires_in": LIFETIME_SECONDS,
        "interval": INTERVAL_SECONDS,
    })))
}

/// `POST /auth/device/token` (`grant_type`, `device_code`, `client_id`):
/// RFC 8628's errors until the user code is answered, then a token for the
/// approver, reading the sets asked for, under the client's label.
#[post("/auth/device/token", data = "<body>")]
pub async fn token(
    _origin: SameOrigin,
    from: Origin,
    gh: &State<GatehouseState>,
    body: Result<OAuthForm, OAuthError>,
) -> Result<OAuthReply, OAuthReply> {
    let request = TokenRequest::of(&body?.0)?;
    let label = client_label(gh, &request.client_id)?;
    let approval = match device_grant::poll(&gh.db, &request.device_code, &request.client_id).await? {
        Poll::Approved(approval) => approval,
        Poll::Pending => return Err(OAuthError::AuthorizationPending.into()),
        Poll::SlowDown => return Err(OAuthError::SlowDown.into()),
        Poll::Denied => return Err(OAuthError::AccessDenied.into()),
        Poll::Expired => return Err(OAuthError::ExpiredToken.into()),
        Poll::Invalid => return Err(OAuthError::InvalidGrant.into()),
    };
    let Some(owner) = users::find_by_id(&gh.db, approval.user_id).await? else {
        return Err(OAuthError::InvalidGrant.into());
    };
    let lifetime = DEFAULT_LIFETIME_DAYS * 86_400;
    let new = NewToken {
        name: label.to_owned(),
        sets: approval.sets,
        expires_at: Some(unix_now() + lifetime),
    };
    let token = SecretToken::generate();
    let token_id = tokens::create_with(&gh.db, owner.id, &new, &token).await?;
    let event = AuthEvent::TokenCreated {
        user_id: owner.id,
        token_id,
        name: new.name.clone(),
    };
    gh.events.emit(event, &from).await;
    let to = Recipient {
        name: &owner.name,
        email: &owner.email,
    };
    let notice = Notice::TokenCreated {
        name: new.name.clone(),
    };
    notify(gh, to, approval.language, &notice);
    Ok(OAuthReply::Answer(json!({
        "access_token": token.expose(),
        "token_type": "Bearer",
        "expires_in": lifetime,
        "scope": scope_of(new.sets.as_deref()),
    })))
}
