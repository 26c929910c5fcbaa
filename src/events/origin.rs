//! Where an event came from: a request's client, or the command line.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr};

use rocket::request::{FromRequest, Outcome, Request};

use crate::security::ClientIp;

/// The longest `User-Agent` kept, in characters (as for sessions).
pub const MAX_USER_AGENT_CHARS: usize = 512;

/// Where an event came from, as the security activity log records it.
///
/// A route takes it as a request guard (it never fails):
///
/// ```ignore
/// #[post("/auth/password", data = "<body>")]
/// async fn change_password(origin: Origin, gh: &State<GatehouseState>, …) {
///     gh.events.emit(AuthEvent::PasswordChanged { user_id }, &origin).await;
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A request: its client address ([`ClientIp`]: the socket peer or what
    /// a trusted proxy forwarded) and its `User-Agent`, if it sent one.
    Request {
        /// The client address.
        ip: IpAddr,
        /// The `User-Agent` header, cut to [`MAX_USER_AGENT_CHARS`].
        user_agent: Option<String>,
    },
    /// An operator's command (`Accounts`), outside any request.
    CommandLine,
}

impl Origin {
    /// A request from `ip` that sent `user_agent` (cut to
    /// [`MAX_USER_AGENT_CHARS`]).
    pub fn request(ip: ClientIp, user_agent: Option<&str>) -> Self {
        Self::Request {
            ip: ip.0,
            user_agent: user_agent.map(|ua| ua.chars().take(MAX_USER_AGENT_CHARS).collect()),
        }
    }

    /// The client address, for a request.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            Self::Request { ip, .. } => Some(*ip),
            Self::CommandLine => None,
        }
    }

    /// The client's `User-Agent`, for a request that sent one.
    pub fn user_agent(&self) -> Option<&str> {
        match self {
            Self::Request { user_agent, .. } => user_agent.as_deref(),
            Self::CommandLine => None,
        }
    }
}

/// The origin of the current request (never fails).
#[rocket::async_trait]
impl<'r> FromRequest<'r> for Origin {
    type Error = Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        // `ClientIp` always succeeds; the fallback only satisfies the type.
        let ip = req
            .guard::<ClientIp>()
            .await
            .succeeded()
            .unwrap_or(ClientIp(IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
        Outcome::Success(Self::request(ip, req.headers().get_one("User-Agent")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_user_agent_is_cut_on_a_character_boundary() {
        let ip = ClientIp("203.0.113.9".parse().expect("an address"));
        let long = "é".repeat(MAX_USER_AGENT_CHARS + 10);
        let origin = Origin::request(ip, Some(&long));
        assert_eq!(
            origin.user_agent().map(|ua| ua.chars().count()),
            Some(MAX_USER_AGENT_CHARS)
        );
        assert_eq!(origin.ip(), Some(ip.0));
        assert_eq!(Origin::CommandLine.ip(), None);
    }
}
