//! The client's address, as far as it can be trusted.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use rocket::request::Request;

use crate::config::Settings;

/// The client address: the socket peer, unless the peer is a configured
/// trusted proxy that sent `X-Forwarded-For`, in which case the right-most
/// address in that header not itself a trusted proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// Determines the client address of `req`.
    pub fn of(req: &Request<'_>, settings: &Settings) -> Self {
        let peer = req
            .remote()
            .map(|r| r.ip())
            .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let trusted = &settings.auth.trusted_proxies;
        if !trusted.contains(&peer) {
            return Self(peer);
        }
        let forwarded = req
            .headers()
            .get("X-Forwarded-For")
            .flat_map(|h| h.split(','));
        let chain: Vec<IpAddr> = forwarded
            .filter_map(|part| part.trim().parse().ok())
            .collect();
        let client = chain.iter().rev().find(|ip| !trusted.contains(ip)).copied();
        Self(client.unwrap_or(peer))
    }
}

impl fmt::Display for ClientIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The client address as a request guard (never fails).
#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for ClientIp {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> rocket::request::Outcome<Self, Self::Error> {
        let ip = match crate::shared::Shared::of(req) {
            Some(gh) => ClientIp::of(req, &gh.settings),
            None => ClientIp(req.client_ip().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))),
        };
        rocket::request::Outcome::Success(ip)
    }
}
