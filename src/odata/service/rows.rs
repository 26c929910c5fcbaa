//! Running a statement and handing its rows, as they arrive, to a [`Sink`]
//! that writes them out at once: memory follows the page, never the table.
//!
//! On a SQLite file the rows are read on a read thread with a plain SQLite
//! connection, straight from SQLite's buffers; on other engines they
//! stream from sqlx. Either way a sink sees [`Cells`], so the JSON writing is
//! the same code.

use futures::TryStreamExt;
use sqlx::any::{AnyRow, AnyTypeInfoKind};
use sqlx::{Row, ValueRef};

use super::reply::ODataError;
use super::values::{key_literal, write_str, write_value};
use crate::db::{bind_numbered, Db, ReadError};
use crate::odata::{Bind, EdmType, Literal, Property, Sql};

/// One value of a row, borrowed from the driver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// SQL null.
    Null,
    /// A boolean (engines with a boolean type).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// A row whose columns are read by position.
pub trait Cells {
    /// Column `i`.
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError>;
}

/// A row read through sqlx, and whether its blobs are text (see
/// [`Dialect::blobs_are_text`](crate::db::Dialect::blobs_are_text)).
struct SqlxRow<'a> {
    row: &'a AnyRow,
    blobs_are_text: bool,
}

impl Cells for SqlxRow<'_> {
    fn cell(&self, i: usize) -> Result<Cell<'_>, ODataError> {
        let row = self.row;
        Ok(match row.try_get_raw(i)?.type_info().kind() {
            AnyTypeInfoKind::Null => Cell::Null,
            AnyTypeInfoKind::Bool => Cell::Bool(row.try_get(i)?),
            AnyTypeInfoKind::SmallInt | AnyTypeInfoKind::Integer | AnyTypeInfoKind::BigInt => {
                Cell::Int(row.try_get(i)?)
            }
            AnyTypeInfoKind::Real | AnyTypeInfoKind::Double => Cell::Real(row.try_get(i)?),
            AnyTypeInfoKind::Text => Cell::Text(row.try_get(i)?),
            AnyTypeInfoKind::Blob => {
                let bytes: &[u8] = row.try_get(i)?;
                match std::str::from_utf8(bytes) {
                    Ok(text) if self.blobs_are_text => Cell::Text(text),
                    _ => Cell::Blob(bytes),
                }
            }
        })
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

/// Consumes the rows of one statement.
pub trait Sink: Send + 'static {
    /// Takes the next row.
    fn row(&mut self, row: &dyn Cells) -> Result<(), ODataError>;

    /// Takes the collection's count, before any row.
    fn count(&mut self, _n: i64) {}
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
    types: Vec<EdmType>,
    /// What precedes each property's value, escaped once: `{"name":` for
    /// the first, `,"name":` for the others.
    names: Vec<Vec<u8>>,
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
        properties: Vec<&Property>,
        key: &str,
        internal: Vec<EdmType>,
        parent: Option<EdmType>,
    ) -> Layout {
        let names = properties
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut name = if i == 0 { vec![b'{'] } else { vec![b','] };
                write_str(&mut name, &p.name);
                name.push(b':');
                name
            })
            .collect();
        let key_index = properties.iter().position(|p| p.name == key).unwrap_or(0);
        let key_type = properties
            .get(key_index)
            .map_or(EdmType::Int64, |p| p.edm_type);
        Layout {
            types: properties.iter().map(|p| p.edm_type).collect(),
            names,
            key_index,
            key_type,
            internal,
            parent,
        }
    }

    /// Writes `row`'s properties as an open JSON object onto `out`.
    pub fn write_open(&self, out: &mut Vec<u8>, row: &dyn Cells) -> Result<(), ODataError> {
        if self.names.is_empty() {
            out.push(b'{');
        }
        for (i, (ty, name)) in self.types.iter().zip(&self.names).enumerate() {
            out.extend_from_slice(name);
            write_value(out, row.cell(i)?, *ty);
        }
        Ok(())
    }

    /// The whole entity of `row`, kept open for expansions.
    pub fn entity(&self, row: &dyn Cells) -> Result<Entity, ODataError> {
        let mut json = Vec::with_capacity(128);
        self.write_open(&mut json, row)?;
        let key = key_literal(row.cell(self.key_index)?, self.key_type).unwrap_or(Literal::Null);
        let first = self.types.len();
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

/// Runs `sql`, handing each row to `sink`; stops reading after `limit` rows
/// and answers the sink and whether another row followed.
pub async fn run<S: Sink>(db: &Db, sql: Sql, limit: u64, sink: S) -> Result<(S, bool), ODataError> {
    run_counted(db, None, sql, limit, sink).await
}

/// As [`run`], first handing the sink the integer `count` answers, on the
/// same connection and (on SQLite) the same trip to a read thread.
pub async fn run_counted<S: Sink>(
    db: &Db,
    count: Option<Sql>,
    sql: Sql,
    limit: u64,
    mut sink: S,
) -> Result<(S, bool), ODataError> {
    match db.sqlite_reader() {
        Some(reader) => {
            reader
                .read(move |conn| {
                    if let Some(count) = &count {
                        let n = read_sqlite(conn, count, 1, counter())?.0.total();
                        sink.count(n);
                    }
                    read_sqlite(conn, &sql, limit, sink)
                })
                .await
        }
        None => {
            if let Some(count) = &count {
                let n = read_sqlx(db, count, 1, counter()).await?.0.total();
                sink.count(n);
            }
            read_sqlx(db, &sql, limit, sink).await
        }
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

async fn read_sqlx<S: Sink>(
    db: &Db,
    sql: &Sql,
    limit: u64,
    mut sink: S,
) -> Result<(S, bool), ODataError> {
    let mut q = sqlx::query(&sql.text);
    for bind in &sql.binds {
        q = match bind {
            Bind::Null => q.bind(None::<String>),
            Bind::Bool(b) => q.bind(*b),
            Bind::Int(i) => q.bind(*i),
            Bind::Text(t) | Bind::Decimal(t) => q.bind(t.as_str()),
            Bind::Double(d) => q.bind(*d),
        };
    }
    let blobs_are_text = db.dialect().blobs_are_text();
    let mut rows = q.fetch(db.read_pool());
    let mut seen = 0u64;
    while let Some(row) = rows.try_next().await? {
        if seen == limit {
            return Ok((sink, true));
        }
        sink.row(&SqlxRow {
            row: &row,
            blobs_are_text,
        })?;
        seen += 1;
    }
    Ok((sink, false))
}

fn read_sqlite<S: Sink>(
    conn: &rusqlite::Connection,
    sql: &Sql,
    limit: u64,
    mut sink: S,
) -> Result<(S, bool), ODataError> {
    let mut stmt = conn.prepare_cached(&sql.text).map_err(ReadError::from)?;
    bind_numbered(&mut stmt, &sql.binds).map_err(ReadError::from)?;
    let mut rows = stmt.raw_query();
    let mut seen = 0u64;
    while let Some(row) = rows.next().map_err(ReadError::from)? {
        if seen == limit {
            return Ok((sink, true));
        }
        sink.row(row)?;
        seen += 1;
    }
    Ok((sink, false))
}
