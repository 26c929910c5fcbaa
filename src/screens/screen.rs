//! The screens, each declared once: its path, its template, its Fluent
//! messages and the form posts that come back to it when they fail.

use crate::i18n::Language;

/// What one screen is made of.
struct Spec {
    /// The `GET` route's path (Rocket's pattern, `<…>` for segments).
    path: &'static str,
    /// The template's file name under `templates/screens/` (or `templates_dir`).
    template: &'static str,
    /// The embedded template.
    source: &'static str,
    /// The prefix of its Fluent messages (`login-` for `login-title`).
    group: &'static str,
    /// The embedded Fluent messages, per language.
    messages: [(Language, &'static str); 2],
    /// The `POST` paths whose failed form posts go back to this screen.
    form_posts: &'static [&'static str],
}

/// Declares the screens: the enum and its one table. A screen's files are
/// named after it: `templates/screens/<template>.html` and
/// `i18n/<lang>/<messages>.ftl`, whose messages start with `<messages>-`.
macro_rules! screens {
    ($(
        $(#[$doc:meta])*
        $name:ident {
            path: $path:literal,
            template: $template:literal,
            messages: $messages:literal,
            form_posts: [$($post:literal),*] $(,)?
        }
    ),+ $(,)?) => {
        /// A server-rendered screen.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Screen {
            $($(#[$doc])* $name,)+
        }

        impl Screen {
            /// Every screen.
            pub const ALL: &'static [Screen] = &[$(Screen::$name),+];

            fn spec(self) -> &'static Spec {
                match self {
                    $(Screen::$name => &Spec {
                        path: $path,
                        template: concat!($template, ".html"),
                        source: include_str!(concat!("../../templates/screens/", $template, ".html")),
                        group: concat!($messages, "-"),
                        messages: [
                            (Language::En, include_str!(concat!("../../i18n/en/", $messages, ".ftl"))),
                            (Language::De, include_str!(concat!("../../i18n/de/", $messages, ".ftl"))),
                        ],
                        form_posts: &[$($post),*],
                    },)+
                }
            }
        }
    };
}

screens! {
    /// `GET /login`: e-mail and password.
    Login {
        path: "/login",
        template: "login",
        messages: "login",
        form_posts: ["/auth/login"],
    },
    /// `GET /login/forgot-password`: asks for the address to send a link to.
    ForgotPassword {
        path: "/login/forgot-password",
        template: "forgot-password",
        messages: "forgotPassword",
        form_posts: ["/auth/forgot-password"],
    },
    /// `GET /login/set-password/<token>/<email>`: a new password. Its form's
    /// failures go back to it by `POST /auth/reset-password` itself, as its
    /// path carries the token.
    SetPassword {
        path: "/login/set-password/<token>/<email>",
        template: "set-password",
        messages: "setPassword",
        form_posts: [],
    },
    /// `GET /login/org-setup`: the organisation set-up intent.
    OrgSetup {
        path: "/login/org-setup",
        template: "org-setup",
        messages: "orgSetup",
        form_posts: ["/auth/intents/org-setup"],
    },
    /// `GET /login/change-password`: the `password_change` intent, a new
    /// password before anything else.
    ChangePassword {
        path: "/login/change-password",
        template: "change-password",
        messages: "changePassword",
        form_posts: ["/auth/intents/password-change"],
    },
    /// `GET /account`: password, two-factor sign-in, access for scripts,
    /// sessions and recent security activity of the signed-in user.
    Account {
        path: "/account",
        template: "account",
        messages: "account",
        form_posts: [
            "/auth/password",
            "/auth/sessions/end-others",
            "/auth/two-factor",
            "/auth/two-factor/confirm",
            "/auth/two-factor/recovery-codes",
            "/auth/two-factor/disable",
            "/auth/oidc/<name>/link",
            "/auth/oidc/links/<id>/delete",
            "/auth/confirm",
            "/auth/oidc/<name>/confirm",
            "/auth/tokens",
            "/auth/tokens/<id>/revoke"
        ],
    },
    /// `GET /login/two-factor`: the second step of signing in.
    TwoFactor {
        path: "/login/two-factor",
        template: "two-factor",
        messages: "twoFactor",
        form_posts: ["/auth/two-factor-challenge"],
    },
    /// `GET /device`: a signed-in person allows or denies a script's user
    /// code (the device authorization grant).
    Device {
        path: "/device",
        template: "device",
        messages: "device",
        form_posts: ["/auth/device/approve", "/auth/device/deny"],
    },
    /// `GET /logout`: asks before signing out.
    Logout {
        path: "/logout",
        template: "logout",
        messages: "logout",
        form_posts: [],
    },
}

impl Screen {
    /// The screen's path; for a screen without segments, where to send a
    /// browser.
    pub fn path(self) -> &'static str {
        self.spec().path
    }

    /// The template's file name.
    pub fn template(self) -> &'static str {
        self.spec().template
    }

    /// The embedded template.
    pub(super) fn source(self) -> &'static str {
        self.spec().source
    }

    /// The prefix of the screen's Fluent messages.
    pub(super) fn group(self) -> &'static str {
        self.spec().group
    }

    /// The screen a failed form post to `path` goes back to.
    pub fn of_form_post(path: &str) -> Option<Screen> {
        Self::ALL.iter().copied().find(|screen| {
            screen
                .spec()
                .form_posts
                .iter()
                .any(|pattern| path_matches(pattern, path))
        })
    }

    /// Every screen's embedded Fluent messages in `language`, for the catalog.
    pub fn messages(language: Language) -> impl Iterator<Item = &'static str> {
        Self::ALL.iter().flat_map(move |screen| {
            screen
                .spec()
                .messages
                .iter()
                .filter(move |(lang, _)| *lang == language)
                .map(|(_, source)| *source)
        })
    }
}

/// Whether `path` is one of `pattern`'s: segment by segment, a `<…>`
/// segment standing for any one.
pub(crate) fn path_matches(pattern: &str, path: &str) -> bool {
    let (mut pattern, mut path) = (pattern.split('/'), path.split('/'));
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some(p), Some(s)) if p == s || (p.starts_with('<') && !s.is_empty()) => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_segment_stands_for_any_one_segment() {
        assert!(path_matches("/auth/oidc/<name>/link", "/auth/oidc/acme/link"));
        assert!(!path_matches("/auth/oidc/<name>/link", "/auth/oidc//link"));
        assert!(!path_matches("/auth/oidc/<name>/link", "/auth/oidc/acme/link/x"));
        assert!(!path_matches("/auth/oidc/<name>/link", "/auth/oidc/acme"));
        assert_eq!(
            Screen::of_form_post("/auth/oidc/links/7/delete"),
            Some(Screen::Account)
        );
        assert_eq!(
            Screen::of_form_post("/auth/tokens/7/revoke"),
            Some(Screen::Account)
        );
    }

    #[test]
    fn a_failed_form_post_goes_back_to_its_screen() {
        assert_eq!(Screen::of_form_post("/auth/login"), Some(Screen::Login));
        assert_eq!(
            Screen::of_form_post("/auth/intents/org-setup"),
            Some(Screen::OrgSetup)
        );
        assert_eq!(Screen::of_form_post("/auth/reset-password"), None);
        assert_eq!(Screen::of_form_post("/auth/logout"), None);
    }

    #[test]
    fn each_screen_has_its_own_template_and_messages_in_every_language() {
        for screen in Screen::ALL {
            assert!(screen.source().contains("{% extends"), "{screen:?}");
            for language in Language::ALL {
                let text = screen.spec().messages.iter().find(|(l, _)| *l == language);
                let (_, text) = text.expect("a source per language");
                assert!(text.contains(&format!("{}title", screen.group())), "{screen:?}");
            }
        }
    }
}
