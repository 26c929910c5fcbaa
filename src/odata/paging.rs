//! Server-driven paging policy: which page size applies to a request (from the
//! `Prefer` header, the configured default and the configured maximum), which
//! rows one page fetches, and the `@odata.nextLink` that leads to the next
//! page. Pure: no HTTP, no database.
//!
//! `$top` is the total the client wants; the page size cuts it into pages. The
//! next link keeps every query option of the request, replacing `$skip` and
//! lowering `$top` by what was delivered, so following it verbatim yields the
//! next page of the same filtered, sorted, projected collection.
//!
//! ```
//! use gatehouse::odata::{next_link, parse_query, PagePlan, PageSize};
//! let size = PageSize::resolve(Some("odata.maxpagesize=2"), 200, None);
//! assert_eq!(size.preference_applied().as_deref(), Some("odata.maxpagesize=2"));
//! let q = parse_query("$filter=age gt 3&$top=5").unwrap();
//! let plan = PagePlan::new(&q, size.size);
//! assert_eq!((plan.offset, plan.rows), (0, 2));
//! let link = next_link("http://h", "Users", &q, 2, true).unwrap();
//! assert_eq!(link, "http://h/odata/Users?$filter=age%20gt%203&$top=3&$skip=2");
//! ```

use super::query::Query;

pub use crate::config::DEFAULT_PAGE_SIZE;

/// The page size in effect for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSize {
    /// The number of entities one page holds at most (at least 1).
    pub size: u64,
    /// Whether the client sent a valid `maxpagesize` preference, in which case
    /// the response carries `Preference-Applied: odata.maxpagesize=<size>`.
    pub from_preference: bool,
}

impl PageSize {
    /// Resolves the page size: the client's `odata.maxpagesize` (or
    /// `maxpagesize`) preference from the `Prefer` header value if it holds a
    /// valid positive integer, otherwise `default`; then clamped to `max` when
    /// one is configured. Preference names are case-insensitive, several
    /// preferences may be comma-separated (join repeated `Prefer` headers with
    /// `,`), parameters after `;` are ignored, and the first valid
    /// `maxpagesize` wins; invalid values are ignored.
    ///
    /// ```
    /// use gatehouse::odata::PageSize;
    /// let s = PageSize::resolve(Some("return=minimal, MaxPageSize=500"), 200, Some(100));
    /// assert_eq!((s.size, s.from_preference), (100, true));
    /// assert_eq!(PageSize::resolve(None, 200, None).size, 200);
    /// ```
    pub fn resolve(prefer: Option<&str>, default: u64, max: Option<u64>) -> PageSize {
        let preferred = prefer.and_then(preferred_max_page_size);
        let mut size = preferred.unwrap_or(default);
        if let Some(max) = max {
            size = size.min(max);
        }
        PageSize {
            size: size.max(1),
            from_preference: preferred.is_some(),
        }
    }

    /// The `Preference-Applied` header value to send, if any:
    /// `odata.maxpagesize=<n>` with the size actually applied, whenever the
    /// client sent the preference.
    pub fn preference_applied(&self) -> Option<String> {
        self.from_preference
            .then(|| format!("odata.maxpagesize={}", self.size))
    }
}

/// The first valid `odata.maxpagesize` / `maxpagesize` value in a `Prefer`
/// header value.
fn preferred_max_page_size(header: &str) -> Option<u64> {
    header.split(',').find_map(|preference| {
        let token = preference.split(';').next().unwrap_or("");
        let (name, value) = token.split_once('=')?;
        let name = name.trim();
        if !name.eq_ignore_ascii_case("odata.maxpagesize")
            && !name.eq_ignore_ascii_case("maxpagesize")
        {
            return None;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        value.parse::<u64>().ok().filter(|n| *n > 0)
    })
}

/// Which rows one page of a collection reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagePlan {
    /// Rows to pass over first: `$skip`, or 0.
    pub offset: u64,
    /// Rows to deliver on this page: the page size, or what remains of `$top`
    /// when that is smaller.
    pub rows: u64,
}

impl PagePlan {
    /// The plan for the page `query` asks for under page size `size`.
    ///
    /// ```
    /// use gatehouse::odata::{parse_query, PagePlan};
    /// let q = parse_query("$skip=20&$top=10").unwrap();
    /// assert_eq!(PagePlan::new(&q, 200), PagePlan { offset: 20, rows: 10 });
    /// ```
    pub fn new(query: &Query, size: u64) -> PagePlan {
        let rows = match query.top {
            Some(top) => top.min(size),
            None => size,
        };
        PagePlan {
            offset: query.skip.unwrap_or(0),
            rows,
        }
    }

    /// Rows to ask the database for: one more than [`rows`](Self::rows), so
    /// that the presence of an extra row tells whether more rows exist.
    #[cfg(test)]
    pub fn probe_rows(&self) -> u64 {
        self.rows.saturating_add(1)
    }
}

/// The absolute `@odata.nextLink` after a page that delivered `delivered`
/// entities of the collection at `<base_url>/odata/<set_path>` requested with
/// `query`; `more_rows_exist` says whether the collection has rows beyond
/// this page. `None` on the last page: when no more rows exist, when `$top`
/// is exhausted, or when nothing was delivered.
///
/// The link keeps every query option and extra parameter of `query`,
/// replacing `$skip` with `$skip + delivered` and lowering `$top` by
/// `delivered`. `set_path` (such as `Users` or `Users(3)/posts`) is used as
/// given and must already be URL-safe.
pub fn next_link(
    base_url: &str,
    set_path: &str,
    query: &Query,
    delivered: u64,
    more_rows_exist: bool,
) -> Option<String> {
    if !more_rows_exist || delivered == 0 {
        return None;
    }
    let mut next = query.clone();
    if let Some(top) = query.top {
        let remaining = top.saturating_sub(delivered);
        if remaining == 0 {
            return None;
        }
        next.top = Some(remaining);
    }
    next.skip = Some(query.skip.unwrap_or(0).saturating_add(delivered));
    Some(format!(
        "{}/odata/{}?{}",
        base_url.trim_end_matches('/'),
        set_path.trim_start_matches('/'),
        next.to_query_string()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::odata::parse_query;

    fn resolve(prefer: Option<&str>, max: Option<u64>) -> (u64, Option<String>) {
        let s = PageSize::resolve(prefer, DEFAULT_PAGE_SIZE, max);
        (s.size, s.preference_applied())
    }

    #[test]
    fn default_applies_without_preference() {
        assert_eq!(resolve(None, None), (200, None));
        assert_eq!(resolve(Some("return=minimal"), None), (200, None));
        assert_eq!(resolve(Some(""), None), (200, None));
    }

    #[test]
    fn default_is_clamped_to_max() {
        assert_eq!(resolve(None, Some(50)), (50, None));
        assert_eq!(resolve(None, Some(500)), (200, None));
    }

    #[test]
    fn both_spellings_are_honoured_case_insensitively() {
        let applied = |n: u64| Some(format!("odata.maxpagesize={n}"));
        assert_eq!(resolve(Some("odata.maxpagesize=7"), None), (7, applied(7)));
        assert_eq!(resolve(Some("maxpagesize=8"), None), (8, applied(8)));
        assert_eq!(resolve(Some("OData.MaxPageSize=9"), None), (9, applied(9)));
        assert_eq!(resolve(Some("MAXPAGESIZE = 10"), None), (10, applied(10)));
        assert_eq!(resolve(Some("maxpagesize=\"11\""), None), (11, applied(11)));
    }

    #[test]
    fn preference_above_default_is_granted_unless_max_is_lower() {
        let applied = |n: u64| Some(format!("odata.maxpagesize={n}"));
        assert_eq!(resolve(Some("maxpagesize=500"), None), (500, applied(500)));
        assert_eq!(
            resolve(Some("maxpagesize=500"), Some(300)),
            (300, applied(300))
        );
        assert_eq!(resolve(Some("maxpagesize=5"), Some(300)), (5, applied(5)));
    }

    #[test]
    fn preference_is_found_among_others() {
        let (size, applied) = resolve(
            Some("return=representation, odata.maxpagesize=25; foo=bar, respond-async"),
            None,
        );
        assert_eq!(size, 25);
        assert_eq!(applied.as_deref(), Some("odata.maxpagesize=25"));
    }

    #[test]
    fn invalid_values_are_ignored() {
        for bad in [
            "maxpagesize=",
            "maxpagesize=-3",
            "maxpagesize=0",
            "maxpagesize=abc",
            "maxpagesize=1.5",
            "maxpagesize=+4",
            "maxpagesize=99999999999999999999999",
            "maxpagesize",
            "xmaxpagesize=4",
        ] {
            assert_eq!(resolve(Some(bad), None), (200, None), "{bad}");
        }
        // The first valid one wins.
        assert_eq!(resolve(Some("maxpagesize=x, maxpagesize=4"), None).0, 4);
        assert_eq!(resolve(Some("maxpagesize=3, maxpagesize=4"), None).0, 3);
    }

    #[test]
    fn size_is_never_zero() {
        assert_eq!(PageSize::resolve(None, 0, None).size, 1);
        assert_eq!(PageSize::resolve(None, 10, Some(0)).size, 1);
    }

    #[test]
    fn plan_uses_skip_and_remaining_top() {
        let plan = |qs: &str, size| PagePlan::new(&parse_query(qs).unwrap(), size);
        assert_eq!(
            plan("", 200),
            PagePlan {
                offset: 0,
                rows: 200
            }
        );
        assert_eq!(
            plan("$top=10", 200),
            PagePlan {
                offset: 0,
                rows: 10
            }
        );
        assert_eq!(
            plan("$top=500", 200),
            PagePlan {
                offset: 0,
                rows: 200
            }
        );
        assert_eq!(
            plan("$skip=30", 200),
            PagePlan {
                offset: 30,
                rows: 200
            }
        );
        assert_eq!(
            plan("$top=10&$skip=20", 200),
            PagePlan {
                offset: 20,
                rows: 10
            }
        );
        assert_eq!(plan("$top=0", 200), PagePlan { offset: 0, rows: 0 });
        assert_eq!(plan("$top=3", 200).probe_rows(), 4);
    }

    fn link(qs: &str, delivered: u64, more: bool) -> Option<String> {
        next_link(
            "https://example.test/",
            "Users",
            &parse_query(qs).unwrap(),
            delivered,
            more,
        )
    }

    #[test]
    fn next_link_is_absolute_and_sets_skip() {
        assert_eq!(
            link("", 200, true).as_deref(),
            Some("https://example.test/odata/Users?$skip=200")
        );
    }

    #[test]
    fn next_link_keeps_every_option_and_extra_parameters() {
        let got = link(
            "$filter=name eq 'A%26B'&$orderby=age desc,id&$select=name,age&$search=foo&$expand=posts&$count=true&lang=en",
            2,
            true,
        )
        .unwrap();
        assert_eq!(
            got,
            "https://example.test/odata/Users?$filter=name%20eq%20'A%26B'&$search=foo\
             &$select=name,age&$expand=posts&$orderby=age%20desc,id&$skip=2&$count=true&lang=en"
        );
        // The link parses back to the same query, moved on by one page.
        let query = got.split_once('?').unwrap().1;
        let mut expected = parse_query(
            "$filter=name eq 'A%26B'&$orderby=age desc,id&$select=name,age&$search=foo&$expand=posts&$count=true&lang=en",
        )
        .unwrap();
        expected.skip = Some(2);
        assert_eq!(parse_query(query).unwrap(), expected);
    }

    #[test]
    fn next_link_lowers_top_and_advances_skip() {
        assert_eq!(
            link("$top=10&$skip=20", 4, true).as_deref(),
            Some("https://example.test/odata/Users?$top=6&$skip=24")
        );
    }

    #[test]
    fn no_next_link_on_last_page() {
        assert_eq!(link("", 200, false), None);
        assert_eq!(link("$filter=age gt 1", 7, false), None);
        // $top exhausted, even though the collection has more rows.
        assert_eq!(link("$top=10", 10, true), None);
        assert_eq!(link("$top=3&$skip=5", 3, true), None);
        // Nothing delivered: no link that would loop.
        assert_eq!(link("", 0, true), None);
    }

    #[test]
    fn skip_alone_pages_from_the_offset() {
        let q = parse_query("$skip=50").unwrap();
        let plan = PagePlan::new(&q, 20);
        assert_eq!(
            plan,
            PagePlan {
                offset: 50,
                rows: 20
            }
        );
        assert_eq!(
            next_link("http://h", "Users", &q, plan.rows, true).as_deref(),
            Some("http://h/odata/Users?$skip=70")
        );
    }

    #[test]
    fn next_link_follows_navigation_paths_and_base_prefixes() {
        let q = parse_query("$top=5").unwrap();
        assert_eq!(
            next_link("http://h/app/", "/Users(3)/posts", &q, 2, true).as_deref(),
            Some("http://h/app/odata/Users(3)/posts?$top=3&$skip=2")
        );
    }
}
