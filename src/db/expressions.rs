//! The expressions the OData SQL generator needs, per engine: null-safe
//! comparison, case-insensitive matching, string, arithmetic and date
//! functions, ordering and paging. Kept beside `Dialect` so every engine
//! difference stays in `db/`.

use super::Dialect;

/// The typed values generated SQL binds as text and converts in the query,
/// because each engine spells (and stores) them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextValue {
    /// An exact decimal number.
    Decimal,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An instant, as written by [`Dialect::instant_text`].
    Instant,
    /// A time of day, `HH:MM:SS[.f]`.
    TimeOfDay,
    /// A GUID in its hyphenated form.
    Guid,
}

/// The parts of a date or time generated SQL can extract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatePart {
    /// The year.
    Year,
    /// The month, 1–12.
    Month,
    /// The day of the month.
    Day,
    /// The hour, 0–23.
    Hour,
    /// The minute.
    Minute,
    /// The whole second.
    Second,
}

/// How SQLite writes an instant: UTC, millisecond precision, sortable as text.
const SQLITE_INSTANT: &str = "'%Y-%m-%dT%H:%M:%f'";

/// Building blocks for SQL generated from OData queries. Operands are SQL
/// fragments already made safe by the caller (quoted identifiers, `$n`
/// placeholders); these methods only arrange them.
impl Dialect {
    /// Prepares generated SQL for binding: MySQL gets `?` placeholders and the
    /// 1-based numbers of the values to bind, in order (a number may repeat);
    /// other engines keep `$n` and get `None` (bind the values as numbered).
    pub(crate) fn positional(self, sql: &str) -> (String, Option<Vec<usize>>) {
        if self != Self::MySql {
            return (sql.to_owned(), None);
        }
        let (mut out, mut order) = (String::with_capacity(sql.len()), Vec::new());
        let mut chars = sql.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (None, '\'' | '"' | '`') => quote = Some(c),
                (None, '$') if chars.peek().is_some_and(char::is_ascii_digit) => {
                    let mut n = 0usize;
                    while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                        n = n.saturating_mul(10).saturating_add(d as usize);
                        chars.next();
                    }
                    order.push(n);
                    out.push('?');
                    continue;
                }
                _ => {}
            }
            out.push(c);
        }
        (out, Some(order))
    }

    /// Makes string ordering and searching on `expr` case-sensitive, by
    /// code point, whatever the column collation (only MySQL's default
    /// collations ignore case).
    pub(crate) fn case_sensitive(self, expr: &str) -> String {
        match self {
            Self::MySql => format!("({expr} COLLATE utf8mb4_bin)"),
            Self::Sqlite | Self::Postgres => expr.to_owned(),
        }
    }

    /// `expr` as text that equals only the same characters: on MySQL, whose
    /// default collations ignore case (and trailing spaces), its bytes.
    pub(crate) fn exact_text(self, expr: &str) -> String {
        match self {
            Self::MySql => format!("CAST({expr} AS BINARY)"),
            Self::Sqlite | Self::Postgres => expr.to_owned(),
        }
    }

    /// The condition `column test` (`= $1`, `IN ($1, $2)`) on a text column,
    /// comparing exact text. On MySQL the column's own collation first
    /// narrows the rows, so an index on the column serves the lookup, and
    /// the exact bytes then confirm them: text equal byte for byte is equal
    /// under every collation, so nothing is lost.
    pub(crate) fn text_match(self, column: &str, test: &str) -> String {
        match self {
            Self::MySql => format!("({column} {test} AND {} {test})", self.exact_text(column)),
            Self::Sqlite | Self::Postgres => format!("({column} {test})"),
        }
    }

    /// True when `a` equals `b`, nulls being equal to each other; never null.
    pub(crate) fn null_safe_eq(self, a: &str, b: &str) -> String {
        match self {
            Self::Sqlite => format!("({a} IS {b})"),
            Self::Postgres => format!("({a} IS NOT DISTINCT FROM {b})"),
            Self::MySql => format!("({a} <=> {b})"),
        }
    }

    /// The negation of [`null_safe_eq`](Self::null_safe_eq); never null.
    pub(crate) fn null_safe_ne(self, a: &str, b: &str) -> String {
        match self {
            Self::Sqlite => format!("({a} IS NOT {b})"),
            Self::Postgres => format!("({a} IS DISTINCT FROM {b})"),
            Self::MySql => format!("(NOT ({a} <=> {b}))"),
        }
    }

    /// Case-insensitive `LIKE` of `expr` against `pattern`, in which `!`
    /// escapes `%`, `_` and itself (`!` needs no escaping in any engine's
    /// string literals, unlike `\` in MySQL's).
    pub(crate) fn like_ignoring_case(self, expr: &str, pattern: &str) -> String {
        format!("(lower({expr}) LIKE lower({pattern}) ESCAPE '!')")
    }

    /// The 1-based position of `needle` in `haystack`, 0 when absent.
    pub(crate) fn position(self, haystack: &str, needle: &str) -> String {
        match self {
            Self::Sqlite => format!("instr({haystack}, {needle})"),
            Self::Postgres => format!("strpos({haystack}, {needle})"),
            Self::MySql => format!("LOCATE({needle}, {haystack})"),
        }
    }

    /// Whether `text` ends with `suffix` (null when either is null).
    pub(crate) fn ends_with(self, text: &str, suffix: &str) -> String {
        match self {
            Self::Sqlite => format!(
                "(substr({text}, -length({suffix})) = {suffix} \
                 OR ({suffix} = '' AND {text} IS NOT NULL))"
            ),
            Self::Postgres => format!("(right({text}, char_length({suffix})) = {suffix})"),
            Self::MySql => format!("(RIGHT({text}, CHAR_LENGTH({suffix})) = {suffix})"),
        }
    }

    /// The part of `text` from the 0-based position `start`, of at most
    /// `length` characters when given.
    pub(crate) fn substring(self, text: &str, start: &str, length: Option<&str>) -> String {
        match (self, length) {
            (Self::Postgres, None) => format!("substr({text}, CAST({start} + 1 AS INTEGER))"),
            (Self::Postgres, Some(n)) => {
                format!("substr({text}, CAST({start} + 1 AS INTEGER), CAST({n} AS INTEGER))")
            }
            (_, None) => format!("substr({text}, {start} + 1)"),
            (_, Some(n)) => format!("substr({text}, {start} + 1, {n})"),
        }
    }

    /// The length of a string in characters.
    pub(crate) fn char_length(self, expr: &str) -> String {
        match self {
            Self::Sqlite => format!("length({expr})"),
            Self::Postgres | Self::MySql => format!("char_length({expr})"),
        }
    }

    /// Two strings joined.
    pub(crate) fn concat(self, a: &str, b: &str) -> String {
        match self {
            Self::MySql => format!("CONCAT({a}, {b})"),
            Self::Sqlite | Self::Postgres => format!("({a} || {b})"),
        }
    }

    /// Integer division, truncating.
    pub(crate) fn int_div(self, a: &str, b: &str) -> String {
        match self {
            Self::MySql => format!("({a} DIV {b})"),
            Self::Sqlite | Self::Postgres => format!("({a} / {b})"),
        }
    }

    /// Division keeping fractions even for integer operands.
    pub(crate) fn decimal_div(self, a: &str, b: &str) -> String {
        match self {
            Self::Sqlite => format!("(CAST({a} AS REAL) / {b})"),
            Self::Postgres => format!("(CAST({a} AS NUMERIC) / {b})"),
            Self::MySql => format!("({a} / {b})"),
        }
    }

    /// The remainder of `a / b`, signed like `a`; exact for decimals, and
    /// with the fraction kept for non-integer operands on every engine.
    pub(crate) fn modulo(self, a: &str, b: &str, integers: bool) -> String {
        match (self, integers) {
            (_, true) => format!("({a} % {b})"),
            (Self::Sqlite, false) => {
                format!("({a} - {b} * CAST(CAST({a} AS REAL) / {b} AS INTEGER))")
            }
            (Self::Postgres, false) => {
                format!("MOD(CAST({a} AS NUMERIC), CAST({b} AS NUMERIC))")
            }
            (Self::MySql, false) => format!("MOD({a}, {b})"),
        }
    }

    /// `x` rounded to the nearest integer, halves away from zero (as
    /// OData says; PostgreSQL and MySQL round doubles half to even).
    pub(crate) fn round(self, x: &str) -> String {
        match self {
            Self::Sqlite => format!("round({x})"),
            Self::Postgres => format!("ROUND(CAST({x} AS NUMERIC))"),
            Self::MySql => format!("ROUND(CAST({x} AS DECIMAL(65, 30)))"),
        }
    }

    /// The largest integer not above `x` (SQLite may lack `floor`).
    pub(crate) fn floor(self, x: &str) -> String {
        match self {
            Self::Sqlite => format!("(CAST({x} AS INTEGER) - ({x} < CAST({x} AS INTEGER)))"),
            Self::Postgres | Self::MySql => format!("FLOOR({x})"),
        }
    }

    /// The smallest integer not below `x` (SQLite may lack `ceil`).
    pub(crate) fn ceiling(self, x: &str) -> String {
        match self {
            Self::Sqlite => format!("(CAST({x} AS INTEGER) + ({x} > CAST({x} AS INTEGER)))"),
            Self::Postgres | Self::MySql => format!("CEILING({x})"),
        }
    }

    /// A part of a date, instant or time of day, as an integer.
    pub(crate) fn date_part(self, part: DatePart, x: &str) -> String {
        let (sqlite, sql) = match part {
            DatePart::Year => ("%Y", "YEAR"),
            DatePart::Month => ("%m", "MONTH"),
            DatePart::Day => ("%d", "DAY"),
            DatePart::Hour => ("%H", "HOUR"),
            DatePart::Minute => ("%M", "MINUTE"),
            DatePart::Second => ("%S", "SECOND"),
        };
        match self {
            Self::Sqlite => format!("CAST(strftime('{sqlite}', {x}) AS INTEGER)"),
            Self::Postgres => format!("CAST(FLOOR(EXTRACT({sql} FROM {x})) AS INTEGER)"),
            Self::MySql => format!("{sql}({x})"),
        }
    }

    /// The UTC date of an instant.
    pub(crate) fn date_of(self, instant: &str) -> String {
        match self {
            Self::Sqlite => format!("date({instant})"),
            Self::Postgres => format!("CAST(({instant} AT TIME ZONE 'UTC') AS DATE)"),
            Self::MySql => format!("DATE({instant})"),
        }
    }

    /// The UTC time of day of an instant.
    pub(crate) fn time_of(self, instant: &str) -> String {
        match self {
            Self::Sqlite => format!("time({instant})"),
            Self::Postgres => format!("CAST(({instant} AT TIME ZONE 'UTC') AS TIME)"),
            Self::MySql => format!("TIME({instant})"),
        }
    }

    /// The current instant, comparable with [`instant_column`](Self::instant_column).
    pub(crate) fn now_instant(self) -> String {
        match self {
            Self::Sqlite => format!("strftime({SQLITE_INSTANT}, 'now')"),
            Self::Postgres => "now()".to_owned(),
            Self::MySql => "UTC_TIMESTAMP(6)".to_owned(),
        }
    }

    /// An instant column made comparable by instant: SQLite stores ISO 8601
    /// text in several spellings, normalised here to UTC.
    pub(crate) fn instant_column(self, column: &str) -> String {
        match self {
            Self::Sqlite => format!("strftime({SQLITE_INSTANT}, {column})"),
            Self::Postgres | Self::MySql => column.to_owned(),
        }
    }

    /// Whether [`instant_column`](Self::instant_column) orders instants by
    /// a normalised value rather than by the column as stored (SQLite, whose
    /// stored spellings of one instant differ).
    pub(crate) fn orders_instants_normalised(self) -> bool {
        self == Self::Sqlite
    }

    /// A placeholder bound as text, converted to the value it spells.
    pub(crate) fn text_param(self, placeholder: &str, value: TextValue) -> String {
        use TextValue::*;
        match (self, value) {
            (Self::Sqlite, Decimal) => format!("CAST({placeholder} AS NUMERIC)"),
            (Self::Sqlite, Instant) => self.instant_column(placeholder),
            (Self::Postgres, Decimal) => format!("CAST({placeholder} AS NUMERIC)"),
            (Self::Postgres, Date) => format!("CAST({placeholder} AS DATE)"),
            (Self::Postgres, Instant) => format!("CAST({placeholder} AS TIMESTAMPTZ)"),
            (Self::Postgres, TimeOfDay) => format!("CAST({placeholder} AS TIME)"),
            (Self::Postgres, Guid) => format!("CAST({placeholder} AS UUID)"),
            (Self::MySql, Decimal) => format!("CAST({placeholder} AS DECIMAL(65, 30))"),
            (Self::MySql, Date) => format!("CAST({placeholder} AS DATE)"),
            (Self::MySql, Instant) => format!("CAST({placeholder} AS DATETIME(6))"),
            (Self::MySql, TimeOfDay) => format!("CAST({placeholder} AS TIME(6))"),
            // SQLite and MySQL take the other values as text as they are.
            (Self::Sqlite | Self::MySql, _) => placeholder.to_owned(),
        }
    }

    /// How an instant is written for [`text_param`](Self::text_param): UTC
    /// with microseconds, with an explicit offset where the engine reads one.
    pub(crate) fn instant_text(self, instant: time::OffsetDateTime) -> String {
        let t = instant.to_offset(time::UtcOffset::UTC);
        let text = format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.microsecond()
        );
        match self {
            Self::MySql => text,
            Self::Sqlite | Self::Postgres => text + "+00:00",
        }
    }

    /// One `ORDER BY` term putting nulls first ascending and last descending,
    /// as SQLite and MySQL do by default and PostgreSQL must be told. A term
    /// that cannot be null (a key, a `NOT NULL` column) gets no null
    /// ordering: PostgreSQL's indexes are `ASC NULLS LAST`, and the clause
    /// would make it sort the whole table instead of reading the index.
    pub(crate) fn order_term(self, expr: &str, descending: bool, nullable: bool) -> String {
        let direction = if descending { "DESC" } else { "ASC" };
        match (self, nullable) {
            (Self::Postgres, true) if descending => format!("{expr} DESC NULLS LAST"),
            (Self::Postgres, true) => format!("{expr} ASC NULLS FIRST"),
            (Self::Postgres, false) | (Self::Sqlite, _) | (Self::MySql, _) => {
                format!("{expr} {direction}")
            }
        }
    }

    /// A column as the service reads it back: uuids on MySQL are read as
    /// their text; every other value is read as stored, PostgreSQL's exact,
    /// date, time and uuid types and MySQL's dates and times in their binary
    /// form, written as the server's text for them by the service
    /// (`db::pg_text`, `db::my_text`). On SQLite
    /// a value is read by what it holds, not by the column's declared type
    /// (`+x` is a no-op for every value but hides the declaration).
    pub(crate) fn output_value(self, column: &str, stored: Stored) -> String {
        use Stored::*;
        match (self, stored) {
            (Self::Sqlite, Integer | Text) => column.to_owned(),
            (Self::Sqlite, Boolean | Float | Exact | Temporal | Uuid) => format!("+{column}"),
            (Self::MySql, Uuid) => format!("CAST({column} AS CHAR)"),
            // Both servers' binary protocols send every other value in a
            // form each column's type tells how to read
            // (`odata::service::rows`, `rows/read.rs`): MySQL's text and decimals as their
            // text, as they are (a cast to CHAR would copy every value, a
            // third of MariaDB's time for a page of them), integers as
            // integers, bits as bytes, dates and times as numbers,
            // PostgreSQL's uuids as their 16 bytes.
            (Self::Postgres | Self::MySql, _) => column.to_owned(),
        }
    }

    /// The clause limiting a result to `limit` rows after skipping `offset`.
    pub(crate) fn limit_offset(self, limit: &str, offset: &str) -> String {
        format!("LIMIT {limit} OFFSET {offset}")
    }

    /// A bound integer (`placeholder`) where nothing around it tells the
    /// engine its type (a `CASE` arm, a recursive CTE's column): cast so
    /// that PostgreSQL does not take it for text.
    pub(crate) fn int_param(self, placeholder: &str) -> String {
        match self {
            Self::MySql => format!("CAST({placeholder} AS SIGNED)"),
            Self::Postgres => format!("CAST({placeholder} AS BIGINT)"),
            Self::Sqlite => format!("CAST({placeholder} AS INTEGER)"),
        }
    }

    /// What keeps a CTE read more than once from being written out as a
    /// table without indexes on the engines that would (PostgreSQL, and
    /// SQLite), so that its reads use the set's own: MariaDB merges such a
    /// CTE into each of its reads by itself. Written before the CTE's `(`.
    pub(crate) fn cte_read_in_place(self) -> &'static str {
        match self {
            Self::MySql => "",
            Self::Postgres | Self::Sqlite => "NOT MATERIALIZED ",
        }
    }

    /// A rank (a number below 90,000,000) as eight digits of text, one level
    /// of a path that sorts as the tree's preorder.
    pub(crate) fn rank_digits(self, rank: &str) -> String {
        match self {
            Self::MySql => format!("CAST({rank} + 10000000 AS CHAR)"),
            Self::Postgres | Self::Sqlite => format!("CAST({rank} + 10000000 AS TEXT)"),
        }
    }

    /// An integer key as fixed-width digits that sort as the keys do, one
    /// level of a path in preorder when siblings are in key order:
    /// ten digits (the key plus 2³¹) for a 16- or 32-bit key, a sign digit
    /// and nineteen for a 64-bit one.
    pub(crate) fn key_digits(self, key: &str, wide: bool) -> String {
        let pad = |value: &str, width: u8| match self {
            Self::Sqlite => format!("printf('%0{width}d', {value})"),
            Self::Postgres => format!("LPAD(CAST({value} AS TEXT), {width}, '0')"),
            Self::MySql => format!("LPAD(CAST({value} AS CHAR), {width}, '0')"),
        };
        if !wide {
            return pad(&format!("{key} + 2147483648"), 10);
        }
        let negative = self.concat("'0'", &pad(&format!("{key} + 9223372036854775807 + 1"), 19));
        let positive = self.concat("'1'", &pad(key, 19));
        format!("CASE WHEN {key} < 0 THEN {negative} ELSE {positive} END")
    }

    /// The first value of a recursive walk's path column, typed to hold
    /// `length` characters of digits: MariaDB sizes the column by it.
    pub(crate) fn path_column(self, first: &str, length: u32) -> String {
        match self {
            Self::MySql => format!("CAST({first} AS CHAR({length}) CHARACTER SET ascii)"),
            Self::Postgres | Self::Sqlite => first.to_owned(),
        }
    }

    /// The join of a walk down a tree, one level's nodes found by their
    /// parent among the level above: MariaDB would read every node for each
    /// level and look its parent up instead, so the order written is kept
    /// there (`STRAIGHT_JOIN`).
    pub(crate) fn walk_down_join(self) -> &'static str {
        match self {
            Self::MySql => "STRAIGHT_JOIN",
            Self::Postgres | Self::Sqlite => "JOIN",
        }
    }
}

/// What a column holds, as far as reading it back differs between engines
/// (see [`Dialect::output_value`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A boolean.
    Boolean,
    /// An integer of any width.
    Integer,
    /// A floating-point number.
    Float,
    /// Text.
    Text,
    /// An exact decimal.
    Exact,
    /// A date, a time of day or a timestamp.
    Temporal,
    /// A UUID.
    Uuid,
}

#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn instant_text_as_documented() {
        let t = time::macros::datetime!(2024-01-02 03:04:05.5 +01:00);
        assert_eq!(Dialect::Postgres.instant_text(t), "2024-01-02 02:04:05.500000+00:00");
        assert_eq!(Dialect::MySql.instant_text(t), "2024-01-02 02:04:05.500000");
    }

    #[test]
    fn positional_as_documented() {
        assert_eq!(Dialect::MySql.positional("b = $2 OR a = $1 OR c = $2"),
                   ("b = ? OR a = ? OR c = ?".to_owned(), Some(vec![2, 1, 2])));
        assert_eq!(Dialect::Sqlite.positional("a = $1").1, None);
    }

    #[test]
    fn text_match_as_documented() {
        assert_eq!(Dialect::MySql.text_match("`c`", "= ?"), "(`c` = ? AND CAST(`c` AS BINARY) = ?)");
        assert_eq!(Dialect::Postgres.text_match(r#""c""#, "= $1"), r#"("c" = $1)"#);
    }
}
