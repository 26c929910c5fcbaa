//! Server-driven paging: one [`Page`] carries a request from its `Prefer`
//! header to the statement's `LIMIT` and on to the `@odata.nextLink` that
//! leads to the next page. It knows the page size in effect (from the
//! `Prefer` header, the configured default and the configured maximum), the
//! slice of rows the query asks for, the one row beyond that slice a
//! statement reads to learn whether more rows remain, and the link that
//! follows. The top level and every per-parent page inside `$expand` are cut
//! the same way ([`Page::of`]). Pure: no HTTP, no database.
//!
//! `$top` is the total the client wants; the page size cuts it into pages. The
//! next link keeps every query option of the request, replacing `$skip` and
//! lowering `$top` by what was delivered, so following it verbatim yields the
//! next page of the same filtered, sorted, projected collection.
//!
//! ```
//! use gatehouse::odata::{parse_query, Page};
//! let request = Page::from_prefer(Some("odata.maxpagesize=2"), 200, None);
//! assert_eq!(request.preference_applied().as_deref(), Some("odata.maxpagesize=2"));
//! let q = parse_query("$filter=age gt 3&$top=5").unwrap();
//! let page = request.of(&q);
//! assert_eq!((page.offset(), page.rows(), page.limit()), (0, 2, 3));
//! let link = page.next_link("http://h", "Users", &q, 2, true, None).unwrap();
//! assert_eq!(link, "http://h/odata/Users?$filter=age%20gt%203&$top=3&$skip=2");
//! ```

use crate::odata::query::syntax::Query;

pub use crate::config::DEFAULT_PAGE_SIZE;

/// One page of a collection: the page size in effect for the request, the
/// rows the page delivers, and the statement's probe row beyond them.
///
/// Made once per request from its `Prefer` header ([`from_prefer`]), then
/// cut to what a query's `$skip` and `$top` ask ([`of`]), at the top level
/// and for each expanded collection; [`first`] makes a page that is not
/// the client's to size (a key lookup reads one row).
///
/// [`from_prefer`]: Page::from_prefer
/// [`of`]: Page::of
/// [`first`]: Page::first
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The number of entities a page holds at most (at least 1).
    size: u64,
    /// Whether the client sent a valid `maxpagesize` preference.
    preferred: bool,
    /// Rows to pass over first.
    offset: u64,
    /// Rows to deliver on this page (at most `size`).
    rows: u64,
}

impl Page {
    /// The page of a request whose `Prefer` header (repeated headers joined
    /// with `,`) is `prefer`: its size is the client's `odata.maxpagesize`
    /// (or `maxpagesize`) preference if that holds a valid positive
    /// integer, otherwise `default`; then clamped to `max` when one is
    /// configured, and never below 1. Preference names are
    /// case-insensitive, parameters after `;` are ignored, and the first
    /// valid `maxpagesize` wins; invalid values are ignored. The page starts
    /// at the first row and holds a whole page until [`of`](Self::of) cuts
    /// it to a query.
    ///
    /// ```
    /// use gatehouse::odata::Page;
    /// let page = Page::from_prefer(Some("return=minimal, MaxPageSize=500"), 200, Some(100));
    /// assert_eq!(page.rows(), 100);
    /// assert_eq!(page.preference_applied().as_deref(), Some("odata.maxpagesize=100"));
    /// assert_eq!(Page::from_prefer(None, 200, None).rows(), 200);
    /// ```
    pub fn from_prefer(prefer: Option<&str>, default: u64, max: Option<u64>) -> Page {
        let preferred = prefer.and_then(preferred_max_page_size);
        let mut size = preferred.unwrap_or(default);
        if let Some(max) = max {
            size = size.min(max);
        }
        let size = size.max(1);
        Page {
            size,
            preferred: preferred.is_some(),
            offset: 0,
            rows: size,
        }
    }

    /// The first `rows` rows, whatever the client prefers: the one entity
    /// of a key lookup, or the targets of a to-one expansion.
    pub fn first(rows: u64) -> Page {
        Page {
            size: rows.max(1),
            preferred: false,
            offset: 0,
            rows,
        }
    }

    /// The page `query` asks for under this page's size: past `$skip` rows,
    /// the page size or what `$top` wants when that is smaller. The top
    /// level cuts the request's page with the request's query; an expanded
    /// collection cuts it with its nested options, for each parent.
    ///
    /// ```
    /// use gatehouse::odata::{parse_query, Page};
    /// let page = Page::from_prefer(None, 200, None).of(&parse_query("$skip=20&$top=10").unwrap());
    /// assert_eq!((page.offset(), page.rows()), (20, 10));
    /// ```
    pub fn of(&self, query: &Query) -> Page {
        Page {
            offset: query.skip.unwrap_or(0),
            rows: query.top.map_or(self.size, |top| top.min(self.size)),
            ..*self
        }
    }

    /// Rows to pass over first: `$skip`, or 0.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Rows to deliver on this page at most.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows a statement asks for: one beyond the page, whose presence tells
    /// that more rows exist.
    pub fn limit(&self) -> u64 {
        self.rows.saturating_add(1)
    }

    /// Cuts `fetched` (read with [`limit`](Self::limit)) to the page;
    /// answers whether the probe row beyond it was there.
    pub fn cut<T>(&self, fetched: &mut Vec<T>) -> bool {
        let more = fetched.len() as u64 > self.rows;
        fetched.truncate(usize::try_from(self.rows).unwrap_or(usize::MAX));
        more
    }

    /// The `Preference-Applied` header value to send, if any:
    /// `odata.maxpagesize=<n>` with the size actually applied, whenever the
    /// client sent the preference.
    pub fn preference_applied(&self) -> Option<String> {
        self.preferred
            .then(|| format!("odata.maxpagesize={}", self.size))
    }

    /// The absolute `@odata.nextLink` after this page, cut from `query`,
    /// delivered `delivered` entities of the collection at
    /// `<base_url>/odata/<set_path>`; `more_rows_exist` says whether the
    /// probe row came. `None` on the last page: when no more rows exist,
    /// when `$top` is exhausted, or when nothing was delivered.
    ///
    /// The link keeps every query option and extra parameter of `query`,
    /// replacing `$skip` with the page's offset plus `delivered`, lowering
    /// `$top` by `delivered`, and carrying `token` as its `$skiptoken` (none
    /// when `None`). `set_path` (such as `Users` or
    /// `Users(3)/posts`) is used as given and must already be URL-safe.
    pub fn next_link(
        &self,
        base_url: &str,
        set_path: &str,
        query: &Query,
        delivered: u64,
        more_rows_exist: bool,
        token: Option<String>,
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
        next.skip = Some(self.offset.saturating_add(delivered));
        next.skiptoken = token;
        Some(format!(
            "{}/odata/{}?{}",
            base_url.trim_end_matches('/'),
            set_path.trim_start_matches('/'),
            next.to_query_string()
        ))
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

#[cfg(test)]
#[path = "paging_tests.rs"]
mod tests;
