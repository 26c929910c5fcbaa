//! [`AccountRequest`]: what every account route takes of its request — a
//! same-origin request (403 `cross_origin` otherwise) of a signed-in user
//! (401, or the sign-in screen for a browser), with its session, client,
//! language and cookies — and the password asked again before a change
//! ([`AccountRequest::confirm_password`]).

use rocket::http::CookieJar;
use rocket::outcome::try_outcome;
use rocket::request::{FromRequest, Outcome, Request};

use super::confirm::confirm_password;
use crate::body::Input;
use crate::error::AuthError;
use crate::events::Origin;
use crate::i18n::Language;
use crate::security::{ClientIp, SameOrigin};
use crate::session::{AuthUser, Session};
use crate::state::GatehouseState;

/// The signed-in user of a same-origin request, and what the account
/// routes use of the request.
pub struct AccountRequest<'r> {
    /// The signed-in user.
    pub user: AuthUser,
    /// The request's session.
    pub session: Session,
    /// Where the request came from (for events).
    pub from: Origin,
    /// The client address (for the sign-in throttle).
    pub client: ClientIp,
    /// The request's language (for screens and mails).
    pub language: Language,
    /// Rocket's cookies of the request.
    pub jar: &'r CookieJar<'r>,
}

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
        confirm_password(gh, &self.user, self.client, &self.from, input, field).await
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for AccountRequest<'r> {
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        // In the order the routes took them one by one: the origin first.
        try_outcome!(req
            .guard::<SameOrigin>()
            .await
            .map_error(|(status, _)| (status, AuthError::CrossOrigin)));
        let user = try_outcome!(req.guard::<AuthUser>().await);
        let session = try_outcome!(req.guard::<Session>().await);
        // These three always succeed.
        let (Some(from), Some(client), Some(language)) = (
            req.guard::<Origin>().await.succeeded(),
            req.guard::<ClientIp>().await.succeeded(),
            req.guard::<Language>().await.succeeded(),
        ) else {
            return Outcome::Forward(rocket::http::Status::InternalServerError);
        };
        Outcome::Success(AccountRequest {
            user,
            session,
            from,
            client,
            language,
            jar: req.cookies(),
        })
    }
}
