//! Reading rows of a fetch statement into entity JSON, as they stream from
//! the database: each row is written out at once and dropped, so memory
//! follows the page, never the table.

use futures::TryStreamExt;
use sqlx::any::AnyRow;

use super::reply::ODataError;
use super::values::{key_literal, write_str, write_value};
use crate::db::Db;
use crate::odata::{Bind, EdmType, Literal, Property, Sql};

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
pub struct Layout<'m> {
    properties: Vec<&'m Property>,
    /// `"name":` per property, escaped once.
    names: Vec<Vec<u8>>,
    key_index: usize,
    key_type: EdmType,
    /// Types of the internal columns (for reading them as literals).
    internal: Vec<EdmType>,
    /// The type of `__parent`, when the fetch pages per parent.
    parent: Option<EdmType>,
}

impl<'m> Layout<'m> {
    /// The layout of a fetch selecting `properties` (which include the key
    /// named `key`), then columns of `internal` types, then `__parent`.
    pub fn new(
        properties: Vec<&'m Property>,
        key: &str,
        internal: Vec<EdmType>,
        parent: Option<EdmType>,
    ) -> Layout<'m> {
        let names = properties
            .iter()
            .map(|p| {
                let mut name = Vec::new();
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
            properties,
            names,
            key_index,
            key_type,
            internal,
            parent,
        }
    }

    /// Writes `row`'s properties as an open JSON object onto `out`.
    pub fn write_open(&self, out: &mut Vec<u8>, row: &AnyRow) -> Result<(), sqlx::Error> {
        out.push(b'{');
        for (i, (p, name)) in self.properties.iter().zip(&self.names).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(name);
            write_value(out, row, i, p.edm_type)?;
        }
        Ok(())
    }

    /// The whole entity of `row`, kept open for expansions.
    pub fn entity(&self, row: &AnyRow) -> Result<Entity, sqlx::Error> {
        let mut json = Vec::with_capacity(128);
        self.write_open(&mut json, row)?;
        let key = key_literal(row, self.key_index, self.key_type)?.unwrap_or(Literal::Null);
        let first = self.properties.len();
        let internal = self
            .internal
            .iter()
            .enumerate()
            .map(|(i, ty)| key_literal(row, first + i, *ty))
            .collect::<Result<Vec<_>, _>>()?;
        let parent = match self.parent {
            Some(ty) => key_literal(row, first + self.internal.len(), ty)?.map(|l| l.to_string()),
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

/// Runs `sql` and hands each row to `each` as it arrives; stops reading
/// after `limit` rows and answers whether another row followed.
pub async fn stream(
    db: &Db,
    sql: &Sql,
    limit: u64,
    mut each: impl FnMut(&AnyRow) -> Result<(), sqlx::Error>,
) -> Result<bool, ODataError> {
    let mut rows = bound(sql).fetch(db.pool());
    let mut seen = 0u64;
    while let Some(row) = rows.try_next().await? {
        if seen == limit {
            return Ok(true);
        }
        each(&row)?;
        seen += 1;
    }
    Ok(false)
}

/// Runs `sql` and collects every row (for statements whose size the caller
/// bounds, such as per-parent pages and counts).
pub async fn all(db: &Db, sql: &Sql) -> Result<Vec<AnyRow>, ODataError> {
    Ok(bound(sql).fetch_all(db.pool()).await?)
}

/// The single integer `sql` answers (a count).
pub async fn scalar(db: &Db, sql: &Sql) -> Result<i64, ODataError> {
    use sqlx::Row;
    let row = bound(sql).fetch_one(db.pool()).await?;
    Ok(row.try_get::<i64, _>(0)?)
}

fn bound(sql: &Sql) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
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
    q
}
