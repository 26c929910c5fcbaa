//! `concat(…)`: the rows of each branch, one branch after the other, as
//! one statement — each branch planned as a sequence of its own, then all
//! joined by `UNION ALL`, every row numbering its branch and its place in
//! it. UI5 asks with it for a grand total, a count of groups and the groups
//! themselves in one request.

use super::{linear, navigations_together, order_terms, refuse, TARGET};
use crate::db::{Dialect, SqlType};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::model::sets::{Derived, EdmType, EntitySet, Model, Property};
use crate::odata::query::syntax::{OrderItem, Path, Transformation};
use crate::odata::sql::expr::Writer;

/// The most branches one `$apply` may make.
const MAX_BRANCHES: usize = 16;

/// The column that numbers a row's branch (the derived set's key).
const BRANCH: &str = "__branch";

/// The column that numbers a row within its branch.
const ROW: &str = "__row";

/// The sequences `steps` stands for, one per branch of its `concat`s: each
/// branch follows what comes before its `concat`, and a `concat` inside a
/// branch branches again.
pub(super) fn branches(steps: &[Transformation]) -> Result<Vec<Vec<&Transformation>>, QueryError> {
    let Some(at) = steps
        .iter()
        .position(|s| matches!(s, Transformation::Concat(_)))
    else {
        return Ok(vec![steps.iter().collect()]);
    };
    if steps[at + 1..]
        .iter()
        .any(|s| !matches!(s, Transformation::Identity))
    {
        return refuse("a transformation after concat");
    }
    let Transformation::Concat(sequences) = &steps[at] else {
        return refuse("concat");
    };
    let mut all = Vec::new();
    for sequence in sequences {
        for tail in branches(&sequence.0)? {
            let mut branch: Vec<&Transformation> = steps[..at].iter().collect();
            branch.extend(tail);
            all.push(branch);
        }
    }
    if all.is_empty() || all.len() > MAX_BRANCHES {
        let msg = format!(
            "concat makes {} branches; 1 to {MAX_BRANCHES} are served",
            all.len()
        );
        return Err(QueryError::new("apply_unsupported", TARGET, msg));
    }
    Ok(all)
}

/// The rows of every branch of `branches` over `set`, in turn, as one
/// derived set: its properties those of all branches (each row carrying
/// its own branch's), its order the branches' one after the other.
pub(super) fn union<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    branches: &[Vec<&Transformation>],
    scopes: &'m Scopes<'m>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let mut planned = Vec::new();
    let mut binds = Vec::new();
    for steps in branches {
        let (rows, order) = linear(model, set, steps, scopes, dialect, binds)?;
        binds = rows
            .derived
            .as_ref()
            .map(|d| d.binds.clone())
            .unwrap_or_default();
        planned.push((rows, order));
    }
    let properties = all_properties(planned.iter().map(|(rows, _)| rows))?;
    let mut texts = Vec::new();
    for (i, (rows, order)) in planned.iter().enumerate() {
        let w = Writer::new(rows, dialect);
        let t0 = w.root_alias();
        let mut columns = vec![format!("{i} AS {}", dialect.quote(BRANCH))];
        for p in &properties {
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
    let mut derived = EntitySet::new(&set.name, &set.table, BRANCH).public(true);
    derived.properties = std::iter::once(counter(BRANCH))
        .chain(properties)
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

/// The properties of all `sets`, each once (nullable, since other branches
/// lack it), those across one navigation together; a name typed
/// differently in two branches is refused.
fn all_properties<'a>(
    sets: impl Iterator<Item = &'a EntitySet>,
) -> Result<Vec<Property>, QueryError> {
    let mut all: Vec<Property> = Vec::new();
    for p in sets.flat_map(|s| &s.properties) {
        match all.iter().find(|q| q.name == p.name) {
            Some(q) if q.edm_type != p.edm_type => {
                let msg = format!(
                    "'{}' is {} in one branch of concat and {} in another",
                    p.name,
                    q.edm_type.name(),
                    p.edm_type.name()
                );
                return Err(QueryError::new("invalid_apply", TARGET, msg));
            }
            Some(_) => {}
            None => all.push(Property {
                nullable: true,
                ..p.clone()
            }),
        }
        if p.name == BRANCH || p.name == ROW {
            let msg = format!("the alias {} is reserved", p.name);
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
    }
    Ok(navigations_together(all))
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
