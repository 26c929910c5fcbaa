//! Request guards: who may call a route.
//!
//! A handler that takes [`AuthUser`] cannot run for a guest: a browser asking
//! for a page is sent to `/login` (and comes back here after signing in), a
//! script gets 401 `{"message":"unauthenticated"}`. A handler that takes
//! [`Guest`] does not run for a signed-in user; Gatehouse's guest-only routes
//! have a fallback that sends such a browser to `dashboard`.

use rocket::http::{Method, Status};
use rocket::request::{FromRequest, Outcome, Request};
use rocket::{Ignite, Rocket, Sentinel};
use serde_json::Value;

use super::{gatehouse_missing, wants_html, Session, INTENDED_KEY};
use crate::auth::users;
use crate::error::AuthError;
use crate::shared::Shared;

/// The signed-in user of this request.
#[derive(Debug, Clone)]
pub struct AuthUser {
    /// `users.id`.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// E-mail address.
    pub email: String,
}

async fn current_user(req: &Request<'_>) -> Result<Option<AuthUser>, AuthError> {
    let session = Session::of(req).await?;
    let Some(id) = session.user_id() else {
        return Ok(None);
    };
    let Some(gh) = Shared::of(req) else {
        return Ok(None);
    };
    Ok(users::find_by_id(&gh.db, id).await?.map(|u| AuthUser {
        id: u.id,
        name: u.name,
        email: u.email,
    }))
}

/// Why the signed-in user could not be looked up, kept for every guard of
/// the request: the status it answers (503 while the database is
/// unreachable) and the cause.
#[derive(Debug, Clone)]
struct LookupFailed(Status, String);

impl LookupFailed {
    fn outcome<T>(&self) -> Outcome<T, AuthError> {
        let LookupFailed(status, cause) = self;
        let error = match *status {
            Status::ServiceUnavailable => AuthError::Unavailable,
            _ => AuthError::Internal(cause.clone()),
        };
        Outcome::Error((*status, error))
    }
}

/// The signed-in user, looked up once per request.
async fn resolve<'r>(req: &'r Request<'_>) -> &'r Result<Option<AuthUser>, LookupFailed> {
    req.local_cache_async(async {
        current_user(req)
            .await
            .map_err(|e| LookupFailed(e.status(), e.to_string()))
    })
    .await
}

/// A host that takes this guard without attaching the Gatehouse fairing
/// fails at launch (ignite answers `SentinelAborts`), naming the fairing,
/// instead of treating every caller as a guest.
impl Sentinel for AuthUser {
    fn abort(rocket: &Rocket<Ignite>) -> bool {
        gatehouse_missing(rocket, "AuthUser")
    }
}

/// Launch fails without the Gatehouse fairing (see [`AuthUser`]'s).
impl Sentinel for Guest {
    fn abort(rocket: &Rocket<Ignite>) -> bool {
        gatehouse_missing(rocket, "Guest")
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for AuthUser {
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        match resolve(req).await {
            Ok(Some(user)) => Outcome::Success(user.clone()),
            Ok(None) => {
                if req.method() == Method::Get && wants_html(req) {
                    if let (Some(session), Some(gh)) =
                        (Session::cached(req), Shared::of(req))
                    {
                        let target = gh.settings.absolute(&req.uri().to_string());
                        session.insert(INTENDED_KEY, Value::String(target));
                    }
                }
                Outcome::Error((Status::Unauthorized, AuthError::Unauthenticated))
            }
            Err(failed) => failed.outcome(),
        }
    }
}

/// A caller who is not signed in. Forwards (to the signed-in fallback) otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Guest;

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Guest {
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        match resolve(req).await {
            Ok(Some(_)) => Outcome::Forward(Status::SeeOther),
            Ok(None) => Outcome::Success(Guest),
            Err(failed) => failed.outcome(),
        }
    }
}
