//! Wording in the user's language, from the Fluent files in `i18n/<lang>/`
//! (embedded in the binary). English is the default and the fallback.

use std::collections::{BTreeMap, HashMap};

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use unic_langid::{langid, LanguageIdentifier};

/// A language the screens and mails are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Language {
    /// English (default).
    #[default]
    En,
    /// German.
    De,
}

impl Language {
    /// Every supported language.
    pub const ALL: [Language; 2] = [Language::En, Language::De];

    /// The language tag (`en`, `de`).
    pub fn tag(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::De => "de",
        }
    }

    fn id(self) -> LanguageIdentifier {
        match self {
            Self::En => langid!("en"),
            Self::De => langid!("de"),
        }
    }

    /// A supported language from a tag such as `de` or `de-AT`.
    pub fn from_tag(tag: &str) -> Option<Self> {
        let id: LanguageIdentifier = tag.trim().parse().ok()?;
        Self::ALL
            .into_iter()
            .find(|l| l.id().language == id.language)
    }

    /// The best supported match for an `Accept-Language` header.
    ///
    /// The `q` weights decide (RFC 9110 §12.5.4), not the order the tags are
    /// written in; tags of equal weight keep their order, and `q=0` means
    /// "not this language". fluent-langneg's own parser drops the weights, so
    /// the `accept-language` crate ranks the tags and fluent-langneg matches
    /// them (`de-AT` → `de`).
    ///
    /// ```
    /// use gatehouse::i18n::Language;
    /// assert_eq!(Language::negotiate("en;q=0.2, de;q=0.9"), Language::De);
    /// assert_eq!(Language::negotiate("de;q=0, en;q=0.1"), Language::En);
    /// ```
    pub fn negotiate(accept_language: &str) -> Self {
        let requested: Vec<LanguageIdentifier> =
            accept_language::parse_with_quality(accept_language)
                .into_iter()
                .filter(|(_, quality)| *quality > 0.0)
                .filter_map(|(tag, _)| tag.parse().ok())
                .collect();
        let available: Vec<LanguageIdentifier> = Self::ALL.iter().map(|l| l.id()).collect();
        let default = Self::En.id();
        let chosen = fluent_langneg::negotiate_languages(
            &requested,
            &available,
            Some(&default),
            fluent_langneg::NegotiationStrategy::Lookup,
        );
        chosen
            .first()
            .and_then(|id| Self::from_tag(&id.to_string()))
            .unwrap_or_default()
    }
}

macro_rules! ftl {
    ($lang:literal) => {
        &[
            include_str!(concat!("../../i18n/", $lang, "/common.ftl")),
            include_str!(concat!("../../i18n/", $lang, "/messages.ftl")),
            include_str!(concat!("../../i18n/", $lang, "/mail.ftl")),
        ]
    };
}

/// The embedded `.ftl` sources of one language shared by every screen and mail.
fn sources(language: Language) -> &'static [&'static str] {
    match language {
        Language::En => ftl!("en"),
        Language::De => ftl!("de"),
    }
}

/// Every message of every language, parsed once.
pub struct Catalog {
    bundles: HashMap<Language, FluentBundle<FluentResource>>,
    ids: HashMap<Language, Vec<String>>,
}

impl Catalog {
    /// Parses the embedded bundles: the shared messages and, per language,
    /// those `screens` gives (each screen's own). A syntax error in a shipped
    /// file is a build defect, reported here with the language.
    pub fn load<I>(screens: impl Fn(Language) -> I) -> Result<Self, String>
    where
        I: Iterator<Item = &'static str>,
    {
        let mut bundles = HashMap::new();
        let mut ids: HashMap<Language, Vec<String>> = HashMap::new();
        for language in Language::ALL {
            let mut bundle = FluentBundle::new_concurrent(vec![language.id()]);
            bundle.set_use_isolating(false);
            for source in sources(language).iter().copied().chain(screens(language)) {
                let resource = FluentResource::try_new(source.to_owned())
                    .map_err(|(_, errors)| format!("i18n/{}: {errors:?}", language.tag()))?;
                let names = resource.entries().filter_map(|entry| match entry {
                    fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_owned()),
                    _ => None,
                });
                ids.entry(language).or_default().extend(names);
                bundle
                    .add_resource(resource)
                    .map_err(|errors| format!("i18n/{}: {errors:?}", language.tag()))?;
            }
            bundles.insert(language, bundle);
        }
        Ok(Self { bundles, ids })
    }

    /// The message `id` in `language` (falling back to English, then to the id
    /// itself), with `args` filled in.
    pub fn text(&self, language: Language, id: &str, args: &[(&str, &str)]) -> String {
        let mut fluent_args = FluentArgs::new();
        for (name, value) in args {
            fluent_args.set(*name, FluentValue::from(*value));
        }
        for lang in [language, Language::En] {
            let Some(bundle) = self.bundles.get(&lang) else {
                continue;
            };
            if let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) {
                let mut errors = Vec::new();
                return bundle
                    .format_pattern(pattern, Some(&fluent_args), &mut errors)
                    .into_owned();
            }
        }
        id.to_owned()
    }

    /// Every message whose id starts with `prefix`, keyed by the rest of the
    /// id with `-` turned into `_` (`login-title` → `title`), for templates.
    pub fn group(
        &self,
        language: Language,
        prefix: &str,
        args: &[(&str, &str)],
    ) -> BTreeMap<String, String> {
        let Some(ids) = self.ids.get(&Language::En) else {
            return BTreeMap::new();
        };
        ids.iter()
            .filter_map(|id| id.strip_prefix(prefix).map(|rest| (id, rest)))
            .map(|(id, rest)| (rest.replace('-', "_"), self.text(language, id, args)))
            .collect()
    }

    /// The message ids of `language`.
    #[cfg(test)]
    pub fn ids(&self, language: Language) -> &[String] {
        self.ids
            .get(&language)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Whether `id` exists in `language` itself (no fallback).
    #[cfg(test)]
    pub fn has(&self, language: Language, id: &str) -> bool {
        self.bundles
            .get(&language)
            .is_some_and(|b| b.has_message(id))
    }
}

/// Name of the cookie that keeps a language chosen with `?lang=`.
pub const LANG_COOKIE: &str = "gatehouse_lang";

/// The request's language: `?lang=` (kept in a cookie) > the cookie >
/// `Accept-Language` > English.
#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for Language {
    type Error = std::convert::Infallible;

    async fn from_request(
        req: &'r rocket::Request<'_>,
    ) -> rocket::request::Outcome<Self, Self::Error> {
        use rocket::http::{Cookie, SameSite};
        let chosen = req
            .query_value::<&str>("lang")
            .and_then(Result::ok)
            .and_then(Language::from_tag);
        if let Some(language) = chosen {
            let cookie = Cookie::build((LANG_COOKIE, language.tag()))
                .path("/")
                .same_site(SameSite::Lax);
            req.cookies().add(cookie);
            return rocket::request::Outcome::Success(language);
        }
        let language = req
            .cookies()
            .get(LANG_COOKIE)
            .and_then(|c| Language::from_tag(c.value()))
            .or_else(|| {
                req.headers()
                    .get_one("Accept-Language")
                    .map(Language::negotiate)
            })
            .unwrap_or_default();
        rocket::request::Outcome::Success(language)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_a_supported_language() {
        assert_eq!(Language::negotiate("de-DE,de;q=0.9,en;q=0.8"), Language::De);
        assert_eq!(Language::negotiate("fr-FR, en;q=0.5"), Language::En);
        assert_eq!(Language::negotiate("fr"), Language::En);
        assert_eq!(Language::negotiate(""), Language::En);
    }

    #[test]
    fn accept_language_weights_outrank_the_written_order() {
        assert_eq!(Language::negotiate("en;q=0.2, de;q=0.9"), Language::De);
        assert_eq!(Language::negotiate("en;q=0.5,de"), Language::De);
        assert_eq!(Language::negotiate("de;q=0.1, en"), Language::En);
        assert_eq!(
            Language::negotiate("fr, en;q=0.3, de-AT;q=0.8"),
            Language::De
        );
    }

    #[test]
    fn accept_language_equal_weights_keep_their_order() {
        assert_eq!(Language::negotiate("de, en"), Language::De);
        assert_eq!(Language::negotiate("en;q=0.7, de;q=0.7"), Language::En);
    }

    #[test]
    fn accept_language_q_zero_refuses_a_language() {
        assert_eq!(Language::negotiate("de;q=0"), Language::En);
        assert_eq!(Language::negotiate("de;q=0, en;q=0.1"), Language::En);
        assert_eq!(Language::negotiate("de;q=0.0, *;q=0.5"), Language::En);
    }

    #[test]
    fn accept_language_garbage_falls_back_to_english() {
        for header in [",,;", "de;q=abc", "*", ";q=1", "x-\u{1}"] {
            assert_eq!(Language::negotiate(header), Language::En, "{header}");
        }
    }

    #[test]
    fn every_english_message_is_translated() {
        let catalog = Catalog::load(crate::screens::Screen::messages).unwrap();
        for id in catalog.ids(Language::En) {
            assert!(catalog.has(Language::De, id), "de lacks {id}");
        }
        assert!(catalog.ids(Language::En).len() > 50);
        assert_eq!(
            catalog.text(Language::De, "mail-reset-greeting", &[("name", "Ada")]),
            "Hallo Ada,"
        );
    }
}
