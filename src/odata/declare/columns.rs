//! A table as the database schema describes it (columns in table order, with
//! their declared types and nullability), and how SQL types map to EDM types.
//! Table names are only ever bound as values.

use sqlx::Row;

use crate::db::{Db, Dialect, TextColumn};
use crate::odata::EdmType;

/// A column as the database schema describes it.
pub(super) struct Column {
    pub(super) name: String,
    pub(super) declared_type: String,
    pub(super) not_null: bool,
}

/// The columns of `table` in table order; none when there is no such table.
pub(super) async fn table_columns(db: &Db, table: &str) -> Result<Vec<Column>, sqlx::Error> {
    let rows = db
        .query(db.dialect().table_columns_sql())
        .bind(table.to_owned())
        .fetch_all(db.pool())
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

/// The EDM type for a column declared as `declared` (case-insensitive);
/// anything unrecognised is a string.
pub(super) fn mapped_type(dialect: Dialect, declared: &str) -> EdmType {
    let lower = declared.trim().to_ascii_lowercase();
    if lower.starts_with("tinyint(1)") {
        return EdmType::Boolean;
    }
    let unsigned = lower.contains("unsigned");
    let base = base_type_name(&lower);
    match base.as_str() {
        // SQLite stores every integer in 64 bits, whatever the declaration says.
        "int" | "integer" if dialect == Dialect::Sqlite => EdmType::Int64,
        "tinyint" => EdmType::Int16,
        "smallint" | "int2" if unsigned => EdmType::Int32,
        "smallint" | "int2" => EdmType::Int16,
        "int" | "integer" | "int4" | "mediumint" if unsigned => EdmType::Int64,
        "int" | "integer" | "int4" | "mediumint" => EdmType::Int32,
        // Laravel's ids are `bigint unsigned`: they are read as Int64, which
        // holds every id below 2^63.
        "bigint" | "int8" => EdmType::Int64,
        "boolean" | "bool" => EdmType::Boolean,
        "decimal" | "numeric" => EdmType::Decimal,
        "real" | "double" | "double precision" | "float" | "float4" | "float8" => EdmType::Double,
        "date" => EdmType::Date,
        "datetime"
        | "timestamp"
        | "timestamptz"
        | "timestamp with time zone"
        | "timestamp without time zone" => EdmType::DateTimeOffset,
        "time" | "time without time zone" => EdmType::TimeOfDay,
        // SQLite has no uuid storage of its own; there `types` says what a column holds.
        "uuid" if dialect != Dialect::Sqlite => EdmType::Guid,
        _ => EdmType::String,
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

/// The EDM type named `name` in `types` (`Edm.Decimal`).
pub(super) fn named_type(name: &str) -> Option<EdmType> {
    EDM_TYPES.into_iter().find(|t| t.name() == name)
}

/// Every EDM type name `types` accepts, for messages.
pub(super) fn edm_type_names() -> String {
    let names: Vec<&str> = EDM_TYPES.iter().map(|t| t.name()).collect();
    names.join(", ")
}

const EDM_TYPES: [EdmType; 11] = [
    EdmType::String,
    EdmType::Int16,
    EdmType::Int32,
    EdmType::Int64,
    EdmType::Decimal,
    EdmType::Double,
    EdmType::Boolean,
    EdmType::Date,
    EdmType::DateTimeOffset,
    EdmType::TimeOfDay,
    EdmType::Guid,
];
