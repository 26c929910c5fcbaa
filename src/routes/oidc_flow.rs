//! A flow with a provider, kept in the session from its start to its
//! callback: ten minutes, taken once (a second callback with the same
//! `state`, or one in a browser that did not start the flow, finds none).
//! Every flow starts at [`authorization_url`], whichever route sends the
//! browser (a guest's sign-in, a link, a fresh proof).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use subtle::ConstantTimeEq;

use crate::auth::oidc::{Provider, FLOW_SECONDS};
use crate::clock::unix_now;
use crate::session::Session;

const KEY: &str = "oidc.flow";

/// What the callback of a flow does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FlowKind {
    /// Signs someone in.
    SignIn,
    /// Links the provider's account to the signed-in user `user_id`.
    Link {
        /// `users.id` of the user who started it.
        user_id: i64,
    },
    /// A fresh proof of who the signed-in user `user_id` is (an account
    /// without a password, before a change to it): the provider signs them
    /// in again now.
    Confirm {
        /// `users.id` of the user who started it.
        user_id: i64,
    },
}

/// One flow's secrets and purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Flow {
    /// The provider's configured name.
    pub provider: String,
    /// The `state` sent.
    pub state: String,
    /// The `nonce` sent.
    pub nonce: String,
    /// PKCE's verifier.
    pub verifier: String,
    /// Whether the sign-in asked to be remembered.
    pub remember: bool,
    /// What the callback does.
    pub kind: FlowKind,
    /// Unix seconds after which the callback is refused.
    pub until: i64,
}

impl Flow {
    /// Keeps this flow in `session` (replacing any earlier one).
    pub fn keep(self, session: &Session) {
        if let Ok(value) = serde_json::to_value(&self) {
            session.insert(KEY, value);
        }
    }

    /// Takes the flow of `session` that sent `state` to `provider`, if it
    /// is there and in time; any flow there is dropped either way.
    pub fn take(session: &Session, provider: &str, state: &str) -> Option<Flow> {
        let flow: Flow = serde_json::from_value(session.remove(KEY).unwrap_or(Value::Null)).ok()?;
        let matches = flow.provider == provider
            && bool::from(flow.state.as_bytes().ct_eq(state.as_bytes()));
        (matches && flow.until > unix_now()).then_some(flow)
    }
}

/// Starts a flow of `kind` with `provider` in `session` and answers the
/// provider's URL to send the browser to; `None` while the provider cannot
/// be reached.
pub(crate) async fn authorization_url(
    provider: &Provider,
    session: &Session,
    kind: FlowKind,
    remember: bool,
) -> Option<String> {
    // A proof must be made now: the provider asks again, whatever session
    // it has.
    let fresh = matches!(kind, FlowKind::Confirm { .. });
    let begun = provider.begin(fresh).await.ok()?;
    Flow {
        provider: provider.name.clone(),
        state: begun.state,
        nonce: begun.nonce,
        verifier: begun.verifier,
        remember,
        kind,
        until: unix_now() + FLOW_SECONDS,
    }
    .keep(session);
    Some(begun.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(until: i64) -> Flow {
        Flow {
            provider: "acme".into(),
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            remember: false,
            kind: FlowKind::SignIn,
            until,
        }
    }

    #[test]
    fn a_flow_is_taken_once_by_its_state_and_provider_and_in_time() {
        let session = Session::default();
        let until = unix_now() + 60;
        flow(until).keep(&session);
        assert_eq!(Flow::take(&session, "acme", "s"), Some(flow(until)));
        assert_eq!(Flow::take(&session, "acme", "s"), None, "taken once");
        for (provider, state) in [("other", "s"), ("acme", "forged")] {
            flow(until).keep(&session);
            assert_eq!(Flow::take(&session, provider, state), None);
            assert_eq!(Flow::take(&session, "acme", "s"), None, "dropped by a wrong try");
        }
        flow(unix_now() - 1).keep(&session);
        assert_eq!(Flow::take(&session, "acme", "s"), None, "expired");
    }
}
