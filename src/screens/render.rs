//! Rendering the screens: Tera templates (embedded, or the host's
//! `templates_dir`) filled with Fluent wording in the request's language.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;


use serde::Serialize;
use serde_json::Value;
use tera::{Context, Tera};

use crate::error::AuthError;
use crate::i18n::{Catalog, Language};
use super::{Page, Screen};
use crate::host_routes::HostRoutes;

/// The templates every screen builds on.
const SHARED: [(&str, &str); 2] = [
    (
        "base.html",
        include_str!("../../templates/screens/base.html"),
    ),
    (
        "macros.html",
        include_str!("../../templates/screens/macros.html"),
    ),
];

/// The message codes that report a success (shown as such).
const SUCCESS: [&str; 18] = [
    "reset_link_sent",
    "reset_success",
    "password_changed",
    "other_sessions_ended",
    "session_ended",
    "two_factor_enabled",
    "two_factor_disabled",
    "two_factor_pending",
    "recovery_codes_renewed",
    "passkey_added",
    "passkey_removed",
    "oidc_linked",
    "oidc_unlinked",
    "identity_confirmed",
    "device_approved",
    "device_denied",
    "token_created",
    "token_revoked",
];

/// The id of the element the form message is shown in (`base.html`).
const FORM_MESSAGE_ID: &str = "form-message";

/// For each field with an error, the id of the element that shows its words,
/// for the field's `aria-describedby`: its own `<field>-error`, or the form
/// message when that says the same (the words are then shown only there, and
/// the field must still point at them).
fn error_ids(errors: &BTreeMap<String, String>, message: Option<&str>) -> BTreeMap<String, String> {
    errors
        .iter()
        .map(|(field, words)| {
            let id = if message == Some(words.as_str()) {
                FORM_MESSAGE_ID.to_owned()
            } else {
                format!("{field}-error")
            };
            (field.clone(), id)
        })
        .collect()
}

/// `value` as JSON to put inside a `<script>` element: no `<` can close it.
fn script_json(value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_default()
        .replace('<', "\\u003c")
}

#[derive(Serialize)]
struct LanguageLink {
    tag: &'static str,
    label: &'static str,
    current: bool,
}

#[derive(Serialize)]
struct FooterLink {
    href: String,
    label: String,
}

/// Renders screens; built once at ignite.
pub struct Screens {
    tera: Tera,
    catalog: Arc<Catalog>,
    routes: HostRoutes,
    logo: bool,
    min_password: usize,
    /// Whether passkeys are on (their controls are rendered).
    passkeys: bool,
    /// Each intent kind's screen by wire name, as JSON for the script.
    intent_screens_json: String,
}

/// What one screen shows besides its wording.
#[derive(Default)]
pub struct View {
    /// The flash left by the last form post (`message`, `errors`, …), if any.
    pub flash: Option<Value>,
    /// A message code to show when there is no flash (`?notice=`).
    pub notice: Option<&'static str>,
    /// Extra template variables.
    pub extra: Vec<(&'static str, Value)>,
    /// Arguments for the screen's messages (`name`, …).
    pub args: Vec<(&'static str, String)>,
}

impl Screens {
    /// Loads the templates: the embedded set, or `templates_dir` when given
    /// (every `*.html` there replaces the embedded file of the same name).
    /// `intent_screens` maps each intent kind answered on a screen to that
    /// screen's path, for the script that follows the intent loop.
    pub fn load(
        templates_dir: Option<&Path>,
        catalog: Arc<Catalog>,
        routes: HostRoutes,
        logo: bool,
        min_password: usize,
        intent_screens: BTreeMap<&'static str, &'static str>,
    ) -> Result<Self, String> {
        let mut tera = Tera::default();
        let screens = Screen::ALL.iter().map(|s| (s.template(), s.source()));
        tera.add_raw_templates(SHARED.into_iter().chain(screens))
            .map_err(|e| format!("screen templates: {e:?}"))?;
        if let Some(dir) = templates_dir {
            let entries = std::fs::read_dir(dir).map_err(|e| {
                format!(
                    "invalid configuration `templates_dir`: {}: {e}",
                    dir.display()
                )
            })?;
            let mut files = Vec::new();
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "html") {
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    files.push((path, Some(name)));
                }
            }
            tera.add_template_files(files)
                .map_err(|e| format!("invalid configuration `templates_dir`: {e:?}"))?;
        }
        Ok(Self {
            tera,
            catalog,
            routes,
            logo,
            min_password,
            passkeys: false,
            intent_screens_json: script_json(&intent_screens),
        })
    }

    /// These screens with their passkey controls (when passkeys are on).
    pub fn with_passkeys(mut self, on: bool) -> Self {
        self.passkeys = on;
        self
    }

    /// The RFC 3339 instant `at` as the screens show it in `language`
    /// (see [`when::when`](super::when::when)): `null` for none.
    pub fn when(&self, language: Language, at: Option<&str>) -> Value {
        super::when::when(&self.catalog, language, at, crate::clock::unix_now())
    }

    /// The Fluent message `id` in `language`, without arguments.
    pub fn text(&self, language: Language, id: &str) -> String {
        self.catalog.text(language, id, &[])
    }

    /// The server message `code` in `language`, with its arguments filled in.
    pub fn message(&self, language: Language, code: &str, flash: Option<&Value>) -> String {
        let seconds = flash
            .and_then(|f| f.get("retry_after"))
            .map(|s| s.to_string())
            .unwrap_or_else(|| "{seconds}".into());
        let min = self.min_password.to_string();
        self.catalog.text(
            language,
            &format!("msg-{code}"),
            &[("seconds", &seconds), ("min", &min)],
        )
    }

    /// Every server message, for the script (`{seconds}` left as a placeholder).
    fn messages_json(&self, language: Language) -> String {
        let min = self.min_password.to_string();
        let all = self
            .catalog
            .group(language, "msg-", &[("seconds", "{seconds}"), ("min", &min)]);
        script_json(&all)
    }

    /// Renders `screen` in `language`.
    pub fn render(
        &self,
        screen: Screen,
        language: Language,
        view: View,
    ) -> Result<Page, AuthError> {
        let args: Vec<(&str, &str)> = view.args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let flash = view.flash.as_ref();
        let code = flash
            .and_then(|f| f.get("message"))
            .and_then(Value::as_str)
            .or(view.notice);
        let success = code.is_some_and(|c| SUCCESS.contains(&c));
        let mut errors = BTreeMap::new();
        if let Some(Value::Object(fields)) = flash.and_then(|f| f.get("errors")) {
            for (field, codes) in fields {
                if let Some(first) = codes
                    .as_array()
                    .and_then(|c| c.first())
                    .and_then(Value::as_str)
                {
                    errors.insert(field.clone(), self.message(language, first, flash));
                }
            }
        }
        let message = code.map(|c| self.message(language, c, flash));
        let error_ids = error_ids(&errors, message.as_deref());
        // A field error that repeats the form message is announced once.
        errors.retain(|_, words| message.as_ref() != Some(words));
        let mut context = Context::new();
        context.insert("lang", language.tag());
        context.insert("t", &self.catalog.group(language, screen.group(), &args));
        context.insert("common", &self.catalog.group(language, "common-", &[]));
        context.insert("message", &message);
        context.insert("message_code", &code);
        context.insert("message_kind", if success { "success" } else { "error" });
        context.insert("errors", &errors);
        context.insert("error_ids", &error_ids);
        let values = flash
            .and_then(|f| f.get("old"))
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        context.insert("values", &values);
        context.insert("form", &flash.and_then(|f| f.get("form")).cloned());
        context.insert("logo", &self.logo);
        context.insert("passkeys", &self.passkeys);
        context.insert("messages_json", &self.messages_json(language));
        context.insert("intent_screens_json", &self.intent_screens_json);
        context.insert("languages", &self.languages(language));
        context.insert("footer", &self.footer(language));
        context.insert("dashboard", &self.routes.dashboard);
        for (key, value) in view.extra {
            context.insert(key, &value);
        }
        self.tera
            .render(screen.template(), &context)
            .map(Page::new)
            .map_err(|e| AuthError::Internal(format!("screen {}: {e:?}", screen.template())))
    }

    fn languages(&self, current: Language) -> Vec<LanguageLink> {
        Language::ALL
            .into_iter()
            .map(|l| LanguageLink {
                tag: l.tag(),
                label: match l {
                    Language::En => "English",
                    Language::De => "Deutsch",
                },
                current: l == current,
            })
            .collect()
    }

    fn footer(&self, language: Language) -> Vec<FooterLink> {
        [
            ("common-terms", &self.routes.terms),
            ("common-privacy", &self.routes.privacy),
            ("common-cookies", &self.routes.cookies),
        ]
        .into_iter()
        .filter_map(|(id, path)| {
            path.as_ref().map(|href| FooterLink {
                href: href.clone(),
                label: self.catalog.text(language, id, &[]),
            })
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_repeating_the_form_message_is_described_by_it() {
        let errors = BTreeMap::from([
            ("email".to_owned(), "Wrong address or password.".to_owned()),
            ("password".to_owned(), "This field is required.".to_owned()),
        ]);
        let ids = error_ids(&errors, Some("Wrong address or password."));
        assert_eq!(ids["email"], "form-message");
        assert_eq!(ids["password"], "password-error");
        assert_eq!(error_ids(&errors, None)["email"], "email-error");
    }

    /// A host's own screen written before `error_ids` existed still renders
    /// with the embedded macros.
    #[test]
    fn the_input_macro_works_without_error_ids() {
        let macros = SHARED.iter().find(|(name, _)| *name == "macros.html");
        let mut tera = Tera::default();
        tera.add_raw_templates([
            ("macros.html", macros.expect("embedded").1),
            (
                "own.html",
                "{% import \"macros.html\" as m %}{{ m::input(field=\"email\", label=\"E\", \
                 type=\"email\", autocomplete=\"username\", errors=errors) }}",
            ),
        ])
        .expect("templates parse");
        let mut context = Context::new();
        context.insert("errors", &BTreeMap::from([("email", "Bad address")]));
        let html = tera.render("own.html", &context).expect("renders");
        assert!(
            html.contains("aria-describedby=\"email-error\" aria-invalid=\"true\""),
            "{html}"
        );
    }
}
