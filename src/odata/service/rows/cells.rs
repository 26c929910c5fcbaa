//! Each engine's rows read by position ([`Cells`]): rusqlite's rows, read
//! straight from SQLite's buffers; PostgreSQL's, decoded from its binary
//! format by the kind of each column (numbers in place, decimals, dates,
//! times and uuids written as PostgreSQL writes them, `db::pg_text`); and
//! MySQL's, as its binary protocol types them (dates and times written as
//! the server writes them, `db::my_text`). The JSON writing above them is
//! one code for every engine.

use std::cell::{OnceCell, RefCell};

use super::prefix::Prefix;
use super::values::{write_bool, write_bytes, write_int, write_value, Cell};
use crate::db::{pg_raw, pg_text, EngineRow, MyTemporal, ReadError};
use crate::odata::plan::ctx::Numbers;
use crate::odata::plan::error::ODataError;
use crate::odata::{EdmType, Property};

/// How one property of a row is written: what precedes its value, its
/// type, and whether its number goes out as a JSON string (Int64 and
/// Decimal under `IEEE754Compatible=true`).
#[derive(Debug, Clone)]
pub struct Column {
    /// What precedes the value.
    pub prefix: Prefix,
    /// The property's type.
    pub edm: EdmType,
    /// A number is written as a JSON string.
    pub quoted: bool,
}

impl Column {
    /// The columns of `properties` as members of one JSON object under
    /// `numbers` (see [`Prefix::object`]), and what closes the nested
    /// objects the last leaves open.
    pub fn object(properties: &[&Property], numbers: Numbers) -> (Vec<Column>, Vec<u8>) {
        let (prefixes, suffix) = Prefix::object(properties.iter().map(|p| p.name.as_str()));
        let columns = prefixes
            .into_iter()
            .zip(properties)
            .map(|(prefix, p)| Column {
                prefix,
                edm: p.edm_type,
                quoted: numbers.quotes(p.edm_type),
            })
            .collect();
        (columns, suffix)
    }

    /// Writes the prefix, then the value `value` writes, as a string when
    /// [`quoted`](Self::quoted).
    #[inline]
    pub(super) fn write(
        &self,
        out: &mut Vec<u8>,
        value: impl FnOnce(&mut Vec<u8>) -> Result<(), ODataError>,
    ) -> Result<(), ODataError> {
        self.prefix.write(out);
        if !self.quoted {
            return value(out);
        }
        let start = out.len();
        value(out)?;
        quote_number(out, start);
        Ok(())
    }
}

/// Makes the JSON number written into `out` from `start` on a string; a
/// string or `null` stays as it is.
pub fn quote_number(out: &mut Vec<u8>, start: usize) {
    if !matches!(out.get(start), None | Some(b'"') | Some(b'n')) {
        out.insert(start, b'"');
        out.push(b'"');
    }
}

/// A row whose columns are read by position.
pub trait Cells {
    /// Column `i`.
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError>;

    /// Writes column `i` as a JSON value of type `edm` onto `out`.
    fn write(&self, i: usize, edm: EdmType, out: &mut Vec<u8>) -> Result<(), ODataError> {
        write_value(out, self.cell(i)?, edm);
        Ok(())
    }

    /// Writes the first columns, one per [`Column`] in order, each as its
    /// prefix then its value as [`Cells::write`] writes it.
    fn write_properties(&self, columns: &[Column], out: &mut Vec<u8>) -> Result<(), ODataError> {
        for (i, column) in columns.iter().enumerate() {
            column.write(out, |out| self.write(i, column.edm, out))?;
        }
        Ok(())
    }
}

impl Cells for rusqlite::Row<'_> {
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError> {
        use rusqlite::types::ValueRef as V;
        let value = self.get_ref(i).map_err(ReadError::from)?;
        Ok(match value {
            V::Null => Cell::Null,
            V::Integer(n) => Cell::Int(n),
            V::Real(x) => Cell::Real(x),
            V::Text(bytes) => std::str::from_utf8(bytes).map_or(Cell::Blob(bytes), Cell::Text),
            V::Blob(bytes) => Cell::Blob(bytes),
        })
    }
}

/// A MySQL or MariaDB row. Values arrive typed by the binary protocol:
/// text and decimals as their text, integers as integers, dates and times
/// as numbers ([`MyTemporal`]), written as the server's text for them.
pub(super) struct MyCells<'a> {
    pub(super) row: &'a mysql_async::Row,
    /// Per column, how its dates or times are written, if it holds them;
    /// whether it is a `BIT` column.
    pub(super) columns: &'a [(Option<MyTemporal>, bool)],
    /// Per column, the text of a date or time once asked for as a
    /// [`Cell`]; emptied for each row.
    pub(super) texts: &'a [OnceCell<String>],
    /// Where a date or time is written before it is written out.
    pub(super) scratch: &'a RefCell<Vec<u8>>,
}

impl MyCells<'_> {
    /// The row's value in column `i`, and how that column is read.
    fn value(
        &self,
        i: usize,
    ) -> Result<(&mysql_async::Value, (Option<MyTemporal>, bool)), ODataError> {
        match (self.row.as_ref(i), self.columns.get(i)) {
            (Some(value), Some(column)) => Ok((value, *column)),
            _ => Err(ODataError::internal(&format!("no column {i}"))),
        }
    }
}

/// The way each column of a MySQL result is read (see [`MyCells`]).
pub(super) fn my_columns(row: &mysql_async::Row) -> Vec<(Option<MyTemporal>, bool)> {
    row.columns_ref()
        .iter()
        .map(|column| {
            let bit = column.column_type() == mysql_async::consts::ColumnType::MYSQL_TYPE_BIT;
            (MyTemporal::of(column), bit)
        })
        .collect()
}

impl Cells for MyCells<'_> {
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError> {
        use mysql_async::Value as V;
        Ok(match self.value(i)? {
            (V::NULL, _) => Cell::Null,
            (V::Int(n), _) => Cell::Int(*n),
            (V::UInt(n), _) => i64::try_from(*n).map_or(Cell::Real(*n as f64), Cell::Int),
            (V::Float(x), _) => Cell::Real(f64::from(*x)),
            (V::Double(x), _) => Cell::Real(*x),
            (V::Bytes(bytes), (_, true)) => bits(bytes),
            (V::Bytes(bytes), _) => text_or_blob(bytes),
            (value @ (V::Date(..) | V::Time(..)), (Some(temporal), _)) => {
                return text_once(self.texts, i, |out| {
                    temporal.write(value, out);
                    Ok(())
                })
            }
            (V::Date(..) | V::Time(..), (None, _)) => {
                return Err(ODataError::internal(
                    &"a date or time in a column of neither",
                ))
            }
        })
    }

    /// Text is written from its bytes ([`write_bytes`]), a date or time
    /// from its text, without making either a [`Cell`] first.
    fn write(&self, i: usize, edm: EdmType, out: &mut Vec<u8>) -> Result<(), ODataError> {
        use mysql_async::Value as V;
        match self.value(i)? {
            (V::Bytes(bytes), (_, false)) => write_bytes(out, bytes, edm),
            (value @ (V::Date(..) | V::Time(..)), (Some(temporal), _)) => {
                if edm == EdmType::DateTimeOffset && temporal.write_rfc3339(value, out) {
                    return Ok(());
                }
                through_text(self.scratch, out, edm, |text| {
                    temporal.write(value, text);
                    Ok(())
                })?;
            }
            _ => write_value(out, self.cell(i)?, edm),
        }
        Ok(())
    }
}

/// Column `i`'s value as text, kept in `texts` for the rest of the row:
/// written by `write` the first time it is asked for.
fn text_once<'a>(
    texts: &'a [OnceCell<String>],
    i: usize,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), ODataError>,
) -> Result<Cell<'a>, ODataError> {
    let slot = texts
        .get(i)
        .ok_or_else(|| ODataError::internal(&"no column"))?;
    if let Some(text) = slot.get() {
        return Ok(Cell::Text(text));
    }
    let mut bytes = Vec::new();
    write(&mut bytes)?;
    let text = String::from_utf8(bytes).map_err(|e| ODataError::internal(&e))?;
    Ok(Cell::Text(slot.get_or_init(|| text)))
}

/// Writes a value of type `edm` that `write` writes as text into
/// `scratch`, then from that text as [`write_bytes`] writes it.
fn through_text(
    scratch: &RefCell<Vec<u8>>,
    out: &mut Vec<u8>,
    edm: EdmType,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), ODataError>,
) -> Result<(), ODataError> {
    let mut text = scratch.borrow_mut();
    text.clear();
    write(&mut text)?;
    write_bytes(out, &text, edm);
    Ok(())
}

/// A `BIT` value (big-endian bytes) as an integer.
fn bits(bytes: &[u8]) -> Cell<'_> {
    match bytes.len() {
        0..=8 => Cell::Int(bytes.iter().fold(0i64, |n, b| (n << 8) | i64::from(*b))),
        _ => Cell::Blob(bytes),
    }
}

/// Column `i` of a PostgreSQL row, decoded as `kind` (any kind but
/// [`Kind::Text`], which is written as text). Values arrive in PostgreSQL's
/// binary format.
fn pg_decode(row: &tokio_postgres::Row, i: usize, kind: Kind) -> Result<Cell<'_>, ODataError> {
    use tokio_postgres::types::{FromSql, Type};
    fn decode<'r, T: FromSql<'r>>(ty: &Type, raw: &'r [u8]) -> Result<T, ODataError> {
        T::from_sql(ty, raw).map_err(|e| ODataError::internal(&e))
    }
    let Some(raw) = pg_raw(row, i)? else {
        return Ok(Cell::Null);
    };
    Ok(match kind {
        Kind::Bool => Cell::Bool(decode(&Type::BOOL, raw)?),
        Kind::I16 => Cell::Int(decode::<i16>(&Type::INT2, raw)?.into()),
        Kind::I32 => Cell::Int(decode::<i32>(&Type::INT4, raw)?.into()),
        Kind::I64 => Cell::Int(decode(&Type::INT8, raw)?),
        Kind::F32 => Cell::Real(decode::<f32>(&Type::FLOAT4, raw)?.into()),
        Kind::F64 => Cell::Real(decode(&Type::FLOAT8, raw)?),
        Kind::Bytes => text_or_blob(raw),
        Kind::Text(_) => return Err(ODataError::internal(&"a value read as text, not decoded")),
    })
}

/// An integer of kind `kind` in binary, when `raw` has its length.
#[inline]
fn pg_int(kind: Kind, raw: &[u8]) -> Option<i64> {
    Some(match kind {
        Kind::I16 => i16::from_be_bytes(raw.try_into().ok()?).into(),
        Kind::I32 => i32::from_be_bytes(raw.try_into().ok()?).into(),
        Kind::I64 => i64::from_be_bytes(raw.try_into().ok()?),
        _ => return None,
    })
}

/// The kinds of a PostgreSQL row's columns, in order: the same for every
/// row of a statement, so found once from its first row.
pub(super) fn pg_kinds(row: &tokio_postgres::Row) -> Vec<Kind> {
    use tokio_postgres::types::Type;
    row.columns()
        .iter()
        .map(|column| match *column.type_() {
            Type::BOOL => Kind::Bool,
            Type::INT2 => Kind::I16,
            Type::INT4 => Kind::I32,
            Type::INT8 => Kind::I64,
            Type::FLOAT4 => Kind::F32,
            Type::FLOAT8 => Kind::F64,
            Type::NUMERIC => Kind::Text(Written::Numeric),
            Type::DATE => Kind::Text(Written::Date),
            Type::TIME => Kind::Text(Written::Time),
            Type::TIMESTAMP => Kind::Text(Written::Timestamp),
            Type::TIMESTAMPTZ => Kind::Text(Written::TimestampTz),
            Type::UUID => Kind::Text(Written::Uuid),
            _ => Kind::Bytes,
        })
        .collect()
}

/// A PostgreSQL row with the kinds of its statement's columns.
pub(super) struct PgCells<'a> {
    pub(super) row: &'a tokio_postgres::Row,
    pub(super) kinds: &'a [Kind],
    /// Per column, the text of a value read as text, once asked for as a
    /// [`Cell`] (a key, for instance); emptied for each row.
    pub(super) texts: &'a [OnceCell<String>],
    /// Where a value read as text is written before it is written out.
    pub(super) scratch: &'a RefCell<Vec<u8>>,
}

impl PgCells<'_> {
    fn kind(&self, i: usize) -> Result<Kind, ODataError> {
        match self.kinds.get(i) {
            Some(kind) => Ok(*kind),
            None => Err(sqlx::Error::ColumnIndexOutOfBounds {
                index: i,
                len: self.kinds.len(),
            }
            .into()),
        }
    }
}

impl Cells for PgCells<'_> {
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError> {
        let written = match self.kind(i)? {
            Kind::Text(written) => written,
            kind => return pg_decode(self.row, i, kind),
        };
        let Some(raw) = pg_raw(self.row, i)? else {
            return Ok(Cell::Null);
        };
        text_once(self.texts, i, |out| written.write(raw, None, out))
    }

    /// Text is written from its bytes ([`write_bytes`]), without making it
    /// a [`Cell`] first.
    fn write(&self, i: usize, edm: EdmType, out: &mut Vec<u8>) -> Result<(), ODataError> {
        self.write_kind(i, self.kind(i)?, edm, out)
    }

    /// As the provided method, the kinds looked up once per row.
    fn write_properties(&self, columns: &[Column], out: &mut Vec<u8>) -> Result<(), ODataError> {
        let Some(kinds) = self.kinds.get(..columns.len()) else {
            return Err(sqlx::Error::ColumnIndexOutOfBounds {
                index: columns.len().saturating_sub(1),
                len: self.kinds.len(),
            }
            .into());
        };
        for (i, (column, kind)) in columns.iter().zip(kinds).enumerate() {
            column.write(out, |out| self.write_kind(i, *kind, column.edm, out))?;
        }
        Ok(())
    }
}

impl PgCells<'_> {
    #[inline]
    fn write_kind(
        &self,
        i: usize,
        kind: Kind,
        edm: EdmType,
        out: &mut Vec<u8>,
    ) -> Result<(), ODataError> {
        match kind {
            Kind::Bytes => match pg_raw(self.row, i)? {
                Some(bytes) => write_bytes(out, bytes, edm),
                None => out.extend_from_slice(b"null"),
            },
            Kind::Text(written) => match pg_raw(self.row, i)? {
                Some(raw) if written.write_json(raw, edm, out)? => {}
                Some(raw) => through_text(self.scratch, out, edm, |text| {
                    written.write(raw, Some(edm), text)
                })?,
                None => out.extend_from_slice(b"null"),
            },
            Kind::Bool | Kind::I16 | Kind::I32 | Kind::I64 => match pg_raw(self.row, i)? {
                Some(&[b]) if kind == Kind::Bool => write_bool(out, b != 0),
                Some(raw) => match pg_int(kind, raw) {
                    Some(n) => write_int(out, n, edm),
                    None => write_value(out, pg_decode(self.row, i, kind)?, edm),
                },
                None => out.extend_from_slice(b"null"),
            },
            kind => write_value(out, pg_decode(self.row, i, kind)?, edm),
        }
        Ok(())
    }
}

/// A PostgreSQL type whose binary form the service writes as text
/// ([`pg_text`]), as PostgreSQL writes it in a UTC session, or for an
/// instant written as an `Edm.DateTimeOffset`, as RFC 3339 in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Written {
    /// `numeric`.
    Numeric,
    /// `date`.
    Date,
    /// `time`.
    Time,
    /// `timestamp` (without time zone, read as UTC).
    Timestamp,
    /// `timestamptz`.
    TimestampTz,
    /// `uuid`.
    Uuid,
}

impl Written {
    /// Writes `raw` as text onto `out`, for a property of type `edm`.
    fn write(self, raw: &[u8], edm: Option<EdmType>, out: &mut Vec<u8>) -> Result<(), ODataError> {
        use pg_text::Instant;
        let instant = |zoned| match edm {
            Some(EdmType::DateTimeOffset) => Instant::Rfc3339,
            _ if zoned => Instant::Utc,
            _ => Instant::Local,
        };
        match self {
            Written::Numeric => pg_text::numeric(raw, out),
            Written::Date => pg_text::date(raw, out),
            Written::Time => pg_text::time(raw, out),
            Written::Timestamp => pg_text::timestamp(raw, instant(false), out),
            Written::TimestampTz => pg_text::timestamp(raw, instant(true), out),
            Written::Uuid => pg_text::uuid(raw, out),
        }
        .map_err(|e| ODataError::internal(&e))
    }

    /// Writes `raw` straight onto `out` as the JSON value of a property of
    /// type `edm`, where the text [`Written::write`] makes is that value as
    /// it is (or between quotes): decimals that are numbers, instants of
    /// years 1 to 9999, dates of four-digit years, times of day. Answers
    /// `false`, having written nothing, for any other value, which is then
    /// written as text through [`write_bytes`].
    fn write_json(self, raw: &[u8], edm: EdmType, out: &mut Vec<u8>) -> Result<bool, ODataError> {
        use EdmType as E;
        let quoted = match (self, edm) {
            (Written::Numeric, E::Decimal | E::Int16 | E::Int32 | E::Int64 | E::Double) => {
                if !pg_text::is_finite_numeric(raw) {
                    return Ok(false);
                }
                self.write(raw, Some(edm), out)?;
                return Ok(true);
            }
            (Written::Timestamp | Written::TimestampTz, E::DateTimeOffset) => {
                |text: &[u8]| text.last() == Some(&b'Z')
            }
            (Written::Date, E::Date) => |text: &[u8]| text.len() == 10,
            (Written::Time, E::TimeOfDay) | (Written::Uuid, E::Guid | E::String) => |_: &[u8]| true,
            _ => return Ok(false),
        };
        let start = out.len();
        out.push(b'"');
        self.write(raw, Some(edm), out)?;
        if quoted(&out[start + 1..]) {
            out.push(b'"');
            Ok(true)
        } else {
            out.truncate(start);
            Ok(false)
        }
    }
}

/// How a PostgreSQL value is decoded, found once per statement from its
/// column's type; each value is then decoded as it lies in the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A boolean.
    Bool,
    /// A 16-bit integer.
    I16,
    /// A 32-bit integer.
    I32,
    /// A 64-bit integer.
    I64,
    /// A 32-bit float.
    F32,
    /// A 64-bit float.
    F64,
    /// Text (read as UTF-8) or anything else the service reads as text.
    Bytes,
    /// A value in binary form that the service writes as text.
    Text(Written),
}

/// Bytes as text when they are UTF-8.
fn text_or_blob(bytes: &[u8]) -> Cell<'_> {
    std::str::from_utf8(bytes).map_or(Cell::Blob(bytes), Cell::Text)
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;

/// How a statement's rows are read as [`Cells`] on each engine: the way of
/// each column, found on the statement's first row, and the text of each
/// value once asked for. The one place that tells the engines' rows apart.
#[derive(Default)]
pub(super) struct EngineCells {
    /// PostgreSQL: the kind of each column.
    kinds: Vec<Kind>,
    /// MySQL: how each column's dates or times are written, and whether it
    /// is a `BIT` column.
    columns: Vec<(Option<MyTemporal>, bool)>,
    /// Per column, a value's text once asked for; emptied for each row.
    texts: Vec<OnceCell<String>>,
    /// Where a value written as text is written first.
    scratch: RefCell<Vec<u8>>,
}

impl EngineCells {
    /// A new statement: its columns are found again on its first row.
    pub(super) fn begin(&mut self) {
        self.kinds.clear();
        self.columns.clear();
        self.texts.clear();
    }

    /// Hands `row` to `take` as its engine's cells.
    pub(super) fn read<R>(&mut self, row: EngineRow<'_>, take: impl FnOnce(&dyn Cells) -> R) -> R {
        for text in &mut self.texts {
            text.take();
        }
        match row {
            EngineRow::Sqlite(row) => take(row),
            EngineRow::Postgres(row) => {
                if self.kinds.is_empty() {
                    self.kinds = pg_kinds(row);
                    self.texts.resize_with(self.kinds.len(), OnceCell::new);
                }
                take(&PgCells {
                    row,
                    kinds: &self.kinds,
                    texts: &self.texts,
                    scratch: &self.scratch,
                })
            }
            EngineRow::MySql(row) => {
                if self.columns.is_empty() {
                    self.columns = my_columns(row);
                    self.texts.resize_with(self.columns.len(), OnceCell::new);
                }
                take(&MyCells {
                    row,
                    columns: &self.columns,
                    texts: &self.texts,
                    scratch: &self.scratch,
                })
            }
        }
    }
}
