//! The client's address, as far as it can be trusted.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

/// Who a client is, for counting it: an IPv4 address (also one written as
/// an IPv4-mapped IPv6 address) as it is, an IPv6 address by its /64, the
/// smallest block a network hands out — one subscriber holds all of it and
/// could take a new address per try. Every per-client count (the per-IP
/// budgets, the per-account sign-in counter, the hash queue's share) keys
/// on this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientBlock(IpAddr);

impl From<IpAddr> for ClientBlock {
    fn from(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Self(IpAddr::V6(Ipv6Addr::from(prefix)))
                }
            },
            IpAddr::V4(_) => Self(ip),
        }
    }
}

impl fmt::Display for ClientBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => v4.fmt(f),
            IpAddr::V6(prefix) => write!(f, "{prefix}/64"),
        }
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

