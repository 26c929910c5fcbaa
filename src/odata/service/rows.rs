//! Running a page's statements and handing their rows, as they arrive, to
//! a [`Sink`] that writes them out at once: memory follows a piece of the
//! page, never the table.
//!
//! The rows come through the database's bulk reads ([`Reads`]): on SQLite a
//! read thread with a plain connection, straight from SQLite's buffers; on
//! PostgreSQL and MySQL the engine's own client. Each engine's row is read
//! through [`Cells`], so the JSON writing is the same code.

use std::cell::{OnceCell, RefCell};
use std::time::Duration;

use super::prefix::Prefix;
use super::reply::ODataError;
pub use super::values::Cell;
use super::values::{key_literal, order_literal, write_bool, write_bytes, write_int, write_value};
use crate::db::{
    bind_numbered, pg_raw, pg_text, Db, MySqlReads, MyTemporal, PgReads, ReadError, Reads, Step,
};
use crate::odata::{EdmType, Literal, Property, Sql};

/// A row whose columns are read by position.
pub trait Cells {
    /// Column `i`.
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError>;

    /// Writes column `i` as a JSON value of type `edm` onto `out`.
    fn write(&self, i: usize, edm: EdmType, out: &mut Vec<u8>) -> Result<(), ODataError> {
        write_value(out, self.cell(i)?, edm);
        Ok(())
    }

    /// Writes the first columns, one per `(prefix, type)` in order, each
    /// as its prefix then its value as [`Cells::write`] writes it.
    fn write_properties(
        &self,
        properties: &[(Prefix, EdmType)],
        out: &mut Vec<u8>,
    ) -> Result<(), ODataError> {
        for (i, (prefix, edm)) in properties.iter().enumerate() {
            prefix.write(out);
            self.write(i, *edm, out)?;
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
struct MyCells<'a> {
    row: &'a mysql_async::Row,
    /// Per column, how its dates or times are written, if it holds them;
    /// whether it is a `BIT` column.
    columns: &'a [(Option<MyTemporal>, bool)],
    /// Per column, the text of a date or time once asked for as a
    /// [`Cell`]; emptied for each row.
    texts: &'a [OnceCell<String>],
    /// Where a date or time is written before it is written out.
    scratch: &'a RefCell<Vec<u8>>,
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
fn my_columns(row: &mysql_async::Row) -> Vec<(Option<MyTemporal>, bool)> {
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
fn pg_kinds(row: &tokio_postgres::Row) -> Vec<Kind> {
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
struct PgCells<'a> {
    row: &'a tokio_postgres::Row,
    kinds: &'a [Kind],
    /// Per column, the text of a value read as text, once asked for as a
    /// [`Cell`] (a key, for instance); emptied for each row.
    texts: &'a [OnceCell<String>],
    /// Where a value read as text is written before it is written out.
    scratch: &'a RefCell<Vec<u8>>,
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
    fn write_properties(
        &self,
        properties: &[(Prefix, EdmType)],
        out: &mut Vec<u8>,
    ) -> Result<(), ODataError> {
        let Some(kinds) = self.kinds.get(..properties.len()) else {
            return Err(sqlx::Error::ColumnIndexOutOfBounds {
                index: properties.len().saturating_sub(1),
                len: self.kinds.len(),
            }
            .into());
        };
        for (i, ((prefix, edm), kind)) in properties.iter().zip(kinds).enumerate() {
            prefix.write(out);
            self.write_kind(i, *kind, *edm, out)?;
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
enum Written {
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
enum Kind {
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

/// Consumes the rows of one statement.
pub trait Sink: Send + 'static {
    /// Takes the next row.
    fn row(&mut self, row: &dyn Cells) -> Result<(), ODataError>;

    /// Takes the collection's count, before any row.
    fn count(&mut self, _n: i64) {}

    /// Output ready to go out now, when the sink streams and has enough.
    fn handoff(&mut self) -> Option<Handoff> {
        None
    }
}

/// A piece of a streamed body, or the failure that ends it.
pub type Chunk = Result<Vec<u8>, ODataError>;

/// How much body a streaming sink gathers before handing it on.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// How long a reader waits for a client to take the next piece of its
/// body before it abandons the read.
const STALLED_CLIENT: Duration = Duration::from_secs(10);

/// Body bytes a streaming sink has ready, and where they go.
pub struct Handoff {
    bytes: Vec<u8>,
    to: flume::Sender<Chunk>,
}

impl Handoff {
    /// Sends the bytes, waiting while the client is behind; fails when it
    /// went away or stalled.
    pub async fn send(self) -> Result<(), ODataError> {
        let sent = tokio::time::timeout(STALLED_CLIENT, self.to.send_async(Ok(self.bytes))).await;
        match sent {
            Ok(Ok(())) => Ok(()),
            _ => Err(ODataError::client_gone()),
        }
    }

    /// As [`send`](Self::send), on a thread of its own (SQLite's readers).
    pub fn send_blocking(self) -> Result<(), ODataError> {
        self.to
            .send_timeout(Ok(self.bytes), STALLED_CLIENT)
            .map_err(|_| ODataError::client_gone())
    }
}

/// An entity being written: its JSON object without the closing brace (so
/// expansions can still be appended), its key and the foreign keys its
/// to-one expansions follow.
#[derive(Debug)]
pub struct Entity {
    /// `{"a":1,"b":"x"` — the closing `}` comes last.
    pub json: Vec<u8>,
    /// The entity's key, as printed in URLs (`3`, `'a'`).
    pub key: Literal,
    /// The internal columns read for expansions, in order.
    pub internal: Vec<Option<Literal>>,
    /// The value of `__parent` when rows were paged per parent.
    pub parent: Option<String>,
}

/// How to turn a row of one fetch statement into JSON.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Each property: what precedes its value ([`Prefix`]) and its type.
    properties: Vec<(Prefix, EdmType)>,
    key_index: usize,
    key_type: EdmType,
    /// Types of the internal columns (for reading them as literals).
    internal: Vec<EdmType>,
    /// The type of `__parent`, when the fetch pages per parent.
    parent: Option<EdmType>,
}

impl Layout {
    /// The layout of a fetch selecting `properties` (which include the key
    /// named `key`), then columns of `internal` types, then `__parent`.
    pub fn new(
        properties: &[&Property],
        key: &str,
        internal: Vec<EdmType>,
        parent: Option<EdmType>,
    ) -> Layout {
        let prefixes = properties
            .iter()
            .enumerate()
            .map(|(i, p)| (Prefix::new(&p.name, i == 0), p.edm_type))
            .collect();
        let key_index = properties.iter().position(|p| p.name == key).unwrap_or(0);
        let key_type = properties
            .get(key_index)
            .map_or(EdmType::Int64, |p| p.edm_type);
        Layout {
            properties: prefixes,
            key_index,
            key_type,
            internal,
            parent,
        }
    }

    /// Writes `row`'s properties as an open JSON object onto `out`.
    pub fn write_open(&self, out: &mut Vec<u8>, row: &dyn Cells) -> Result<(), ODataError> {
        if self.properties.is_empty() {
            out.push(b'{');
        }
        row.write_properties(&self.properties, out)
    }

    /// The whole entity of `row`, kept open for expansions.
    pub fn entity(&self, row: &dyn Cells) -> Result<Entity, ODataError> {
        let mut json = Vec::with_capacity(128);
        self.write_open(&mut json, row)?;
        let key = key_literal(row.cell(self.key_index)?, self.key_type).unwrap_or(Literal::Null);
        let first = self.properties.len();
        let internal = self
            .internal
            .iter()
            .enumerate()
            .map(|(i, ty)| Ok(key_literal(row.cell(first + i)?, *ty)))
            .collect::<Result<Vec<_>, ODataError>>()?;
        let parent = match self.parent {
            Some(ty) => {
                key_literal(row.cell(first + self.internal.len())?, ty).map(|l| l.to_string())
            }
            None => None,
        };
        Ok(Entity {
            json,
            key,
            internal,
            parent,
        })
    }
}

/// Writes `,"@odata.count":n` when given a count, then `,"value":[` and
/// each row as a closed JSON object, comma-separated, onto a body.
pub struct BodySink {
    /// How rows become JSON.
    pub layout: Layout,
    /// The body written so far.
    pub body: Vec<u8>,
    /// Rows written.
    pub delivered: u64,
    /// Whether `,"value":[` is written.
    pub opened: bool,
    /// Where the body goes as it grows, when it streams.
    pub out: Option<flume::Sender<Chunk>>,
}

impl BodySink {
    /// Writes `,"value":[` unless written.
    pub fn open(&mut self) {
        if !self.opened {
            self.body.extend_from_slice(VALUE_OPEN);
            self.opened = true;
        }
    }
}

impl Sink for BodySink {
    fn count(&mut self, n: i64) {
        self.body.extend_from_slice(b",\"@odata.count\":");
        self.body
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    fn row(&mut self, row: &dyn Cells) -> Result<(), ODataError> {
        self.open();
        if self.delivered > 0 {
            self.body.push(b',');
        }
        self.layout.write_open(&mut self.body, row)?;
        self.body.push(b'}');
        self.delivered += 1;
        Ok(())
    }

    fn handoff(&mut self) -> Option<Handoff> {
        if self.body.len() < CHUNK_BYTES {
            return None;
        }
        let to = self.out.clone()?;
        let bytes = std::mem::replace(&mut self.body, Vec::with_capacity(CHUNK_BYTES + 1024));
        Some(Handoff { bytes, to })
    }
}

/// What opens a collection's entities in a response body.
pub const VALUE_OPEN: &[u8] = b",\"value\":[";

/// Keeps each row as an open [`Entity`].
pub struct EntitySink {
    /// How rows become JSON.
    pub layout: Layout,
    /// The entities read so far.
    pub entities: Vec<Entity>,
    /// The collection's count, when one was run first.
    pub count: Option<i64>,
}

impl EntitySink {
    /// A sink writing rows by `layout`.
    pub fn new(layout: Layout) -> EntitySink {
        EntitySink {
            layout,
            entities: Vec::new(),
            count: None,
        }
    }
}

impl Sink for EntitySink {
    fn count(&mut self, n: i64) {
        self.count = Some(n);
    }

    fn row(&mut self, row: &dyn Cells) -> Result<(), ODataError> {
        let entity = self.layout.entity(row)?;
        self.entities.push(entity);
        Ok(())
    }
}

/// Keeps counts: rows of `(key, count)` when `key_type` is given (counts per
/// parent), else rows of a lone count.
pub struct CountSink {
    /// The type of the key column, for counts per parent.
    pub key_type: Option<EdmType>,
    /// The rows read so far; a lone count has key `None`.
    pub counts: Vec<(Option<Literal>, i64)>,
}

impl Sink for CountSink {
    fn row(&mut self, row: &dyn Cells) -> Result<(), ODataError> {
        let (key, n) = match self.key_type {
            Some(ty) => (key_literal(row.cell(0)?, ty), row.cell(1)?),
            None => (None, row.cell(0)?),
        };
        let Cell::Int(n) = n else {
            return Err(ODataError::internal(&"a count that is not an integer"));
        };
        self.counts.push((key, n));
        Ok(())
    }
}

/// A count that a page statement carries as its column `column` (the same
/// on every row), read with the page in one trip to the database.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineCount {
    /// The column holding the count.
    pub column: usize,
    /// The count alone, for a page without rows; `None` when the page
    /// starts at the first row, where no row means a count of 0.
    pub alone: Option<Sql>,
}

/// Runs `sql`, handing each row to `sink`; stops reading after `limit` rows
/// and answers the sink and whether another row followed.
pub async fn run<S: Sink>(db: &Db, sql: Sql, limit: u64, sink: S) -> Result<(S, bool), ODataError> {
    let read = PageRead {
        statements: vec![sql],
        count: None,
        order: None,
    };
    let (sink, more, _) = run_page(db, read, limit, sink).await?;
    Ok((sink, more))
}

/// The statements of one page and what they carry besides its rows.
pub struct PageRead {
    /// Read one after another, until the page and its probe row are read.
    pub statements: Vec<Sql>,
    /// The collection's count, carried by the statements' rows.
    pub count: Option<InlineCount>,
    /// The order's values, carried by the statements' rows.
    pub order: Option<OrderValues>,
}

/// The values of a page's order that its statements select (`__s0`, …),
/// read off the last row the page can hold, for its next link.
#[derive(Debug, Clone)]
pub struct OrderValues {
    /// The column of the first value.
    pub first: usize,
    /// The values' types, in order.
    pub types: Vec<EdmType>,
}

/// Runs the statements of `read` in turn, handing each row to `sink`, until
/// `limit` rows and the probe row beyond them came; answers the sink,
/// whether the probe row came, and the order values of the page's last row
/// when the page is full and `read` carries them.
pub async fn run_page<S: Sink>(
    db: &Db,
    page: PageRead,
    limit: u64,
    sink: S,
) -> Result<(S, bool, Option<Vec<Literal>>), ODataError> {
    let PageRead {
        statements,
        count,
        order,
    } = page;
    let feed = Feed {
        sink,
        limit,
        seen: 0,
        count: count.as_ref().map(|c| c.column),
        more: false,
        order,
        last: None,
    };
    let reader = match db.reads() {
        Some(Reads::Sqlite(reader)) => reader,
        Some(reads) => {
            let mut feed = feed;
            for sql in &statements {
                feed = read(reads, sql, feed).await?;
                if feed.more {
                    break;
                }
            }
            if let Some(InlineCount { alone, .. }) = count.filter(|_| feed.seen == 0) {
                let n = match alone {
                    Some(alone) => read(reads, &alone, Feed::of(counter())).await?.sink.total(),
                    None => 0,
                };
                feed.sink.count(n);
            }
            return Ok(feed.done());
        }
        None => return Err(ODataError::internal(&"the database has no bulk reads")),
    };
    reader
        .read(move |conn| {
            let mut feed = feed;
            for sql in &statements {
                feed = read_sqlite(conn, sql, feed)?;
                if feed.more {
                    break;
                }
            }
            if let Some(InlineCount { alone, .. }) = count.filter(|_| feed.seen == 0) {
                let n = match alone {
                    Some(alone) => read_sqlite(conn, &alone, Feed::of(counter()))?.sink.total(),
                    None => 0,
                };
                feed.sink.count(n);
            }
            Ok(feed.done())
        })
        .await
}

/// A sink being fed the rows of one statement, up to a limit.
struct Feed<S> {
    sink: S,
    limit: u64,
    seen: u64,
    /// The column carrying the collection's count, read off the first row.
    count: Option<usize>,
    /// Whether a row beyond the limit came.
    more: bool,
    /// The columns carrying the order's values.
    order: Option<OrderValues>,
    /// The order's values of the row at the limit, once it came.
    last: Option<Vec<Literal>>,
}

impl<S: Sink> Feed<S> {
    /// A feed taking every row up to the first.
    fn of(sink: S) -> Feed<S> {
        Feed {
            sink,
            limit: 1,
            seen: 0,
            count: None,
            more: false,
            order: None,
            last: None,
        }
    }

    /// Takes `row`; answers whether the statement should go on.
    fn take(&mut self, row: &dyn Cells) -> Result<bool, ODataError> {
        if self.seen == self.limit {
            self.more = true;
            return Ok(false);
        }
        if let Some(column) = self.count.filter(|_| self.seen == 0) {
            let Cell::Int(n) = row.cell(column)? else {
                return Err(ODataError::internal(&"a count that is not an integer"));
            };
            self.sink.count(n);
        }
        self.sink.row(row)?;
        self.seen += 1;
        if let Some(order) = self.order.as_ref().filter(|_| self.seen == self.limit) {
            self.last = order
                .types
                .iter()
                .enumerate()
                .map(|(i, edm)| Ok(order_literal(row.cell(order.first + i)?, *edm)))
                .collect::<Result<Option<Vec<_>>, ODataError>>()?;
        }
        Ok(true)
    }

    fn done(self) -> (S, bool, Option<Vec<Literal>>) {
        let last = self.last.filter(|_| self.more);
        (self.sink, self.more, last)
    }
}

fn counter() -> CountSink {
    CountSink {
        key_type: None,
        counts: Vec::new(),
    }
}

impl CountSink {
    /// The lone count read.
    fn total(&self) -> i64 {
        self.counts.first().map_or(0, |(_, n)| *n)
    }
}

/// The single integer `sql` answers (a count).
pub async fn scalar(db: &Db, sql: Sql) -> Result<i64, ODataError> {
    let (sink, _) = run(db, sql, 1, counter()).await?;
    Ok(sink.total())
}

/// Feeds the rows of `sql` from a server engine's own driver.
async fn read<S: Sink>(reads: &Reads, sql: &Sql, feed: Feed<S>) -> Result<Feed<S>, ODataError> {
    match reads {
        Reads::Postgres(pool) => read_postgres(pool, sql, feed).await,
        Reads::MySql(pool) => read_mysql(pool, sql, feed).await,
        Reads::Sqlite(_) => Err(ODataError::internal(&"SQLite is read on its threads")),
    }
}

/// Feeds the rows of `sql` from PostgreSQL's bulk-read connections as they
/// arrive, each column decoded by the kind its type gave on the first row.
async fn read_postgres<S: Sink>(
    reads: &PgReads,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut rows = reads.query(&sql.text, &sql.binds).await?;
    let mut kinds = Vec::new();
    let mut texts: Vec<OnceCell<String>> = Vec::new();
    let scratch = RefCell::new(Vec::new());
    while let Some(row) = rows.next().await? {
        if kinds.is_empty() {
            kinds = pg_kinds(&row);
            texts.resize_with(kinds.len(), OnceCell::new);
        }
        for text in &mut texts {
            text.take();
        }
        let go = feed.take(&PgCells {
            row: &row,
            kinds: &kinds,
            texts: &texts,
            scratch: &scratch,
        })?;
        if let Some(handoff) = feed.sink.handoff() {
            // Dropping `rows` unfinished cancels the statement.
            handoff.send().await?;
        }
        if !go {
            rows.finish();
            break;
        }
    }
    Ok(feed)
}

/// Feeds the rows of `sql` from MySQL's or MariaDB's bulk-read connections
/// as they arrive.
async fn read_mysql<S: Sink>(
    reads: &MySqlReads,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut columns = Vec::new();
    let mut texts: Vec<OnceCell<String>> = Vec::new();
    let scratch = RefCell::new(Vec::new());
    let taker = &mut feed;
    // The closure owns what it lends each row, so the future stays `Send`.
    reads
        .each(&sql.text, &sql.binds, move |row| {
            if columns.is_empty() {
                columns = my_columns(row);
                texts.resize_with(columns.len(), OnceCell::new);
            }
            for text in &mut texts {
                text.take();
            }
            let go = taker.take(&MyCells {
                row,
                columns: &columns,
                texts: &texts,
                scratch: &scratch,
            })?;
            Ok(match taker.sink.handoff() {
                Some(handoff) => Step::Wait(handoff.send()),
                None if go => Step::Next,
                None => Step::Stop,
            })
        })
        .await?;
    Ok(feed)
}

fn read_sqlite<S: Sink>(
    conn: &rusqlite::Connection,
    sql: &Sql,
    mut feed: Feed<S>,
) -> Result<Feed<S>, ODataError> {
    let mut stmt = conn.prepare_cached(&sql.text).map_err(ReadError::from)?;
    bind_numbered(&mut stmt, &sql.binds).map_err(ReadError::from)?;
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(ReadError::from)? {
        let go = feed.take(row)?;
        if let Some(handoff) = feed.sink.handoff() {
            handoff.send_blocking()?;
        }
        if !go {
            break;
        }
    }
    Ok(feed)
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
