//! The open-redirect rules for `GET /login?redirect=`.

/// Accepts `raw` only as a same-site path: it starts with exactly one `/`, has
/// no `//` or `\` anywhere, no scheme or host, and no control characters or
/// whitespace (raw or percent-encoded).
///
/// ```
/// use gatehouse::security::same_site_path;
/// assert_eq!(same_site_path("/reports?year=2026"), Some("/reports?year=2026"));
/// assert_eq!(same_site_path("//evil.example"), None);
/// assert_eq!(same_site_path("https://evil.example/"), None);
/// ```
pub fn same_site_path(raw: &str) -> Option<&str> {
    let decoded = percent_encoding::percent_decode_str(raw).decode_utf8_lossy();
    let ok = |s: &str| {
        s.starts_with('/')
            && !s.contains("//")
            && !s.contains('\\')
            && !s.chars().any(|c| c.is_control() || c.is_whitespace())
    };
    (ok(raw) && ok(&decoded)).then_some(raw)
}

#[cfg(test)]
mod tests {
    use super::same_site_path;

    #[test]
    fn refuses_everything_that_could_leave_the_site() {
        for bad in [
            "",
            "dashboard",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil",
            "https://evil.example",
            "/a//b",
            "/%2F%2Fevil.example",
            "/%5Cevil",
            "/a b",
            "/a\tb",
            "/%0d%0aSet-Cookie:x",
            " /a",
            "javascript:alert(1)",
            "/ok\u{7f}",
        ] {
            assert_eq!(same_site_path(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn keeps_paths_and_queries() {
        for good in ["/", "/dashboard", "/reports/2026?sort=desc&page=2", "/a:b"] {
            assert_eq!(same_site_path(good), Some(good));
        }
    }
}
