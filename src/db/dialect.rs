//! The differences between the supported SQL engines, in one place.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The SQL dialect of the configured database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dialect {
    /// SQLite 3.35 or newer.
    Sqlite,
    /// PostgreSQL 12 or newer.
    Postgres,
    /// MySQL 8 or MariaDB 10.5 or newer.
    MySql,
}

/// The kind of statement `text` is, by its first word (`SELECT`,
/// `INSERT`, `UPDATE`, `DELETE`, `WITH`, …), `OTHER` for anything else.
fn operation_name(text: &str) -> &'static str {
    const KNOWN: [&str; 13] = [
        "SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "BEGIN", "COMMIT", "ROLLBACK", "SET",
        "PRAGMA", "CREATE", "ALTER", "DROP",
    ];
    let first = text.split_whitespace().next().unwrap_or_default();
    KNOWN
        .into_iter()
        .find(|known| first.eq_ignore_ascii_case(known))
        .unwrap_or("OTHER")
}

impl Dialect {
    /// The span of one statement `text` on this engine (a child of the
    /// request's): the engine, its kind (`db.operation.name`) and the
    /// statement as written, with its placeholders, never its values.
    pub(crate) fn statement_span(self, text: &str) -> tracing::Span {
        tracing::info_span!(
            "db.statement",
            otel.name = "db.statement",
            otel.kind = "client",
            db.system.name = self.system_name(),
            db.operation.name = operation_name(text),
            db.query.text = text,
            db.response.returned_rows = tracing::field::Empty,
        )
    }

    /// The engine as OpenTelemetry names it (`db.system.name`), and as
    /// the metrics' `engine` label does.
    pub(crate) fn system_name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgresql",
            Self::MySql => "mysql",
        }
    }

    /// Recognises the engine from a connection URL.
    pub fn from_url(url: &str) -> Result<Self, String> {
        let scheme = url.split(':').next().unwrap_or_default();
        match scheme {
            "sqlite" => Ok(Self::Sqlite),
            "postgres" | "postgresql" => Ok(Self::Postgres),
            "mysql" | "mariadb" => Ok(Self::MySql),
            _ => Err(format!(
                "unsupported database scheme `{scheme}` (use sqlite://, postgres:// or mysql://)"
            )),
        }
    }

    /// Turns `$1, $2, …` into `?` for MySQL; other engines take them as written.
    ///
    /// Queries bind each placeholder once and in order, so positional `?` keeps
    /// the meaning. Placeholders inside string literals are left alone.
    /// Nothing is kept: the rewritten text is the caller's, however many
    /// distinct statements it sends.
    pub fn placeholders(self, sql: &str) -> Cow<'_, str> {
        match self {
            Self::MySql => rewrite_placeholders(sql),
            Self::Sqlite | Self::Postgres => Cow::Borrowed(sql),
        }
    }

    /// [`Dialect::placeholders`] of a statement written into the code
    /// (`&'static str`): on MySQL the rewritten text is kept for the life of
    /// the process, once per statement of the code base, which is a fixed
    /// set that no request can grow.
    pub fn static_placeholders(self, sql: &'static str) -> &'static str {
        match self {
            Self::MySql => rewritten_once(sql),
            Self::Sqlite | Self::Postgres => sql,
        }
    }

    /// Quotes an identifier that comes from the declared model.
    pub fn quote(self, ident: &str) -> String {
        match self {
            Self::MySql => format!("`{}`", ident.replace('`', "``")),
            Self::Sqlite | Self::Postgres => format!("\"{}\"", ident.replace('"', "\"\"")),
        }
    }

    /// An expression for the current UTC time, storable in a timestamp column.
    pub fn now_utc(self) -> &'static str {
        match self {
            Self::Sqlite => "strftime('%Y-%m-%d %H:%M:%S', 'now')",
            Self::Postgres => "(now() AT TIME ZONE 'UTC')",
            Self::MySql => "UTC_TIMESTAMP()",
        }
    }

    /// The UTC timestamp `placeholder` seconds after the epoch, comparable
    /// with a timestamp column as the column is stored (so its index serves
    /// the comparison).
    pub(crate) fn utc_timestamp_at(self, placeholder: &str) -> String {
        match self {
            Self::Sqlite => format!("strftime('%Y-%m-%d %H:%M:%S', {placeholder}, 'unixepoch')"),
            Self::Postgres => format!(
                "(to_timestamp(CAST({placeholder} AS DOUBLE PRECISION)) AT TIME ZONE 'UTC')"
            ),
            Self::MySql => format!("TIMESTAMPADD(SECOND, {placeholder}, '1970-01-01')"),
        }
    }

    /// Seconds since the epoch of a UTC timestamp column, as a 64-bit integer.
    pub fn epoch_of(self, column: &str) -> String {
        match self {
            Self::Sqlite => format!("CAST(strftime('%s', {column}) AS INTEGER)"),
            Self::Postgres => format!("CAST(EXTRACT(EPOCH FROM {column}) AS BIGINT)"),
            Self::MySql => format!("CAST(TIMESTAMPDIFF(SECOND, '1970-01-01', {column}) AS SIGNED)"),
        }
    }

    /// `INSERT … ON CONFLICT` upsert clause for a unique `key` column.
    pub(crate) fn upsert(self, key: &str) -> String {
        match self {
            Self::MySql => "ON DUPLICATE KEY UPDATE".to_owned(),
            Self::Sqlite | Self::Postgres => format!("ON CONFLICT ({key}) DO UPDATE SET"),
        }
    }

    /// Whether `INSERT … RETURNING` is available. MySQL has none (MariaDB's
    /// is an extension of its own), so one path without it serves both.
    pub(crate) fn has_returning(self) -> bool {
        self != Self::MySql
    }

    /// Whether a page far into a result should read its columns only for
    /// its own rows, skipping the others by their keys alone. PostgreSQL
    /// computes every selected column of each row an `OFFSET` skips, and
    /// its key index alone yields the keys (an index-only scan). InnoDB
    /// copies every selected column of each skipped row out of its
    /// clustered index, where a scan for the key alone copies the key (its
    /// plan says "Using index"): the same pages, half the time for a page
    /// 90,000 rows in. SQLite checks the offset before it reads a row's
    /// columns, so skipping by key gains nothing there.
    pub(crate) fn defers_columns_past_offset(self) -> bool {
        match self {
            Self::Postgres | Self::MySql => true,
            Self::Sqlite => false,
        }
    }

    /// Whether a page's `LIMIT` and `OFFSET` are written into the statement
    /// as numerals rather than bound. PostgreSQL plans a prepared statement
    /// once only when its generic plan costs no more than a plan for the
    /// values at hand; with a bound `LIMIT` that plan assumes a tenth of
    /// the table is read, so every execution is planned again (0.08 ms
    /// against 0.4–0.7 ms for running a 1,000-row page by its key).
    /// Written in, a page of the same shape runs the plan its connection
    /// keeps. The bounds are integers the paging computes, never the
    /// client's text. MySQL and MariaDB plan each execution either way, and
    /// SQLite's plan does not depend on them: both keep them bound.
    pub(crate) fn writes_page_bounds(self) -> bool {
        self == Self::Postgres
    }

    /// The condition finding the user whose address is `placeholder` (an
    /// already lower-cased address), ignoring case. SQLite and PostgreSQL
    /// index `lower(email)`; MySQL and MariaDB cannot index that expression,
    /// but their `email` column compares without case under every default
    /// collation (and Laravel's), so its unique index finds the row, and
    /// `lower(email)` compared byte for byte then rejects what such a
    /// collation merely thinks equal (`é` and `e`).
    pub(crate) fn email_matches(self, placeholder: &str) -> String {
        match self {
            Self::MySql => format!(
                "email = {placeholder} AND CAST(lower(email) AS BINARY) = CAST({placeholder} AS BINARY)"
            ),
            Self::Sqlite | Self::Postgres => format!("lower(email) = {placeholder}"),
        }
    }

    /// `INSERT INTO table (columns) VALUES (values)` that inserts nothing,
    /// without an error, when a row with the same unique `key` exists.
    pub(crate) fn insert_unless_present(
        self,
        table: &str,
        columns: &str,
        values: &str,
        key: &str,
    ) -> String {
        match self {
            Self::MySql => format!("INSERT IGNORE INTO {table} ({columns}) VALUES ({values})"),
            Self::Sqlite | Self::Postgres => format!(
                "INSERT INTO {table} ({columns}) VALUES ({values}) ON CONFLICT ({key}) DO NOTHING"
            ),
        }
    }

    /// Lists `name`, `declared_type` and `not_null` (0 or 1) of the columns
    /// of table `$1`, in table order, each cast to a type sqlx's `Any`
    /// driver decodes.
    pub(crate) fn table_columns_sql(self) -> &'static str {
        match self {
            Self::Sqlite => {
                r#"SELECT name, type AS declared_type, "notnull" AS not_null
                   FROM pragma_table_info($1) ORDER BY cid"#
            }
            Self::Postgres => {
                "SELECT CAST(column_name AS TEXT) AS name, CAST(data_type AS TEXT) AS declared_type,
                        CAST(CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS BIGINT) AS not_null
                 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND CAST(table_name AS TEXT) = $1
                 ORDER BY ordinal_position"
            }
            // COLUMN_TYPE rather than DATA_TYPE: only it tells `tinyint(1)` apart.
            Self::MySql => {
                "SELECT CAST(column_name AS CHAR) AS name, CAST(column_type AS CHAR) AS declared_type,
                        CAST(CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS SIGNED) AS not_null
                 FROM information_schema.columns
                 WHERE table_schema = DATABASE() AND table_name = $1
                 ORDER BY ordinal_position"
            }
        }
    }
}

fn rewritten_once(sql: &'static str) -> &'static str {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = cache.get(sql) {
        return found;
    }
    let rewritten: &'static str =
        Box::leak(rewrite_placeholders(sql).into_owned().into_boxed_str());
    cache.insert(sql, rewritten);
    rewritten
}

fn rewrite_placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_string = !in_string;
                out.push(c);
            }
            '$' if !in_string && chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                out.push('?');
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_placeholders_become_question_marks() {
        assert_eq!(
            rewrite_placeholders("SELECT '$1' FROM t WHERE a = $1 AND b = $12"),
            "SELECT '$1' FROM t WHERE a = ? AND b = ?"
        );
    }

    #[test]
    fn scheme_picks_the_dialect() {
        assert_eq!(Dialect::from_url("sqlite://x.db"), Ok(Dialect::Sqlite));
        assert_eq!(Dialect::from_url("postgres://h/db"), Ok(Dialect::Postgres));
        assert_eq!(Dialect::from_url("mysql://h/db"), Ok(Dialect::MySql));
        assert_eq!(Dialect::from_url("mariadb://h/db"), Ok(Dialect::MySql));
        assert!(Dialect::from_url("oracle://h").is_err());
    }
}

#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn insert_unless_present_as_documented() {
        assert_eq!(Dialect::MySql.insert_unless_present("t", "a, b", "$1, $2", "a"),
                   "INSERT IGNORE INTO t (a, b) VALUES ($1, $2)");
        assert_eq!(Dialect::Sqlite.insert_unless_present("t", "a, b", "$1, $2", "a"),
                   "INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT (a) DO NOTHING");
    }
}
