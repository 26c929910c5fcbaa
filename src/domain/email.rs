//! A syntactically valid, normalised e-mail address.

use std::fmt;

/// An e-mail address: trimmed, its ASCII letters lower-cased, `local@domain`
/// with a dotted or bracketed domain, at most 255 characters (the width of
/// `users.email`).
///
/// Only ASCII is case-folded: a non-ASCII letter that has another lower
/// case (`Ü`, the Kelvin sign `K`) is refused rather than folded, because
/// Unicode folding can turn an address a provider verified into another one
/// (`Kate@…` with the Kelvin sign into the ASCII `kate@…`), and each
/// database engine's `lower()` folds such letters its own way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// Parses user input; `None` when it is not an address.
    ///
    /// ```
    /// use gatehouse::domain::Email;
    /// assert_eq!(Email::parse(" Ada@Example.ORG ").unwrap().as_str(), "ada@example.org");
    /// assert!(Email::parse("ada@").is_none());
    /// assert!(Email::parse("\u{212A}ate@example.org").is_none(), "the Kelvin sign");
    /// ```
    pub fn parse(raw: &str) -> Option<Self> {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.chars().count() > 255 {
            return None;
        }
        if trimmed.chars().any(folds_beyond_ascii) {
            return None;
        }
        let (local, domain) = trimmed.rsplit_once('@')?;
        let local_ok = !local.is_empty()
            && local.len() <= 64
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local
                .chars()
                .all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
        let domain_ok = !domain.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
            && domain
                .split('.')
                .all(|label| !label.is_empty() && !label.starts_with('-') && !label.ends_with('-'))
            && domain
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '.');
        (local_ok && domain_ok).then(|| Self(trimmed.to_ascii_lowercase()))
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `c` is a non-ASCII character that lower-casing would change.
fn folds_beyond_ascii(c: char) -> bool {
    !c.is_ascii() && !c.to_lowercase().eq(std::iter::once(c))
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Email;

    #[test]
    fn accepts_ordinary_addresses() {
        for ok in ["a@b.co", "first.last+tag@sub.example.org", "ünï@exämple.de"] {
            assert!(Email::parse(ok).is_some(), "{ok}");
        }
    }

    #[test]
    fn folds_ascii_only_and_refuses_letters_that_would_fold_beyond_it() {
        assert_eq!(Email::parse("Ada@EXAMPLE.org").unwrap().as_str(), "ada@example.org");
        assert_eq!(Email::parse("ünï@exämple.de").unwrap().as_str(), "ünï@exämple.de");
        // The Kelvin sign folds into an ASCII k; the dotted capital I into
        // i and a combining dot; a capital umlaut into its small one.
        for refused in ["\u{212A}ate@example.org", "kate@\u{212A}.example.org", "\u{130}da@x.org", "Ünï@exämple.de"] {
            assert!(Email::parse(refused).is_none(), "{refused}");
        }
    }

    #[test]
    fn refuses_malformed_addresses() {
        for bad in [
            "",
            "plain",
            "@x.org",
            "a@",
            "a@b",
            "a@.b.c",
            "a b@c.org",
            "a@@b.org",
            "a..b@c.org",
            "a@b..org",
        ] {
            assert!(Email::parse(bad).is_none(), "{bad}");
        }
    }
}
