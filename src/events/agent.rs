//! A client's `User-Agent` header in words, for the security notices and
//! the list of devices: the browser family and operating system that
//! woothee's parser recognised, in the names of its own list. No text of
//! the header itself is repeated.

/// What the parser recognised of one header.
struct Recognised<'a> {
    name: &'a str,
    version: String,
    os: Option<&'a str>,
}

/// Parses `user_agent`: `None` for a crawler or a browser the parser does
/// not know.
fn recognise(user_agent: Option<&str>) -> Option<Recognised<'_>> {
    const UNKNOWN: &str = "UNKNOWN";
    let found = woothee::parser::Parser::new().parse(user_agent?)?;
    if found.name == UNKNOWN || found.category == "crawler" {
        return None;
    }
    let version: Vec<&str> = found
        .version
        .split('.')
        .take(2)
        .take_while(|part| !part.is_empty() && part.len() <= 6 && part.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    Some(Recognised {
        name: found.name,
        version: version.join("."),
        os: (found.os != UNKNOWN).then_some(found.os),
    })
}

/// `name on os`, or `name` alone when the system is unknown.
fn on(name: String, os: Option<&str>) -> String {
    match os {
        Some(os) => format!("{name} on {os}"),
        None => name,
    }
}

/// "Chrome on Linux", "Safari on iPhone": the device a session runs on;
/// `None` ("Unknown browser") when the parser did not recognise it.
pub fn device(user_agent: Option<&str>) -> Option<String> {
    let found = recognise(user_agent)?;
    Some(on(found.name.to_owned(), found.os))
}

/// "Chrome 131.0 on Linux": [`device`] with at most two numeric parts of
/// the browser's version, for a notice of a sign-in.
pub fn browser(user_agent: Option<&str>) -> Option<String> {
    let found = recognise(user_agent)?;
    let name = match found.version.as_str() {
        "" => found.name.to_owned(),
        version => format!("{} {version}", found.name),
    };
    Some(on(name, found.os))
}

#[cfg(test)]
mod tests {
    use super::{browser, device};

    const CHROME_LINUX: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                                Chrome/131.0.6778.85 Safari/537.36";

    #[test]
    fn browsers_are_named_from_their_user_agent() {
        assert_eq!(browser(Some(CHROME_LINUX)).as_deref(), Some("Chrome 131.0 on Linux"));
        let planted = "Call +1 555 0100 now or visit https://evil.example/recover";
        assert_eq!(browser(Some(planted)), None, "no text of the header");
        let unknown = "x".repeat(300);
        assert_eq!(browser(Some(&unknown)), None);
        assert_eq!(browser(None), None);
        let odd = "Mozilla/5.0 (Windows NT 10.0) Chrome/131.0<a href=x>.1 Safari/537.36";
        let named = browser(Some(odd)).unwrap_or_default();
        assert!(!named.contains('<') && !named.contains("href"), "{named}");
    }

    #[test]
    fn devices_are_named_in_words() {
        let cases = [
            (CHROME_LINUX, "Chrome on Linux"),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
                "Safari on iPhone",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
                "Firefox on Windows 10",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) \
                 Version/18.1 Safari/605.1.15",
                "Safari on Mac OSX",
            ),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/131.0.0.0 Mobile Safari/537.36",
                "Chrome on Android",
            ),
        ];
        for (user_agent, words) in cases {
            assert_eq!(device(Some(user_agent)).as_deref(), Some(words), "{user_agent}");
        }
        assert_eq!(device(Some("curl/8.5.0")).as_deref(), Some("HTTP Library"));
        assert_eq!(device(Some("Googlebot/2.1 (+http://www.google.com/bot.html)")), None);
        assert_eq!(device(None), None);
    }
}
