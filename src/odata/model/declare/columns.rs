//! The EDM type of a column the schema describes, or that a set's `types`
//! names.

use crate::db::{Dialect, SqlType};
use crate::odata::EdmType;

/// The EDM type for a column declared as `declared` on `dialect`.
pub(super) fn mapped_type(dialect: Dialect, declared: &str) -> EdmType {
    match dialect.sql_type(declared) {
        SqlType::Boolean => EdmType::Boolean,
        SqlType::Int16 => EdmType::Int16,
        SqlType::Int32 => EdmType::Int32,
        SqlType::Int64 => EdmType::Int64,
        SqlType::Decimal => EdmType::Decimal,
        SqlType::Double => EdmType::Double,
        SqlType::Date => EdmType::Date,
        SqlType::Timestamp => EdmType::DateTimeOffset,
        SqlType::Time => EdmType::TimeOfDay,
        SqlType::Uuid => EdmType::Guid,
        SqlType::Text => EdmType::String,
    }
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
