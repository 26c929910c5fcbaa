//! `concat(…)`, checked: the sequences it stands for, one per branch (each
//! following what comes before it; a `concat` inside a branch branches
//! again), and the properties of all branches' rows together. UI5 asks
//! with it for a grand total, a count of groups and the groups themselves
//! in one request.

use super::grouping::navigations_together;
use super::{refuse, TARGET};
use crate::odata::check::resolve::QueryError;
use crate::odata::model::sets::{EntitySet, Property};
use crate::odata::query::syntax::Transformation;

/// The most branches one `$apply` may make.
const MAX_BRANCHES: usize = 16;

/// The property that numbers a row's branch (the key of a `concat`'s
/// rows).
pub(crate) const BRANCH: &str = "__branch";

/// The property that numbers a row within its branch.
pub(crate) const ROW: &str = "__row";

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

/// The properties of all `sets`, each once (nullable, since other branches
/// lack it), those across one navigation together; a name typed
/// differently in two branches is refused, and so are the names of
/// [`BRANCH`] and [`ROW`].
pub(super) fn all_properties<'a>(
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
