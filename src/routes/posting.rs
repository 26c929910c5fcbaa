//! [`Posting`]: what a route that changes something takes of its request —
//! a same-origin request (403 `cross_origin` otherwise) of a signed-in user
//! ([`AccountRequest`]: 401, or the sign-in screen for a browser) or of a
//! guest ([`GuestRequest`]: a signed-in browser is forwarded to the route's
//! fallback), with its session, client, language and cookies — and a
//! change to how the caller signs in, all or nothing
//! ([`AccountRequest::change_credentials`]).

use rocket::http::{CookieJar, Status};
use rocket::outcome::try_outcome;
use rocket::request::{FromRequest, Outcome, Request};

use crate::db::{DbError, Tx};
use crate::error::AuthError;
use crate::events::Origin;
use crate::i18n::Language;
use crate::security::{ClientIp, SameOrigin};
use crate::session::{credential_change, reissue_remembered, AuthUser, Ending, Guest, Session};
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

/// Which of the caller's sessions a change to how they sign in keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeping {
    /// None: every session ends, and this browser is signed in again
    /// under a new id (a new password).
    NoneButThisBrowser,
    /// This session; every other ends ("end others").
    ThisSession,
    /// This session and the others the password signed in; those a
    /// remember-me cookie recalled end (two-factor changes).
    PasswordSessions,
}

impl AccountRequest<'_> {
    /// Runs `change` in one transaction with what it ends (the sessions
    /// `keeping` does not keep, every remember-me cookie of the caller,
    /// every pending sign-in); then this browser, if it had a remember-me
    /// cookie, gets a new one, so that only a copy of the old one stops
    /// working. Answers what `change` answered and how many sessions ended.
    pub async fn change_credentials<T, E>(
        &self,
        gh: &GatehouseState,
        keeping: Keeping,
        change: impl AsyncFnOnce(&mut Tx) -> Result<T, E>,
    ) -> Result<(T, u64), AuthError>
    where
        E: From<DbError>,
        AuthError: From<E>,
    {
        let user_id = self.who.id;
        let own = self.session.stored_id().unwrap_or_default();
        let ending = match keeping {
            Keeping::NoneButThisBrowser => Ending::All,
            Keeping::ThisSession => Ending::AllBut(&own),
            Keeping::PasswordSessions => Ending::RecalledBut(&own),
        };
        let done = credential_change(&gh.db, user_id, ending, change).await?;
        if keeping == Keeping::NoneButThisBrowser {
            self.session.sign_in(user_id);
        }
        reissue_remembered(self.jar, gh, user_id, &self.session).await?;
        Ok(done)
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
