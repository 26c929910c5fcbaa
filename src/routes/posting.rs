//! [`Posting`]: what a route that changes something takes of its request —
//! a same-origin request (403 `cross_origin` otherwise) of a signed-in user
//! ([`AccountRequest`]: 401, or the sign-in screen for a browser) or of a
//! guest ([`GuestRequest`]: a signed-in browser is forwarded to the route's
//! fallback), with its session, client, language and cookies — and the
//! password asked again before a change to an account
//! ([`AccountRequest::confirm_password`]).

use rocket::http::{CookieJar, Status};
use rocket::outcome::try_outcome;
use rocket::request::{FromRequest, Outcome, Request};

use super::confirm::confirm_password;
use crate::body::Input;
use crate::error::AuthError;
use crate::events::Origin;
use crate::i18n::Language;
use crate::security::{ClientIp, SameOrigin};
use crate::session::{AuthUser, Guest, Session};
use crate::state::GatehouseState;

/// A same-origin request of `W` (the signed-in user, or a guest), and what
/// the routes use of it.
pub struct Posting<'r, W> {
    /// Who asks: [`AuthUser`] or [`Guest`].
    pub who: W,
    /// The request's session.
    pub session: Session,
    /// Where the request came from (for events).
    pub from: Origin,
    /// The client address (for the throttles).
    pub client: ClientIp,
    /// The request's language (for screens and mails).
    pub language: Language,
    /// Rocket's cookies of the request.
    pub jar: &'r CookieJar<'r>,
}

/// A same-origin request of the signed-in user: every account route's.
pub type AccountRequest<'r> = Posting<'r, AuthUser>;

/// A same-origin request of a guest: the sign-in routes'.
pub type GuestRequest<'r> = Posting<'r, Guest>;

impl AccountRequest<'_> {
    /// Reads the password field `field` of `input` and checks it is the
    /// caller's, as a sign-in checks it: a missing one is 422 `required`, a
    /// wrong one 422 `current_password` and a failed sign-in.
    pub async fn confirm_password(
        &self,
        gh: &GatehouseState,
        input: &Input,
        field: &'static str,
    ) -> Result<(), AuthError> {
        confirm_password(gh, &self.who, self.client, &self.from, input, field).await
    }
}

#[rocket::async_trait]
impl<'r, W> FromRequest<'r> for Posting<'r, W>
where
    W: FromRequest<'r, Error = AuthError> + Send,
{
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        // In the order the routes took them one by one: the origin first.
        try_outcome!(req
            .guard::<SameOrigin>()
            .await
            .map_error(|(status, _)| (status, AuthError::CrossOrigin)));
        let who = try_outcome!(req.guard::<W>().await);
        let session = try_outcome!(req.guard::<Session>().await);
        // These three always succeed.
        let (Some(from), Some(client), Some(language)) = (
            req.guard::<Origin>().await.succeeded(),
            req.guard::<ClientIp>().await.succeeded(),
            req.guard::<Language>().await.succeeded(),
        ) else {
            return Outcome::Forward(Status::InternalServerError);
        };
        Outcome::Success(Posting {
            who,
            session,
            from,
            client,
            language,
            jar: req.cookies(),
        })
    }
}
