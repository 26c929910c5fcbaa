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

use super::password_change::{self, Due};
use super::{forget_remembered, gatehouse_missing, wants_html, Session, INTENDED_KEY};
use crate::auth::users;
use crate::error::AuthError;
use crate::shared::Shared;

/// The signed-in user of this request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthUser {
    /// `users.id`.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// E-mail address.
    pub email: String,
}

/// The signed-in user of a request, and whether their password must be
/// changed before anything else ([`password_change`]).
#[derive(Debug, Clone)]
pub(crate) struct SignedIn {
    /// Who is signed in.
    pub(crate) user: AuthUser,
    /// Their password is marked breached: only the change and signing out
    /// are open to this session.
    pub(crate) must_change_password: bool,
}

async fn current_user(req: &Request<'_>) -> Result<Option<SignedIn>, AuthError> {
    let session = Session::of(req).await?;
    let Some(id) = session.user_id() else {
        return Ok(None);
    };
    let Some(gh) = Shared::of(req) else {
        return Ok(None);
    };
    let Some(user) = users::find_by_id(&gh.db, id).await? else {
        return Ok(None);
    };
    if user.breached && password_change::due(&session) == Due::Lapsed {
        // Ten minutes without a new password: the session ends, and this
        // browser's remember-me cookie with it.
        session.destroy();
        forget_remembered(req.cookies(), gh).await?;
        return Ok(None);
    }
    Ok(Some(SignedIn {
        user: AuthUser {
            id: user.id,
            name: user.name,
            email: user.email,
        },
        must_change_password: user.breached,
    }))
}

/// Why the signed-in user could not be looked up, kept for every guard of
/// the request: the status it answers (503 while the database is
/// unreachable) and the cause.
#[derive(Debug, Clone)]
struct LookupFailed(Status, String);

impl LookupFailed {
    fn error(&self) -> AuthError {
        match self {
            LookupFailed(Status::ServiceUnavailable, _) => AuthError::Unavailable,
            LookupFailed(_, cause) => AuthError::Internal(cause.clone()),
        }
    }

    fn outcome<T>(&self) -> Outcome<T, AuthError> {
        Outcome::Error((self.0, self.error()))
    }
}

/// The signed-in user, looked up once per request.
async fn resolve<'r>(req: &'r Request<'_>) -> &'r Result<Option<SignedIn>, LookupFailed> {
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
            Ok(Some(signed)) if signed.must_change_password => {
                if password_change::open_to(req.uri().path().as_str()) {
                    return Outcome::Success(signed.user.clone());
                }
                // The 403 catcher sends a browser to the change screen.
                req.local_cache(|| PasswordChangeRefused(true));
                Outcome::Error((Status::Forbidden, AuthError::PasswordChangeRequired))
            }
            Ok(Some(signed)) => Outcome::Success(signed.user.clone()),
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

/// Whether this request's [`AuthUser`] guard refused a session that must
/// change its password first (what the 403 catcher answers).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PasswordChangeRefused(pub(crate) bool);

impl PasswordChangeRefused {
    /// Whether `req` was refused for want of a new password.
    pub(crate) fn of(req: &Request<'_>) -> bool {
        req.local_cache(|| PasswordChangeRefused(false)).0
    }
}

/// A signed-in caller who must choose a new password now; forwards for
/// anyone else (the change screen sends them on, its `POST` answers 404
/// `unknown_intent`).
#[derive(Debug, Clone, Copy)]
pub struct PasswordChangeDue;

#[rocket::async_trait]
impl<'r> FromRequest<'r> for PasswordChangeDue {
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        match resolve(req).await {
            Ok(Some(signed)) if signed.must_change_password => Outcome::Success(PasswordChangeDue),
            Ok(_) => Outcome::Forward(Status::NotFound),
            Err(failed) => failed.outcome(),
        }
    }
}

/// Whether the session of `req` is signed in and must change its password
/// first (the OData routes refuse it: 403 `password_change_required`).
pub(crate) async fn password_change_due(req: &Request<'_>) -> Result<bool, AuthError> {
    match resolve(req).await {
        Ok(signed) => Ok(signed.as_ref().is_some_and(|s| s.must_change_password)),
        Err(failed) => Err(failed.error()),
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
