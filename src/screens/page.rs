//! A small builder for the screens' HTML. Every value is escaped.

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use rocket::response::content::RawHtml;
use serde_json::Value;

use crate::state::GatehouseState;

/// One input of a form.
pub struct Field {
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    autocomplete: &'static str,
}

impl Field {
    /// A text-like input (`text`, `email`).
    pub fn text(
        name: &'static str,
        label: &'static str,
        kind: &'static str,
        autocomplete: &'static str,
    ) -> Self {
        Self {
            name,
            label,
            kind,
            autocomplete,
        }
    }

    /// A password input (paste allowed).
    pub fn password(name: &'static str, label: &'static str, autocomplete: &'static str) -> Self {
        Self {
            name,
            label,
            kind: "password",
            autocomplete,
        }
    }
}

/// A screen under construction.
pub struct Page<'a> {
    title: &'a str,
    gh: &'a GatehouseState,
    message: Option<String>,
    errors: Value,
    body: String,
}

impl<'a> Page<'a> {
    /// A page titled `title`, showing the flash left by the last form post.
    pub fn new(title: &'a str, gh: &'a GatehouseState, flash: Option<&Value>) -> Self {
        let message = flash
            .and_then(|f| f.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let errors = flash
            .and_then(|f| f.get("errors"))
            .cloned()
            .unwrap_or(Value::Null);
        Self {
            title,
            gh,
            message,
            errors,
            body: String::new(),
        }
    }

    /// A paragraph under the title.
    pub fn intro(mut self, words: &str) -> Self {
        self.body.push_str(&format!("<p>{}</p>\n", text(words)));
        self
    }

    /// Opens the form posting to `action`.
    pub fn form(mut self, action: &str) -> Self {
        if let Some(message) = &self.message {
            self.body.push_str(&format!(
                "<p role=\"alert\" id=\"form-message\">{}</p>\n",
                text(message)
            ));
        }
        self.body.push_str(&format!(
            "<form method=\"post\" action=\"{}\">\n",
            attr(action)
        ));
        self
    }

    fn error_of(&self, name: &str) -> Option<String> {
        let codes = self.errors.get(name)?.as_array()?;
        Some(
            codes
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    fn described(&mut self, name: &str) -> String {
        match self.error_of(name) {
            Some(error) => {
                self.body.push_str(&format!(
                    "<p id=\"{0}-error\">{1}</p>\n",
                    attr(name),
                    text(&error)
                ));
                format!(
                    " aria-invalid=\"true\" aria-describedby=\"{}-error\"",
                    attr(name)
                )
            }
            None => String::new(),
        }
    }

    /// A labelled input.
    pub fn field(mut self, field: Field) -> Self {
        self.body.push_str(&format!(
            "<label for=\"{0}\">{1}</label>\n",
            field.name,
            text(field.label)
        ));
        let aria = self.described(field.name);
        self.body.push_str(&format!(
            "<input id=\"{0}\" name=\"{0}\" type=\"{1}\" autocomplete=\"{2}\"{3}>\n",
            field.name, field.kind, field.autocomplete, aria
        ));
        self
    }

    /// A labelled checkbox.
    pub fn checkbox(mut self, name: &str, label: &str) -> Self {
        self.body.push_str(&format!(
            "<label><input name=\"{0}\" type=\"checkbox\" value=\"on\"> {1}</label>\n",
            attr(name),
            text(label)
        ));
        self
    }

    /// A labelled select.
    pub fn select(mut self, name: &str, label: &str, options: &[(&str, &str)]) -> Self {
        self.body.push_str(&format!(
            "<label for=\"{0}\">{1}</label>\n",
            attr(name),
            text(label)
        ));
        let aria = self.described(name);
        self.body.push_str(&format!(
            "<select id=\"{0}\" name=\"{0}\"{1}>\n",
            attr(name),
            aria
        ));
        for (value, shown) in options {
            self.body.push_str(&format!(
                "<option value=\"{}\">{}</option>\n",
                attr(value),
                text(shown)
            ));
        }
        self.body.push_str("</select>\n");
        self
    }

    /// A hidden field carrying `value`.
    pub fn hidden(mut self, name: &str, value: &str) -> Self {
        self.body.push_str(&format!(
            "<input type=\"hidden\" name=\"{}\" value=\"{}\">\n",
            attr(name),
            attr(value)
        ));
        self
    }

    /// A link below the form.
    pub fn link(mut self, href: &str, label: &str) -> Self {
        self.body.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>\n",
            attr(href),
            text(label)
        ));
        self
    }

    /// The submit button; closes the form.
    pub fn submit(mut self, label: &str) -> Self {
        self.body.push_str(&format!(
            "<button type=\"submit\">{}</button>\n</form>\n",
            text(label)
        ));
        self
    }

    /// The finished document, with the logo and footer links.
    pub fn render(self) -> RawHtml<String> {
        let logo = if self
            .gh
            .settings
            .public_dir
            .join("assets/ci/logo-full.svg")
            .is_file()
        {
            "<img src=\"/assets/ci/logo-full.svg\" alt=\"\">\n"
        } else {
            ""
        };
        let routes = &self.gh.routes;
        let footer: Vec<String> = [
            ("Terms", &routes.terms),
            ("Privacy", &routes.privacy),
            ("Cookies", &routes.cookies),
        ]
        .into_iter()
        .filter_map(|(label, path)| {
            path.as_ref()
                .map(|p| format!("<a href=\"{}\">{label}</a>", attr(p)))
        })
        .collect();
        RawHtml(format!(
            "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title></head>\n<body>\n{logo}<main>\n<h1>{title}</h1>\n{body}</main>\n\
             <footer>{footer}</footer>\n</body>\n</html>\n",
            title = text(self.title),
            body = self.body,
            footer = footer.join(" · "),
        ))
    }
}
