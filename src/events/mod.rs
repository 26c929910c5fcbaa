//! Authentication events: stored as the security activity log
//! (`gatehouse_security_events`), delivered to host listeners and logged.
//!
//! ```
//! use gatehouse::{AuthEvent, AuthEventListener};
//! struct Audit;
//! impl AuthEventListener for Audit {
//!     fn on_event(&self, event: &AuthEvent) {
//!         println!("{} ({})", event.name(), event.code());
//!     }
//! }
//! ```

pub(crate) mod agent;
mod origin;
mod store;

use std::sync::Arc;

pub use origin::Origin;
pub use store::{latest as latest_events, sweep};

use crate::db::Db;

/// Something that happened to an account.
///
/// New kinds of events may be added: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthEvent {
    /// A user signed in.
    Login {
        /// `users.id`.
        user_id: i64,
        /// Whether a remember-me cookie was issued.
        remember: bool,
    },
    /// A user signed in with a passkey alone. Stored as `login` with detail
    /// `passkey`.
    PasskeyLogin {
        /// `users.id`.
        user_id: i64,
        /// Whether a remember-me cookie was issued.
        remember: bool,
    },
    /// A passkey was added to an account.
    PasskeyAdded {
        /// `users.id`.
        user_id: i64,
        /// `gatehouse_passkeys.id`.
        passkey_id: i64,
        /// The name its owner gave it.
        name: String,
    },
    /// A passkey was removed (by its owner, or by an operator).
    PasskeyRemoved {
        /// `users.id`.
        user_id: i64,
        /// `gatehouse_passkeys.id`.
        passkey_id: i64,
    },
    /// A passkey's signature counter went backwards: the authenticator may
    /// have been cloned, and the sign-in was refused.
    PasskeyRefused {
        /// `users.id`.
        user_id: i64,
        /// `gatehouse_passkeys.id`.
        passkey_id: i64,
    },
    /// A sign-in attempt failed (wrong email or password).
    Failed {
        /// The address that was tried.
        email: String,
        /// The account with that address, if there is one.
        user_id: Option<i64>,
    },
    /// A user signed in through an OpenID provider.
    OidcLogin {
        /// `users.id`.
        user_id: i64,
        /// Whether "remember me" was ticked.
        remember: bool,
        /// The provider's configured name.
        provider: String,
    },
    /// A sign-in through an OpenID provider failed (a refused answer, a
    /// token that did not verify, the provider unreachable).
    OidcFailed {
        /// The provider's configured name.
        provider: String,
        /// The account the flow was for, when one is known (a link).
        user_id: Option<i64>,
    },
    /// A provider's account was linked to a user.
    OidcLinked {
        /// `users.id`.
        user_id: i64,
        /// The provider's configured name.
        provider: String,
    },
    /// A provider's account was unlinked from a user.
    OidcUnlinked {
        /// `users.id`.
        user_id: i64,
        /// The provider's configured name.
        provider: String,
    },
    /// An address + client IP crossed the attempt limit.
    Lockout {
        /// The address that was tried.
        email: String,
        /// The client address.
        ip: String,
        /// The account with that address, if there is one.
        user_id: Option<i64>,
    },
    /// A user's second step reached the day's limit of wrong codes: no code
    /// of theirs is checked for an hour. Stored as `lockout` with detail
    /// `second factor`.
    SecondFactorLockout {
        /// `users.id`.
        user_id: i64,
    },
    /// A user signed out.
    Logout {
        /// `users.id`.
        user_id: i64,
    },
    /// A user's password was replaced through the reset flow.
    PasswordReset {
        /// `users.id`.
        user_id: i64,
    },
    /// A correct sign-in's password is in the breached-password file: the
    /// user is marked and asked for a new password at every sign-in until
    /// they choose one.
    BreachedPassword {
        /// `users.id`.
        user_id: i64,
    },
    /// A user's password was changed (by the user, or by an operator).
    PasswordChanged {
        /// `users.id`.
        user_id: i64,
    },
    /// Two-factor sign-in was turned on.
    TwoFactorEnabled {
        /// `users.id`.
        user_id: i64,
    },
    /// Two-factor sign-in was turned off.
    TwoFactorDisabled {
        /// `users.id`.
        user_id: i64,
    },
    /// A wrong two-factor code was entered.
    TwoFactorFailed {
        /// `users.id`.
        user_id: i64,
    },
    /// A recovery code completed a sign-in.
    RecoveryCodeUsed {
        /// `users.id`.
        user_id: i64,
    },
    /// Sessions of a user were ended from elsewhere (another session, or
    /// an operator).
    SessionEnded {
        /// `users.id`.
        user_id: i64,
        /// How many sessions ended.
        ended: u64,
    },
    /// A copy of a remember-me cookie was presented (a replaced
    /// validator, after the grace or from another browser): every
    /// remember-me cookie of the user was voided and the sessions the
    /// cookie signed in ended.
    RememberTheft {
        /// `users.id`.
        user_id: i64,
    },
    /// A browser bound a session to a key of its own (DBSC): a copy of
    /// the session cookie is a guest's on any other machine.
    SessionBound {
        /// `users.id`.
        user_id: i64,
    },
    /// A device-bound session's proof was refused: signed by another key,
    /// a challenge never issued, used before or too old, a key in a refresh,
    /// an algorithm other than ES256 or RS256. The reason is logged, never
    /// the proof.
    DbscProofRefused {
        /// The account the session is of, when known.
        user_id: Option<i64>,
    },
    /// A personal access token was issued.
    TokenCreated {
        /// `users.id` of the account the token acts for.
        user_id: i64,
        /// `personal_access_tokens.id`.
        token_id: i64,
        /// The token's label.
        name: String,
    },
    /// A personal access token was used from another client address than
    /// its last (or for the first time).
    TokenUsed {
        /// `users.id` of the account the token acts for.
        user_id: i64,
        /// `personal_access_tokens.id`.
        token_id: i64,
    },
    /// A personal access token was revoked.
    TokenRevoked {
        /// `users.id` of the account the token acted for.
        user_id: i64,
        /// `personal_access_tokens.id`.
        token_id: i64,
    },
}

/// The longest token label kept in an event's detail.
const MAX_DETAIL_NAME_CHARS: usize = 64;

impl AuthEvent {
    /// Short name of the event kind (`Login`, `PasswordChanged`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Login { .. } => "Login",
            Self::PasskeyLogin { .. } => "PasskeyLogin",
            Self::PasskeyAdded { .. } => "PasskeyAdded",
            Self::PasskeyRemoved { .. } => "PasskeyRemoved",
            Self::PasskeyRefused { .. } => "PasskeyRefused",
            Self::Failed { .. } => "Failed",
            Self::OidcLogin { .. } => "OidcLogin",
            Self::OidcFailed { .. } => "OidcFailed",
            Self::OidcLinked { .. } => "OidcLinked",
            Self::OidcUnlinked { .. } => "OidcUnlinked",
            Self::Lockout { .. } => "Lockout",
            Self::SecondFactorLockout { .. } => "SecondFactorLockout",
            Self::Logout { .. } => "Logout",
            Self::PasswordReset { .. } => "PasswordReset",
            Self::BreachedPassword { .. } => "BreachedPassword",
            Self::PasswordChanged { .. } => "PasswordChanged",
            Self::TwoFactorEnabled { .. } => "TwoFactorEnabled",
            Self::TwoFactorDisabled { .. } => "TwoFactorDisabled",
            Self::TwoFactorFailed { .. } => "TwoFactorFailed",
            Self::RecoveryCodeUsed { .. } => "RecoveryCodeUsed",
            Self::SessionEnded { .. } => "SessionEnded",
            Self::RememberTheft { .. } => "RememberTheft",
            Self::SessionBound { .. } => "SessionBound",
            Self::DbscProofRefused { .. } => "DbscProofRefused",
            Self::TokenCreated { .. } => "TokenCreated",
            Self::TokenRevoked { .. } => "TokenRevoked",
            Self::TokenUsed { .. } => "TokenUsed",
        }
    }

    /// The event as stored in `gatehouse_security_events.event` and read
    /// from the `SecurityEvents` set: `login`, `failed`, `lockout`,
    /// `logout`, `password_reset`, `password_changed`,
    /// `two_factor_enabled`, `two_factor_disabled`, `two_factor_failed`,
    /// `recovery_code_used`, `session_ended`, `remember_theft`,
    /// `session_bound`, `dbsc_proof_refused`, `token_created`, `token_used`,
    /// `token_revoked`, `passkey_added`, `passkey_removed`,
    /// `passkey_refused`, `breached_password`, `oidc_linked`,
    /// `oidc_unlinked`.
    ///
    /// ```
    /// use gatehouse::AuthEvent;
    /// let event = AuthEvent::Logout { user_id: 7 };
    /// assert_eq!(event.code(), "logout");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Self::Login { .. } | Self::PasskeyLogin { .. } | Self::OidcLogin { .. } => "login",
            Self::OidcFailed { .. } => "failed",
            Self::OidcLinked { .. } => "oidc_linked",
            Self::OidcUnlinked { .. } => "oidc_unlinked",
            Self::PasskeyAdded { .. } => "passkey_added",
            Self::PasskeyRemoved { .. } => "passkey_removed",
            Self::PasskeyRefused { .. } => "passkey_refused",
            Self::Failed { .. } => "failed",
            Self::Lockout { .. } | Self::SecondFactorLockout { .. } => "lockout",
            Self::Logout { .. } => "logout",
            Self::PasswordReset { .. } => "password_reset",
            Self::BreachedPassword { .. } => "breached_password",
            Self::PasswordChanged { .. } => "password_changed",
            Self::TwoFactorEnabled { .. } => "two_factor_enabled",
            Self::TwoFactorDisabled { .. } => "two_factor_disabled",
            Self::TwoFactorFailed { .. } => "two_factor_failed",
            Self::RecoveryCodeUsed { .. } => "recovery_code_used",
            Self::SessionEnded { .. } => "session_ended",
            Self::RememberTheft { .. } => "remember_theft",
            Self::SessionBound { .. } => "session_bound",
            Self::DbscProofRefused { .. } => "dbsc_proof_refused",
            Self::TokenCreated { .. } => "token_created",
            Self::TokenRevoked { .. } => "token_revoked",
            Self::TokenUsed { .. } => "token_used",
        }
    }

    /// The way in the event concerns: `passkey`, `oidc` (a provider),
    /// `remember` (a remember-me cookie), `token` (a bearer token), `dbsc`
    /// (a device-bound session's key) or `password` (a password and its
    /// second step, and everything else).
    ///
    /// ```
    /// use gatehouse::AuthEvent;
    /// assert_eq!(AuthEvent::PasskeyLogin { user_id: 7, remember: false }.method(), "passkey");
    /// assert_eq!(AuthEvent::Logout { user_id: 7 }.method(), "password");
    /// ```
    pub fn method(&self) -> &'static str {
        match self {
            Self::PasskeyLogin { .. }
            | Self::PasskeyAdded { .. }
            | Self::PasskeyRemoved { .. }
            | Self::PasskeyRefused { .. } => "passkey",
            Self::OidcLogin { .. }
            | Self::OidcFailed { .. }
            | Self::OidcLinked { .. }
            | Self::OidcUnlinked { .. } => "oidc",
            Self::RememberTheft { .. } => "remember",
            Self::TokenCreated { .. } | Self::TokenRevoked { .. } | Self::TokenUsed { .. } => {
                "token"
            }
            Self::SessionBound { .. } | Self::DbscProofRefused { .. } => "dbsc",
            _ => "password",
        }
    }

    /// The account the event concerns, when known.
    pub fn user_id(&self) -> Option<i64> {
        match self {
            Self::Failed { user_id, .. }
            | Self::Lockout { user_id, .. }
            | Self::OidcFailed { user_id, .. }
            | Self::DbscProofRefused { user_id } => *user_id,
            Self::OidcLogin { user_id, .. }
            | Self::OidcLinked { user_id, .. }
            | Self::OidcUnlinked { user_id, .. } => Some(*user_id),
            Self::Login { user_id, .. }
            | Self::PasskeyLogin { user_id, .. }
            | Self::PasskeyAdded { user_id, .. }
            | Self::PasskeyRemoved { user_id, .. }
            | Self::PasskeyRefused { user_id, .. }
            | Self::SecondFactorLockout { user_id }
            | Self::Logout { user_id }
            | Self::PasswordReset { user_id }
            | Self::BreachedPassword { user_id }
            | Self::PasswordChanged { user_id }
            | Self::TwoFactorEnabled { user_id }
            | Self::TwoFactorDisabled { user_id }
            | Self::TwoFactorFailed { user_id }
            | Self::RecoveryCodeUsed { user_id }
            | Self::SessionEnded { user_id, .. }
            | Self::RememberTheft { user_id }
            | Self::SessionBound { user_id }
            | Self::TokenCreated { user_id, .. }
            | Self::TokenRevoked { user_id, .. }
            | Self::TokenUsed { user_id, .. } => Some(*user_id),
        }
    }

    /// What the stored row says beyond kind and account: never a password,
    /// a token or the address that was tried.
    fn detail(&self) -> Option<String> {
        match self {
            Self::Login { remember: true, .. } => Some("remember".to_owned()),
            Self::PasskeyLogin { remember: false, .. } => Some("passkey".to_owned()),
            Self::PasskeyLogin { remember: true, .. } => Some("passkey, remember".to_owned()),
            Self::OidcLogin {
                remember, provider, ..
            } => Some(match remember {
                true => format!("oidc {provider}, remember"),
                false => format!("oidc {provider}"),
            }),
            Self::OidcFailed { provider, .. }
            | Self::OidcLinked { provider, .. }
            | Self::OidcUnlinked { provider, .. } => Some(format!("oidc {provider}")),
            Self::PasskeyAdded { passkey_id, name, .. } => {
                let name: String = name.chars().take(MAX_DETAIL_NAME_CHARS).collect();
                Some(format!("passkey {passkey_id} \"{name}\""))
            }
            Self::PasskeyRemoved { passkey_id, .. } => Some(format!("passkey {passkey_id}")),
            Self::PasskeyRefused { passkey_id, .. } => {
                Some(format!("passkey {passkey_id}: counter went backwards"))
            }
            Self::SecondFactorLockout { .. } => Some("second factor".to_owned()),
            Self::SessionEnded { ended, .. } => Some(format!("{ended} ended")),
            Self::TokenCreated { token_id, name, .. } => {
                let name: String = name.chars().take(MAX_DETAIL_NAME_CHARS).collect();
                Some(format!("token {token_id} \"{name}\""))
            }
            Self::TokenRevoked { token_id, .. } | Self::TokenUsed { token_id, .. } => {
                Some(format!("token {token_id}"))
            }
            _ => None,
        }
    }

    fn log(&self) {
        let name = self.name();
        match self {
            Self::Login { user_id, remember } => {
                tracing::info!(event = name, user_id, remember, "user signed in")
            }
            Self::PasskeyLogin { user_id, remember } => {
                tracing::info!(event = name, user_id, remember, "user signed in with a passkey")
            }
            Self::PasskeyAdded {
                user_id, passkey_id, ..
            } => tracing::info!(event = name, user_id, passkey_id, "passkey added"),
            Self::PasskeyRemoved {
                user_id,
                passkey_id,
            } => tracing::info!(event = name, user_id, passkey_id, "passkey removed"),
            Self::PasskeyRefused {
                user_id,
                passkey_id,
            } => tracing::warn!(
                event = name,
                user_id,
                passkey_id,
                "passkey refused: its signature counter went backwards"
            ),
            Self::RememberTheft { user_id } => tracing::warn!(
                event = name,
                user_id,
                "a copied remember-me cookie was presented: every remember-me cookie of the user voided"
            ),
            Self::Failed { .. } => tracing::info!(event = name, "sign-in failed"),
            Self::OidcLogin {
                user_id, provider, ..
            } => tracing::info!(event = name, user_id, provider, "user signed in with a provider"),
            Self::OidcFailed { provider, .. } => {
                tracing::info!(event = name, provider, "sign-in with a provider failed")
            }
            Self::OidcLinked { user_id, provider } => {
                tracing::info!(event = name, user_id, provider, "provider account linked")
            }
            Self::OidcUnlinked { user_id, provider } => {
                tracing::info!(event = name, user_id, provider, "provider account unlinked")
            }
            Self::Lockout { ip, .. } => {
                tracing::warn!(event = name, ip = %ip, "sign-in attempts throttled")
            }
            Self::SecondFactorLockout { user_id } => {
                tracing::warn!(event = name, user_id, "second-factor codes locked for an hour")
            }
            Self::Logout { user_id } => tracing::info!(event = name, user_id, "user signed out"),
            Self::PasswordReset { user_id } => {
                tracing::info!(event = name, user_id, "password reset")
            }
            Self::BreachedPassword { user_id } => tracing::warn!(
                event = name,
                user_id,
                "signed in with a password found in the breached-password file"
            ),
            Self::PasswordChanged { user_id } => {
                tracing::info!(event = name, user_id, "password changed")
            }
            Self::TwoFactorEnabled { user_id } => {
                tracing::info!(event = name, user_id, "two-factor sign-in enabled")
            }
            Self::TwoFactorDisabled { user_id } => {
                tracing::info!(event = name, user_id, "two-factor sign-in disabled")
            }
            Self::TwoFactorFailed { user_id } => {
                tracing::info!(event = name, user_id, "two-factor code refused")
            }
            Self::RecoveryCodeUsed { user_id } => {
                tracing::info!(event = name, user_id, "recovery code used")
            }
            Self::SessionEnded { user_id, ended } => {
                tracing::info!(event = name, user_id, ended, "sessions ended")
            }
            Self::TokenCreated {
                user_id, token_id, ..
            } => tracing::info!(event = name, user_id, token_id, "API token created"),
            Self::TokenRevoked { user_id, token_id } => {
                tracing::info!(event = name, user_id, token_id, "API token revoked")
            }
            Self::SessionBound { user_id } => {
                tracing::info!(event = name, user_id, "session bound to a device key")
            }
            Self::TokenUsed { user_id, token_id } => {
                tracing::info!(event = name, user_id, token_id, "API token used from a new address")
            }
            Self::DbscProofRefused { user_id } => {
                tracing::warn!(event = name, user_id, "device-bound session's proof refused")
            }
        }
    }
}

/// A host's hook into authentication events. Called on the request path: keep
/// it quick, hand slow work to a task.
pub trait AuthEventListener: Send + Sync + 'static {
    /// Receives one event.
    fn on_event(&self, event: &AuthEvent);
}

/// Where events go: the security activity log (once a database is bound)
/// and the listeners bound by the host.
#[derive(Clone, Default)]
pub struct Events {
    listeners: Vec<Arc<dyn AuthEventListener>>,
    store: Option<Db>,
    metrics: crate::metrics::Metrics,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("listeners", &self.listeners.len())
            .field("stored", &self.store.is_some())
            .finish()
    }
}

impl Events {
    /// Adds a listener.
    pub fn push(&mut self, listener: Arc<dyn AuthEventListener>) {
        self.listeners.push(listener);
    }

    /// These events, also stored in `db`'s `gatehouse_security_events`.
    pub fn stored_in(mut self, db: Db) -> Self {
        self.store = Some(db);
        self
    }

    /// These events, also counted in `metrics`.
    pub(crate) fn counted_in(mut self, metrics: crate::metrics::Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Logs `event`, stores it with `origin` and hands it to every
    /// listener. A failed insert is logged and never fails the caller.
    ///
    /// ```ignore
    /// gh.events.emit(AuthEvent::PasswordChanged { user_id }, &origin).await;
    /// ```
    pub async fn emit(&self, event: AuthEvent, origin: &Origin) {
        event.log();
        self.metrics.auth_event(event.code(), event.method());
        if let Some(db) = &self.store {
            if let Err(e) = store::insert(db, &event, origin).await {
                tracing::warn!(event = event.name(), error = %e, "security event not stored");
            }
        }
        for listener in &self.listeners {
            listener.on_event(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_hold_no_secret_and_name_what_changed() {
        let failed = AuthEvent::Failed {
            email: "ada@example.org".into(),
            user_id: Some(1),
        };
        assert_eq!(failed.detail(), None, "the address tried is not stored");
        let lockout = AuthEvent::Lockout {
            email: "ada@example.org".into(),
            ip: "1.2.3.4".into(),
            user_id: None,
        };
        assert_eq!(lockout.detail(), None);
        assert_eq!(lockout.user_id(), None);
        let login = AuthEvent::Login {
            user_id: 3,
            remember: true,
        };
        assert_eq!(login.detail().as_deref(), Some("remember"));
        let ended = AuthEvent::SessionEnded {
            user_id: 3,
            ended: 2,
        };
        assert_eq!(ended.detail().as_deref(), Some("2 ended"));
        let created = AuthEvent::TokenCreated {
            user_id: 3,
            token_id: 9,
            name: "x".repeat(100),
        };
        assert_eq!(
            created.detail(),
            Some(format!("token 9 \"{}\"", "x".repeat(MAX_DETAIL_NAME_CHARS)))
        );
    }
}
