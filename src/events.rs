//! Authentication events, delivered to host listeners and logged.
//!
//! ```
//! use gatehouse::{AuthEvent, AuthEventListener};
//! struct Audit;
//! impl AuthEventListener for Audit {
//!     fn on_event(&self, event: &AuthEvent) {
//!         println!("{}", event.name());
//!     }
//! }
//! ```

use std::sync::Arc;

/// Something that happened to an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthEvent {
    /// A user signed in.
    Login {
        /// `users.id`.
        user_id: i64,
        /// Whether a remember-me cookie was issued.
        remember: bool,
    },
    /// A sign-in attempt failed (wrong email or password).
    Failed {
        /// The address that was tried.
        email: String,
    },
    /// An address + client IP crossed the attempt limit.
    Lockout {
        /// The address that was tried.
        email: String,
        /// The client address.
        ip: String,
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
    /// A signed-in user changed their password.
    PasswordChanged {
        /// `users.id`.
        user_id: i64,
    },
    /// Two-factor sign-in turned on.
    TwoFactorEnabled {
        /// `users.id`.
        user_id: i64,
    },
    /// Two-factor sign-in turned off.
    TwoFactorDisabled {
        /// `users.id`.
        user_id: i64,
    },
    /// A wrong second-factor code.
    TwoFactorFailed {
        /// `users.id`.
        user_id: i64,
    },
    /// A recovery code signed in.
    RecoveryCodeUsed {
        /// `users.id`.
        user_id: i64,
    },
    /// A user ended sessions of theirs.
    SessionEnded {
        /// `users.id`.
        user_id: i64,
        /// How many sessions ended.
        ended: u64,
    },
}

impl AuthEvent {
    /// Short name of the event kind.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Login { .. } => "Login",
            Self::Failed { .. } => "Failed",
            Self::Lockout { .. } => "Lockout",
            Self::Logout { .. } => "Logout",
            Self::PasswordReset { .. } => "PasswordReset",
            Self::PasswordChanged { .. } => "PasswordChanged",
            Self::SessionEnded { .. } => "SessionEnded",
            Self::TwoFactorEnabled { .. } => "TwoFactorEnabled",
            Self::TwoFactorDisabled { .. } => "TwoFactorDisabled",
            Self::TwoFactorFailed { .. } => "TwoFactorFailed",
            Self::RecoveryCodeUsed { .. } => "RecoveryCodeUsed",
        }
    }
}

/// A host's hook into authentication events. Called on the request path: keep
/// it quick, hand slow work to a task.
pub trait AuthEventListener: Send + Sync + 'static {
    /// Receives one event.
    fn on_event(&self, event: &AuthEvent);
}

/// The listeners bound by the host.
#[derive(Clone, Default)]
pub struct Events {
    listeners: Vec<Arc<dyn AuthEventListener>>,
}

impl Events {
    /// Adds a listener.
    pub fn push(&mut self, listener: Arc<dyn AuthEventListener>) {
        self.listeners.push(listener);
    }

    /// Logs `event` and hands it to every listener.
    pub fn emit(&self, event: AuthEvent) {
        match &event {
            AuthEvent::Login { user_id, remember } => {
                tracing::info!(event = "Login", user_id, remember, "user signed in")
            }
            AuthEvent::Failed { .. } => tracing::info!(event = "Failed", "sign-in failed"),
            AuthEvent::Lockout { ip, .. } => {
                tracing::warn!(event = "Lockout", ip = %ip, "sign-in attempts throttled")
            }
            AuthEvent::Logout { user_id } => {
                tracing::info!(event = "Logout", user_id, "user signed out")
            }
            AuthEvent::PasswordReset { user_id } => {
                tracing::info!(event = "PasswordReset", user_id, "password reset")
            }
            AuthEvent::PasswordChanged { user_id } => {
                tracing::info!(event = "PasswordChanged", user_id, "password changed")
            }
            AuthEvent::TwoFactorEnabled { user_id }
            | AuthEvent::TwoFactorDisabled { user_id }
            | AuthEvent::TwoFactorFailed { user_id }
            | AuthEvent::RecoveryCodeUsed { user_id } => {
                tracing::info!(event = event.name(), user_id, "two-factor sign-in")
            }
            AuthEvent::SessionEnded { user_id, ended } => {
                tracing::info!(event = "SessionEnded", user_id, ended, "sessions ended")
            }
        }
        for listener in &self.listeners {
            listener.on_event(&event);
        }
    }
}
