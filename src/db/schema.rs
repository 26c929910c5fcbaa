//! A table as the database schema describes it (columns in table order, with
//! their declared types and nullability), and what each engine's declared
//! SQL types hold. Table names are only ever bound as values.

use sqlx::Row;

use super::{Db, DbError, Dialect, TextColumn};

/// A column as the database schema describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its type as declared (`decimal(10,2)`, `timestamp with time zone`).
    pub declared_type: String,
    /// Whether it is declared `NOT NULL`.
    pub not_null: bool,
}

/// What a declared column type holds, in the engine's own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// A boolean (MySQL's `tinyint(1)`).
    Boolean,
    /// An integer of at most 16 bits.
    Int16,
    /// An integer of at most 32 bits.
    Int32,
    /// An integer of at most 64 bits.
    Int64,
    /// An exact decimal.
    Decimal,
    /// A floating-point number.
    Double,
    /// A date.
    Date,
    /// A point in time.
    Timestamp,
    /// A time of day.
    Time,
    /// A UUID.
    Uuid,
    /// Text, and anything not recognised.
    Text,
}

/// The columns of `table` in table order; none when there is no such table.
pub async fn table_columns(db: &Db, table: &str) -> Result<Vec<Column>, DbError> {
    let rows = db
        .fetch_all(
            db.query(db.dialect().table_columns_sql())
                .bind(table.to_owned()),
        )
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Column {
                name: row.text("name")?.unwrap_or_default(),
                declared_type: row.text("declared_type")?.unwrap_or_default(),
                not_null: row.try_get::<i64, _>("not_null")? != 0,
            })
        })
        .collect()
}

impl Dialect {
    /// A null of type `ty`, where the engine needs one typed: PostgreSQL
    /// types a `UNION`'s columns arm by arm, and two untyped nulls make
    /// text, which no later arm's number matches. Elsewhere plain `NULL`.
    pub(crate) fn null_of(self, ty: SqlType) -> String {
        if self != Self::Postgres {
            return "NULL".to_owned();
        }
        let name = match ty {
            SqlType::Text => "text",
            SqlType::Int16 => "smallint",
            SqlType::Int32 => "integer",
            SqlType::Int64 => "bigint",
            SqlType::Decimal => "numeric",
            SqlType::Double => "double precision",
            SqlType::Boolean => "boolean",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamptz",
            SqlType::Time => "time",
            SqlType::Uuid => "uuid",
        };
        format!("CAST(NULL AS {name})")
    }

    /// What a column declared as `declared` (case-insensitive) holds on
    /// this engine; anything unrecognised is text.
    pub(crate) fn sql_type(self, declared: &str) -> SqlType {
        let lower = declared.trim().to_ascii_lowercase();
        if lower.starts_with("tinyint(1)") {
            return SqlType::Boolean;
        }
        let unsigned = lower.contains("unsigned");
        let base = base_type_name(&lower);
        let int32 = if unsigned {
            SqlType::Int64
        } else {
            SqlType::Int32
        };
        match base.as_str() {
            "tinyint" => SqlType::Int16,
            "smallint" | "int2" if unsigned => SqlType::Int32,
            "smallint" | "int2" => SqlType::Int16,
            "int" | "integer" => match self {
                // SQLite stores every integer in 64 bits (its rowid alias is
                // declared `integer`), whatever the declaration says.
                Self::Sqlite => SqlType::Int64,
                Self::Postgres | Self::MySql => int32,
            },
            "int4" | "mediumint" => int32,
            // Laravel's ids are `bigint unsigned`: they are read as 64-bit
            // integers, which hold every id below 2^63.
            "bigint" | "int8" => SqlType::Int64,
            "boolean" | "bool" => SqlType::Boolean,
            "decimal" | "numeric" => SqlType::Decimal,
            "real" | "double" | "double precision" | "float" | "float4" | "float8" => {
                SqlType::Double
            }
            "date" => SqlType::Date,
            "datetime"
            | "timestamp"
            | "timestamptz"
            | "timestamp with time zone"
            | "timestamp without time zone" => SqlType::Timestamp,
            "time" | "time without time zone" => SqlType::Time,
            "uuid" => match self {
                // SQLite has no uuid storage of its own; there the set's
                // `types` says what a column holds.
                Self::Sqlite => SqlType::Text,
                Self::Postgres | Self::MySql => SqlType::Uuid,
            },
            _ => SqlType::Text,
        }
    }
}

/// `declared` without length, precision or `unsigned`, with single spaces:
/// `decimal(10, 2) unsigned` → `decimal`.
fn base_type_name(declared: &str) -> String {
    let mut depth = 0usize;
    let bare: String = declared
        .chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let words: Vec<&str> = bare
        .split_whitespace()
        .filter(|w| *w != "unsigned")
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::SqlType::*;
    use super::*;

    #[test]
    fn declared_types_read_as_each_engine_stores_them() {
        let cases = [
            // (declared, SQLite, PostgreSQL, MySQL)
            ("INTEGER", Int64, Int32, Int32),
            ("int unsigned", Int64, Int64, Int64),
            ("int4", Int32, Int32, Int32),
            ("smallint", Int16, Int16, Int16),
            ("smallint unsigned", Int32, Int32, Int32),
            ("bigint unsigned", Int64, Int64, Int64),
            ("tinyint(1)", Boolean, Boolean, Boolean),
            ("tinyint", Int16, Int16, Int16),
            ("decimal(10, 2) unsigned", Decimal, Decimal, Decimal),
            ("double precision", Double, Double, Double),
            ("timestamp with time zone", Timestamp, Timestamp, Timestamp),
            ("datetime(6)", Timestamp, Timestamp, Timestamp),
            ("time without time zone", Time, Time, Time),
            ("uuid", Text, Uuid, Uuid),
            ("varchar(255)", Text, Text, Text),
            ("geometry", Text, Text, Text),
        ];
        for (declared, sqlite, postgres, mysql) in cases {
            assert_eq!(Dialect::Sqlite.sql_type(declared), sqlite, "{declared} on SQLite");
            assert_eq!(Dialect::Postgres.sql_type(declared), postgres, "{declared} on PostgreSQL");
            assert_eq!(Dialect::MySql.sql_type(declared), mysql, "{declared} on MySQL");
        }
    }
}
