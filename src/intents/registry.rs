//! The intent kinds, each declared once: its wire name, its payload, the
//! screen that follows it, where that screen's form posts the answer, the
//! typed request the answer is read into and the host's handler of it. The
//! envelope, `Intent::screen_url`, the script's map from kind to screen, the
//! one submission route and the handlers bound through the builder all read
//! this table.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{IntentContext, IntentResult, OrgSetupHandler, OrgSetupRequest};
use crate::body::Input;
use crate::error::AuthError;
use crate::screens::Screen;
use crate::session::AuthUser;

/// A kind the user answers on a screen: that screen and the `POST` path its
/// form sends the answer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submission {
    /// The kind answered.
    pub kind: IntentKind,
    /// The screen that asks for the answer, and that a refused answer goes
    /// back to.
    pub screen: Screen,
    /// The `POST` path of the answer (`/auth/intents/<kind>`).
    pub path: &'static str,
}

impl Submission {
    /// The submission posted to `path`, if any kind is answered there.
    pub fn at(path: &str) -> Option<Self> {
        IntentKind::ALL
            .iter()
            .filter_map(|kind| kind.submission())
            .find(|submission| submission.path == path)
    }
}

/// Declares the intent kinds: `IntentKind`, `Intent` and the host's handlers,
/// from one table. Two kinds are Gatehouse's own and part of every table:
/// `redirect`, the way out of the loop, and `password_change`, which
/// Gatehouse dispenses and answers itself (`routes/password_change.rs`);
/// each entry is a kind the user answers on a screen to a host's handler. A kind's
/// request type reads the answer (`from_input`), and its handler trait has
/// one method, `handle(&self, user, request, ctx) -> IntentResult`.
macro_rules! intents {
    ($(
        $(#[$doc:meta])*
        $name:ident {
            wire: $wire:literal,
            payload: { $($(#[$field_doc:meta])* $field:ident: $field_ty:ty => $field_wire:literal),* $(,)? },
            screen: $screen:ident,
            posted_to: $path:literal,
            request: $request:ty,
            handler: $handler:ident,
            builder: $builder:ident $(,)?
        }
    ),+ $(,)?) => {
        /// The kinds of intent; closed, like the screens that follow them
        /// (more will come: match with a wildcard arm).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum IntentKind {
            /// `redirect`: navigate to an absolute URL.
            Redirect,
            /// `password_change`: choose a new password before anything
            /// else (Gatehouse's own: its password was found breached).
            PasswordChange,
            $($(#[$doc])* $name,)+
        }

        impl IntentKind {
            /// Every kind.
            pub const ALL: &'static [IntentKind] =
                &[IntentKind::Redirect, IntentKind::PasswordChange, $(IntentKind::$name),+];

            /// The wire name (`redirect`, `org_setup`).
            pub fn as_str(self) -> &'static str {
                match self {
                    Self::Redirect => "redirect",
                    Self::PasswordChange => "password_change",
                    $(Self::$name => $wire,)+
                }
            }

            /// The screen that asks for this kind's answer and where the
            /// answer is posted; `None` for `redirect`.
            pub(crate) fn submission(self) -> Option<Submission> {
                match self {
                    Self::Redirect => None,
                    Self::PasswordChange => Some(Submission {
                        kind: self,
                        screen: Screen::ChangePassword,
                        path: "/auth/intents/password-change",
                    }),
                    $(Self::$name => Some(Submission {
                        kind: self,
                        screen: Screen::$screen,
                        path: $path,
                    }),)+
                }
            }
        }

        /// What the signed-in user should do next (more kinds will come:
        /// match with a wildcard arm).
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Intent {
            /// `redirect`: go to `target`, an absolute URL.
            Redirect {
                /// Absolute URL.
                target: String,
            },
            /// `password_change`: choose a new password first.
            PasswordChange {
                /// Why a new one is needed.
                reason: PasswordChangeReason,
            },
            $(
                $(#[$doc])*
                $name {
                    $($(#[$field_doc])* $field: $field_ty,)*
                },
            )+
        }

        impl Intent {
            /// The kind of this intent.
            pub fn kind(&self) -> IntentKind {
                match self {
                    Self::Redirect { .. } => IntentKind::Redirect,
                    Self::PasswordChange { .. } => IntentKind::PasswordChange,
                    $(Self::$name { .. } => IntentKind::$name,)+
                }
            }

            /// The wire envelope `{"kind", "version": "1", "payload"}`.
            ///
            /// ```
            /// use gatehouse::Intent;
            /// let next = Intent::Redirect { target: "https://example.org/dashboard".into() };
            /// assert_eq!(next.envelope()["payload"]["target"], "https://example.org/dashboard");
            /// ```
            pub fn envelope(&self) -> Value {
                let payload = match self {
                    Self::Redirect { target } => json!({ "target": target }),
                    Self::PasswordChange { reason } => json!({ "reason": reason.as_str() }),
                    $(Self::$name { $($field),* } => json!({ $($field_wire: $field),* }),)+
                };
                json!({ "kind": self.kind().as_str(), "version": "1", "payload": payload })
            }

            /// Where a browser without JavaScript goes to follow this intent.
            pub fn screen_url(&self) -> String {
                match self {
                    Self::Redirect { target } => target.clone(),
                    Self::PasswordChange { .. } => Screen::ChangePassword.path().to_owned(),
                    $(Self::$name { .. } => Screen::$screen.path().to_owned(),)+
                }
            }
        }

        /// The host's handlers of the kinds answered on a screen, bound
        /// through the `Gatehouse` builder; a kind without one answers 500
        /// `<kind>_handler_missing`.
        #[derive(Clone, Default)]
        pub struct IntentHandlers {
            $(
                #[doc = concat!("Handles `", $wire, "` answers (`Gatehouse::", stringify!($builder), "`).")]
                pub(crate) $builder: Option<Arc<dyn $handler>>,
            )+
        }

        impl IntentHandlers {
            /// The handler the host bound for `kind`.
            pub(crate) fn bound(&self, kind: IntentKind) -> Result<Bound<'_>, AuthError> {
                match kind {
                    // Gatehouse answers `password_change` itself, while one
                    // is due.
                    IntentKind::Redirect | IntentKind::PasswordChange => {
                        Err(AuthError::UnknownIntent)
                    }
                    $(IntentKind::$name => match self.$builder.as_deref() {
                        Some(handler) => Ok(Bound::$name(handler)),
                        None => Err(AuthError::IntentHandlerMissing {
                            kind: $wire,
                            handler: stringify!($handler),
                            builder: stringify!($builder),
                        }),
                    },)+
                }
            }
        }

        /// A host's handler of one kind.
        pub(crate) enum Bound<'a> {
            $($name(&'a dyn $handler),)+
        }

        impl Bound<'_> {
            /// Reads `input` as the kind's request and hands it to the handler.
            pub(crate) async fn handle(
                self,
                input: &Input,
                user: &AuthUser,
                ctx: &IntentContext,
            ) -> Result<IntentResult, AuthError> {
                match self {
                    $(Self::$name(handler) => {
                        let request = <$request>::from_input(input)?;
                        Ok(handler.handle(user, request, ctx).await)
                    })+
                }
            }
        }
    };
}

intents! {
    /// `org_setup`: create an organisation first.
    OrgSetup {
        wire: "org_setup",
        payload: {
            /// How the screen greets the user.
            person_name: String => "personName",
        },
        screen: OrgSetup,
        posted_to: "/auth/intents/org-setup",
        request: OrgSetupRequest,
        handler: OrgSetupHandler,
        builder: org_setup,
    },
}

/// Why a `password_change` intent asks for a new password (more reasons
/// will come: match with a wildcard arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PasswordChangeReason {
    /// `breached`: the password is in the breached-password file.
    Breached,
}

impl PasswordChangeReason {
    /// The wire name (`breached`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Breached => "breached",
        }
    }
}

impl IntentKind {
    /// Each kind answered on a screen, by wire name, with the path of that
    /// screen: how the screens' script follows an intent.
    pub(crate) fn screen_paths() -> impl Iterator<Item = (&'static str, &'static str)> {
        Self::ALL.iter().filter_map(|kind| {
            kind.submission()
                .map(|submission| (kind.as_str(), submission.screen.path()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_distinct_and_answers_are_posted_under_auth_intents() {
        let mut names: Vec<&str> = IntentKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), IntentKind::ALL.len());
        for submission in IntentKind::ALL.iter().filter_map(|k| k.submission()) {
            assert!(
                submission.path.starts_with("/auth/intents/"),
                "{submission:?}"
            );
            assert_eq!(Submission::at(submission.path), Some(submission));
        }
        assert_eq!(Submission::at("/auth/intents/redirect"), None);
        assert_eq!(Submission::at("/auth/intents/org_setup"), None);
    }

    #[test]
    fn a_refused_answer_goes_back_to_the_screen_that_asked() {
        for submission in IntentKind::ALL.iter().filter_map(|k| k.submission()) {
            assert_eq!(
                Screen::of_form_post(submission.path),
                Some(submission.screen),
                "{submission:?}: add the path to the screen's form_posts"
            );
        }
    }

    #[test]
    fn every_intent_is_followed_by_its_screen() {
        let next = Intent::OrgSetup {
            person_name: "Ada".into(),
        };
        assert_eq!(next.screen_url(), "/login/org-setup");
        assert_eq!(
            next.envelope(),
            json!({"kind": "org_setup", "version": "1", "payload": {"personName": "Ada"}})
        );
        assert_eq!(
            IntentKind::screen_paths().collect::<Vec<_>>(),
            [
                ("password_change", "/login/change-password"),
                ("org_setup", "/login/org-setup")
            ]
        );
        let change = Intent::PasswordChange {
            reason: PasswordChangeReason::Breached,
        };
        assert_eq!(change.screen_url(), "/login/change-password");
        assert_eq!(
            change.envelope(),
            json!({"kind": "password_change", "version": "1", "payload": {"reason": "breached"}})
        );
    }
}
