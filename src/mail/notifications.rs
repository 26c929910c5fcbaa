//! The mails Gatehouse sends, rendered from the embedded Tera templates with
//! wording from the `mail-*` Fluent messages.

use std::collections::HashMap;

use tera::{Context, Tera};

use crate::i18n::{Catalog, Language};

/// A rendered mail: subject, plain text and HTML.
#[derive(Debug, Clone)]
pub struct Notification {
    /// Which notification it is (its template's name).
    pub kind: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text part.
    pub text: String,
    /// HTML part.
    pub html: String,
}

/// Renders notifications.
pub struct Composer {
    tera: Tera,
    catalog: std::sync::Arc<Catalog>,
    app_name: String,
}

const TEMPLATES: [(&str, &str); 8] = [
    (
        "reset-link.txt",
        include_str!("../../templates/mail/reset-link.txt.tera"),
    ),
    (
        "reset-link.html",
        include_str!("../../templates/mail/reset-link.html.tera"),
    ),
    (
        "password-changed.txt",
        include_str!("../../templates/mail/password-changed.txt.tera"),
    ),
    (
        "password-changed.html",
        include_str!("../../templates/mail/password-changed.html.tera"),
    ),
    (
        "second-factor-lockout.txt",
        include_str!("../../templates/mail/second-factor-lockout.txt.tera"),
    ),
    (
        "second-factor-lockout.html",
        include_str!("../../templates/mail/second-factor-lockout.html.tera"),
    ),
    (
        "security-notice.txt",
        include_str!("../../templates/mail/security-notice.txt.tera"),
    ),
    (
        "security-notice.html",
        include_str!("../../templates/mail/security-notice.html.tera"),
    ),
];

/// A change to how an account signs in, told to its owner: a sign-in from a
/// new device, two-factor on or off, recovery codes renewed, a passkey
/// added or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A sign-in from a browser the account had not signed in on.
    NewDevice {
        /// When, as `YYYY-MM-DD HH:MM` in UTC.
        time: String,
        /// The client address.
        ip: String,
        /// The browser in words of Gatehouse's own: the family and
        /// operating system a User-Agent parser recognised ("Chrome 131 on
        /// Linux"), or `None` for "an unknown browser". No text of the
        /// request itself.
        browser: Option<String>,
    },
    /// A copy of a remember-me cookie was presented: every remember-me
    /// cookie of the account was voided.
    RememberTheft,
    /// Two-factor sign-in was turned on.
    TwoFactorOn,
    /// Two-factor sign-in was turned off.
    TwoFactorOff,
    /// A new set of recovery codes replaced the old one.
    RecoveryCodesRenewed,
    /// A passkey was added.
    PasskeyAdded {
        /// The name its owner gave it.
        name: String,
    },
    /// A passkey was removed.
    PasskeyRemoved {
        /// Its name.
        name: String,
    },
    /// A personal access token was made from the account.
    TokenCreated {
        /// The label its owner gave it.
        name: String,
    },
}

impl Notice {
    /// The Fluent id prefix of its subject and body (`mail-<prefix>-subject`).
    fn prefix(&self) -> &'static str {
        match self {
            Self::NewDevice { .. } => "mail-new-device",
            Self::RememberTheft => "mail-remember-theft",
            Self::TwoFactorOn => "mail-two-factor-on",
            Self::TwoFactorOff => "mail-two-factor-off",
            Self::RecoveryCodesRenewed => "mail-recovery-renewed",
            Self::PasskeyAdded { .. } => "mail-passkey-added",
            Self::PasskeyRemoved { .. } => "mail-passkey-removed",
            Self::TokenCreated { .. } => "mail-token-created",
        }
    }
}

impl Composer {
    /// Loads the embedded templates and messages.
    pub fn new(app_name: &str, catalog: std::sync::Arc<Catalog>) -> Result<Self, String> {
        let mut tera = Tera::default();
        tera.add_raw_templates(TEMPLATES)
            .map_err(|e| format!("mail templates: {e}"))?;
        tera.autoescape_on(vec![".html"]);
        Ok(Self {
            tera,
            catalog,
            app_name: app_name.to_owned(),
        })
    }

    fn render(
        &self,
        name: &str,
        language: Language,
        keys: &[(&str, &str)],
        args: &[(&str, &str)],
        link: &str,
        details: &[String],
    ) -> Result<Notification, String> {
        let words: HashMap<&str, String> = keys
            .iter()
            .map(|(key, id)| (*key, self.catalog.text(language, id, args)))
            .collect();
        let mut context = Context::new();
        context.insert("t", &words);
        context.insert("link", link);
        context.insert("lang", language.tag());
        context.insert("details", details);
        let render = |kind: &str| {
            self.tera
                .render(&format!("{name}.{kind}"), &context)
                .map_err(|e| format!("mail template {name}.{kind}: {e}"))
        };
        Ok(Notification {
            kind: name.to_owned(),
            subject: words.get("subject").cloned().unwrap_or_default(),
            text: render("txt")?,
            html: render("html")?,
        })
    }

    /// "Reset your password", with the single-use `link`.
    pub fn reset_link(
        &self,
        language: Language,
        name: &str,
        link: &str,
        minutes: u32,
    ) -> Result<Notification, String> {
        let minutes = minutes.to_string();
        self.render(
            "reset-link",
            language,
            &[
                ("subject", "mail-reset-subject"),
                ("greeting", "mail-reset-greeting"),
                ("intro", "mail-reset-intro"),
                ("action", "mail-reset-action"),
                ("expiry", "mail-reset-expiry"),
                ("ignore", "mail-reset-ignore"),
                ("signature", "mail-signature"),
            ],
            &[
                ("name", name),
                ("minutes", &minutes),
                ("app", &self.app_name),
            ],
            link,
            &[],
        )
    }

    /// "Your password was changed", pointing at the forgot-password screen,
    /// and naming each OpenID provider (label, account screen URL) that can
    /// also sign the account in.
    pub fn password_changed(
        &self,
        language: Language,
        name: &str,
        forgot_link: &str,
        providers: &[(String, String)],
    ) -> Result<Notification, String> {
        // Each provider that can also sign the account in, with where to
        // unlink it: a reset by mail is account control, and says so.
        let details: Vec<String> = providers
            .iter()
            .map(|(label, account)| {
                let args = [("provider", label.as_str()), ("link", account.as_str())];
                self.catalog.text(language, "mail-changed-provider", &args)
            })
            .collect();
        self.render(
            "password-changed",
            language,
            &[
                ("subject", "mail-changed-subject"),
                ("greeting", "mail-changed-greeting"),
                ("body", "mail-changed-body"),
                ("warning", "mail-changed-warning"),
                ("providers", "mail-changed-providers"),
                ("signature", "mail-signature"),
            ],
            &[
                ("name", name),
                ("link", forgot_link),
                ("app", &self.app_name),
            ],
            forgot_link,
            &details,
        )
    }

    /// "Someone is trying to sign in to your account": `attempts` wrong
    /// second-factor codes in a day (closed for an hour), or in a row
    /// (`until_reset`: closed until the password is reset by mail), so the
    /// password is known to someone; points at the forgot-password screen.
    pub fn second_factor_lockout(
        &self,
        language: Language,
        name: &str,
        attempts: u32,
        until_reset: bool,
        forgot_link: &str,
    ) -> Result<Notification, String> {
        let attempts = attempts.to_string();
        let body = if until_reset {
            "mail-lockout-closed-body"
        } else {
            "mail-lockout-body"
        };
        self.render(
            "second-factor-lockout",
            language,
            &[
                ("subject", "mail-lockout-subject"),
                ("greeting", "mail-lockout-greeting"),
                ("body", body),
                ("warning", "mail-lockout-warning"),
                ("signature", "mail-signature"),
            ],
            &[
                ("name", name),
                ("attempts", &attempts),
                ("link", forgot_link),
                ("app", &self.app_name),
            ],
            forgot_link,
            &[],
        )
    }

    /// A security notice to `name`, pointing at the account screen
    /// (`account_link`).
    pub fn notice(
        &self,
        language: Language,
        name: &str,
        notice: &Notice,
        account_link: &str,
    ) -> Result<Notification, String> {
        let prefix = notice.prefix();
        let subject = format!("{prefix}-subject");
        let body = format!("{prefix}-body");
        let (passkey, token) = match notice {
            Notice::PasskeyAdded { name } | Notice::PasskeyRemoved { name } => (name.as_str(), ""),
            Notice::TokenCreated { name } => ("", name.as_str()),
            _ => ("", ""),
        };
        let args = [
            ("name", name),
            ("link", account_link),
            ("app", self.app_name.as_str()),
            ("passkey", passkey),
            ("token", token),
        ];
        let details = match notice {
            Notice::NewDevice { time, ip, browser } => [
                ("mail-new-device-time", "time", time.clone()),
                ("mail-new-device-ip", "ip", ip.clone()),
                (
                    "mail-new-device-browser",
                    "browser",
                    browser.clone().unwrap_or_else(|| {
                        self.catalog
                            .text(language, "mail-new-device-unknown-browser", &[])
                    }),
                ),
            ]
            .iter()
            .map(|(id, arg, value)| self.catalog.text(language, id, &[(arg, value.as_str())]))
            .collect(),
            _ => Vec::new(),
        };
        self.render(
            "security-notice",
            language,
            &[
                ("subject", &subject),
                ("greeting", "mail-notice-greeting"),
                ("body", &body),
                ("warning", "mail-notice-warning"),
                ("action", "mail-notice-action"),
                ("signature", "mail-signature"),
            ],
            &args,
            account_link,
            &details,
        )
    }
}
