//! Where a statement's rows go ([`Sink`]): written into a body as they come
//! (`BodySink`, which hands the body on in pieces when it streams), kept
//! as entities still open for their expansions (`EntitySink`), or counted
//! (`CountSink`); and how a row becomes JSON (`Layout`).

use std::time::Duration;

use super::branches::Branches;
use super::cells::{Cells, Column};
use super::values::{key_literal, Cell};
use crate::odata::plan::ctx::Numbers;
use crate::odata::plan::error::ODataError;
use crate::odata::plan::RowShape;
use crate::odata::service::reply::{Chunk, CHUNK_BYTES};
use crate::odata::{EdmType, Literal, Property};

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
    /// Each property: what precedes its value, its type, whether it is
    /// quoted.
    properties: Vec<Column>,
    /// What closes the nested objects the last property leaves open.
    suffix: Vec<u8>,
    /// The properties each row carries when they depend on the row.
    branches: Option<Branches>,
    key_index: usize,
    key_type: EdmType,
    /// Types of the internal columns (for reading them as literals).
    internal: Vec<EdmType>,
    /// The type of `__parent`, when the fetch pages per parent.
    parent: Option<EdmType>,
}

impl Layout {
    /// The layout of a fetch selecting `properties` (which include the key
    /// named `key`), then columns of `internal` types, then `__parent`;
    /// under `numbers`.
    pub fn new(
        properties: &[&Property],
        key: &str,
        internal: Vec<EdmType>,
        parent: Option<EdmType>,
        numbers: Numbers,
    ) -> Layout {
        let (prefixes, suffix) = Column::object(properties, numbers);
        let key_index = properties.iter().position(|p| p.name == key).unwrap_or(0);
        let key_type = properties
            .get(key_index)
            .map_or(EdmType::Int64, |p| p.edm_type);
        Layout {
            properties: prefixes,
            suffix,
            branches: None,
            key_index,
            key_type,
            internal,
            parent,
        }
    }

    /// The layout of rows of `shape`.
    pub(crate) fn of(shape: &RowShape<'_>) -> Layout {
        let layout = Layout::new(
            &shape.properties,
            shape.key,
            shape.internal.clone(),
            shape.parent,
            shape.numbers,
        );
        layout.branching(&shape.properties, shape.branches, shape.numbers)
    }

    /// The same layout for rows of a `concat`'s branches (none: the
    /// layout as it is), the key naming each row's branch: a row carries
    /// those of `properties` (the layout's) its branch has.
    pub fn branching(
        mut self,
        properties: &[&Property],
        branches: &[Vec<String>],
        numbers: Numbers,
    ) -> Layout {
        if !branches.is_empty() {
            self.branches = Some(Branches::new(properties, branches, numbers));
        }
        self
    }

    /// Writes `row`'s properties as an open JSON object onto `out`.
    pub fn write_open(&self, out: &mut Vec<u8>, row: &dyn Cells) -> Result<(), ODataError> {
        if let Some(branches) = &self.branches {
            return branches.write(out, row, self.key_index);
        }
        if self.properties.is_empty() {
            out.push(b'{');
        }
        row.write_properties(&self.properties, out)?;
        out.extend_from_slice(&self.suffix);
        Ok(())
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
