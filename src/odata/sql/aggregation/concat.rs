//! `concat(…)` as one statement: each branch's sequence written as a
//! statement of its own, then all joined by `UNION ALL`, every row
//! numbering its branch and its place in it.

use super::{linear, order_terms};
use crate::db::{Dialect, SqlType};
use crate::odata::check::apply::{Concat, BRANCH, ROW};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::model::sets::{Derived, EdmType, EntitySet, Property};
use crate::odata::query::syntax::{OrderItem, Path};
use crate::odata::sql::expr::Writer;

/// The rows of every branch of `concat`, in turn, as one derived set: its
/// properties those of all branches (each row carrying its own branch's),
/// its order the branches' one after the other.
pub(super) fn union<'a>(
    concat: &Concat<'a>,
    scopes: &'a Scopes<'a>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let mut planned = Vec::new();
    let mut binds = Vec::new();
    for sequence in &concat.branches {
        let (rows, order) = linear(sequence, scopes, dialect, binds)?;
        binds = rows
            .derived
            .as_ref()
            .map(|d| d.binds.clone())
            .unwrap_or_default();
        planned.push((rows, order));
    }
    let properties = &concat.properties;
    let mut texts = Vec::new();
    for (i, (rows, order)) in planned.iter().enumerate() {
        let w = Writer::new(rows, dialect);
        let t0 = w.root_alias();
        let mut columns = vec![format!("{i} AS {}", dialect.quote(BRANCH))];
        for p in properties {
            let quoted = dialect.quote(&p.name);
            columns.push(match rows.find_property(&p.name) {
                Some(_) => format!("{} AS {quoted}", w.column(&t0, &p.name)),
                None => format!("{} AS {quoted}", null_of(p.edm_type, dialect)),
            });
        }
        let within = match order.is_empty() {
            true => String::new(),
            false => format!("ORDER BY {}", order_terms(&w, &t0, order)),
        };
        columns.push(format!(
            "ROW_NUMBER() OVER ({within}) AS {}",
            dialect.quote(ROW)
        ));
        texts.push(format!(
            "SELECT {} FROM {} AS {t0}",
            columns.join(", "),
            rows.rows_sql(dialect)
        ));
    }
    let counter = |name: &str| Property {
        name: name.to_owned(),
        column: name.to_owned(),
        edm_type: EdmType::Int64,
        nullable: false,
    };
    let set = concat.set;
    let mut derived = EntitySet::new(&set.name, &set.table, BRANCH).public(true);
    derived.properties = std::iter::once(counter(BRANCH))
        .chain(properties.iter().cloned())
        .chain(std::iter::once(counter(ROW)))
        .collect();
    derived.derived = Some(Derived {
        text: texts.join(" UNION ALL "),
        binds,
        branches: planned
            .iter()
            .map(|(rows, _)| rows.properties.iter().map(|p| p.name.clone()).collect())
            .collect(),
    });
    let order = [BRANCH, ROW]
        .into_iter()
        .map(|name| OrderItem {
            path: Path::single(name),
            descending: false,
        })
        .collect();
    Ok((derived, order))
}

/// A null of `edm`'s type, as the engine needs it in a union's arm.
fn null_of(edm: EdmType, dialect: Dialect) -> String {
    dialect.null_of(match edm {
        EdmType::String => SqlType::Text,
        EdmType::Int16 => SqlType::Int16,
        EdmType::Int32 => SqlType::Int32,
        EdmType::Int64 => SqlType::Int64,
        EdmType::Decimal => SqlType::Decimal,
        EdmType::Double => SqlType::Double,
        EdmType::Boolean => SqlType::Boolean,
        EdmType::Date => SqlType::Date,
        EdmType::DateTimeOffset => SqlType::Timestamp,
        EdmType::TimeOfDay => SqlType::Time,
        EdmType::Guid => SqlType::Uuid,
    })
}
