//! The mails Gatehouse sends, rendered from the embedded Tera templates with
//! wording from the `mail-*` Fluent messages.

use std::collections::HashMap;

use tera::{Context, Tera};

use crate::i18n::{Catalog, Language};

/// A rendered mail: subject, plain text and HTML.
#[derive(Debug, Clone)]
pub struct Notification {
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

const TEMPLATES: [(&str, &str); 6] = [
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
];

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
    ) -> Result<Notification, String> {
        let words: HashMap<&str, String> = keys
            .iter()
            .map(|(key, id)| (*key, self.catalog.text(language, id, args)))
            .collect();
        let mut context = Context::new();
        context.insert("t", &words);
        context.insert("link", link);
        context.insert("lang", language.tag());
        let render = |kind: &str| {
            self.tera
                .render(&format!("{name}.{kind}"), &context)
                .map_err(|e| format!("mail template {name}.{kind}: {e}"))
        };
        Ok(Notification {
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
        )
    }

    /// "Your password was changed", pointing at the forgot-password screen.
    pub fn password_changed(
        &self,
        language: Language,
        name: &str,
        forgot_link: &str,
    ) -> Result<Notification, String> {
        self.render(
            "password-changed",
            language,
            &[
                ("subject", "mail-changed-subject"),
                ("greeting", "mail-changed-greeting"),
                ("body", "mail-changed-body"),
                ("warning", "mail-changed-warning"),
                ("signature", "mail-signature"),
            ],
            &[
                ("name", name),
                ("link", forgot_link),
                ("app", &self.app_name),
            ],
            forgot_link,
        )
    }

    /// "Someone is trying to sign in to your account": `attempts` wrong
    /// second-factor codes in a day, so the password is known to someone;
    /// points at the forgot-password screen.
    pub fn second_factor_lockout(
        &self,
        language: Language,
        name: &str,
        attempts: u32,
        forgot_link: &str,
    ) -> Result<Notification, String> {
        let attempts = attempts.to_string();
        self.render(
            "second-factor-lockout",
            language,
            &[
                ("subject", "mail-lockout-subject"),
                ("greeting", "mail-lockout-greeting"),
                ("body", "mail-lockout-body"),
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
        )
    }
}
