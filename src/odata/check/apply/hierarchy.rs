//! A hierarchy's `$apply`, checked: `[ancestors(…,keep start)/]` then
//! `[orderby(…)/]TopLevels(…)` or `descendants(…)[/orderby(…)]`, over a
//! set that declares the hierarchy named, whose parent is a to-one
//! navigation; the `filter`s and `search`es that pick nodes checked
//! against the set, and the siblings' order against its properties.

use super::{Restriction, TARGET};
use crate::config::Roots;
use crate::odata::check::resolve::QueryError;
use crate::odata::check::typed::check_condition;
use crate::odata::model::sets::{EntitySet, Model, NavigationKind, Property};
use crate::odata::query::syntax::{
    Direction, ExpandLevel, OrderItem, Related, TopLevels, Transformation,
};

/// A hierarchy's `$apply`, checked against the set it reads.
pub(crate) struct CheckedHierarchy<'a> {
    /// The set whose rows are the nodes.
    pub(crate) set: &'a EntitySet,
    /// The column holding a node's parent's key.
    pub(crate) parent: &'a str,
    /// Which nodes are roots.
    pub(crate) roots: Roots,
    /// The key property.
    pub(crate) key: &'a Property,
    /// `ancestors(…,keep start)` before the shape: what picks the nodes
    /// the tree is made of (with their ancestors).
    pub(crate) ancestors: Option<Restriction<'a>>,
    /// `TopLevels(…)` or `descendants(…)`.
    pub(crate) shape: TreeShape<'a>,
    /// The siblings' order: each property, and whether descending.
    pub(crate) order: Vec<(&'a Property, bool)>,
}

/// What part of the tree is shown.
pub(crate) enum TreeShape<'a> {
    /// The tree from its roots, down to `levels` (`None`: all), some nodes
    /// expanded or collapsed beyond.
    TopLevels {
        /// The levels shown from the roots.
        levels: Option<u64>,
        /// Nodes shown to other depths, in order.
        expand: &'a [ExpandLevel],
    },
    /// The nodes below those `start` picks, `distance` levels at most
    /// (`None`: all).
    Descendants {
        /// What picks the start nodes.
        start: Restriction<'a>,
        /// The levels shown below them.
        distance: Option<u64>,
    },
}

/// What one hierarchy `$apply` asks, before it is checked against a set.
struct Asked<'a> {
    ancestors: Option<&'a Related>,
    shape: Shape<'a>,
    order: &'a [OrderItem],
}

/// `TopLevels(…)`, or `descendants(…)`, as asked.
enum Shape<'a> {
    TopLevels(&'a TopLevels),
    Descendants(&'a Related),
}

/// Whether `steps` use the hierarchy functions.
pub(super) fn is_hierarchy(steps: &[Transformation]) -> bool {
    steps
        .iter()
        .any(|s| matches!(s, Transformation::TopLevels(_) | Transformation::Related(_)))
}

/// `steps` checked against `set` of `model`.
pub(super) fn check<'a>(
    model: &'a Model,
    set: &'a EntitySet,
    steps: &'a [Transformation],
) -> Result<CheckedHierarchy<'a>, QueryError> {
    let asked = asked(steps)?;
    let Some(hierarchy) = &set.hierarchy else {
        let msg = format!("{} has no hierarchy", set.name);
        return Err(QueryError::new("invalid_apply", TARGET, msg));
    };
    let names = match &asked.shape {
        Shape::TopLevels(t) => (&t.nodes, &t.qualifier, &t.node_property),
        Shape::Descendants(r) => (&r.nodes, &r.qualifier, &r.node_property),
    };
    let related = asked
        .ancestors
        .map(|r| (&r.nodes, &r.qualifier, &r.node_property));
    for (nodes, qualifier, node_property) in [Some(names), related].into_iter().flatten() {
        if *nodes != set.name || *qualifier != hierarchy.qualifier || *node_property != set.key {
            let msg = format!(
                "the hierarchy of {} is $root/{},{},{}",
                set.name, set.name, hierarchy.qualifier, set.key
            );
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
    }
    let parent = set
        .navigations
        .iter()
        .find(|n| n.name == hierarchy.parent)
        .and_then(|n| match &n.kind {
            NavigationKind::ToOne { column } => Some(column.as_str()),
            NavigationKind::ToMany { .. } => None,
        });
    let (Some(parent), Some(key)) = (parent, set.key_property()) else {
        let msg = format!("the hierarchy of {} has no parent column", set.name);
        return Err(QueryError::new("invalid_apply", TARGET, msg));
    };
    let ancestors = match asked.ancestors {
        Some(related) => Some(picked(model, set, &related.start.0)?),
        None => None,
    };
    let order = sibling_order(set, asked.order)?;
    let shape = match asked.shape {
        Shape::TopLevels(top) => TreeShape::TopLevels {
            levels: top.levels,
            expand: &top.expand_levels,
        },
        Shape::Descendants(related) => TreeShape::Descendants {
            start: picked(model, set, &related.start.0)?,
            distance: related.distance,
        },
    };
    Ok(CheckedHierarchy {
        set,
        parent,
        roots: hierarchy.roots,
        key,
        ancestors,
        shape,
        order,
    })
}

/// The steps' shape: `[ancestors(…,keep start)/]` then
/// `[orderby(…)/]TopLevels(…)` or `descendants(…)[/orderby(…)]`.
fn asked(steps: &[Transformation]) -> Result<Asked<'_>, QueryError> {
    let refuse = |what: &str| {
        let msg = format!(
            "{what} is not supported: [ancestors(…,keep start)/] then [orderby(…)/]TopLevels(…) or descendants(…)[/orderby(…)]"
        );
        Err(QueryError::new("apply_unsupported", TARGET, msg))
    };
    let mut ancestors = None;
    let mut order: &[OrderItem] = &[];
    let mut shape = None;
    for step in steps {
        match (step, &shape) {
            (Transformation::Related(r), None)
                if r.direction == Direction::Ancestors && ancestors.is_none() =>
            {
                if !r.keep_start || r.distance.is_some() {
                    return refuse("ancestors without keep start, or with a distance");
                }
                ancestors = Some(r);
            }
            (Transformation::OrderBy(items), _) if order.is_empty() => order = items,
            (Transformation::TopLevels(t), None) => shape = Some(Shape::TopLevels(t)),
            (Transformation::Related(r), None) if r.direction == Direction::Descendants => {
                if r.keep_start {
                    return refuse("descendants with keep start");
                }
                shape = Some(Shape::Descendants(r))
            }
            (Transformation::Identity, _) => {}
            (other, _) => {
                let text = other.to_string();
                return refuse(text.split('(').next().unwrap_or_default());
            }
        }
    }
    match shape {
        Some(shape) => Ok(Asked {
            ancestors,
            shape,
            order,
        }),
        None => refuse("ancestors without TopLevels"),
    }
}

/// The `filter`s and `search`es of a sequence that picks nodes of `set`,
/// checked in turn (its other steps count for nothing).
fn picked<'a>(
    model: &'a Model,
    set: &'a EntitySet,
    start: &'a [Transformation],
) -> Result<Restriction<'a>, QueryError> {
    let searched: Vec<&Property> = set.searchable_properties().collect();
    let mut picked = Restriction {
        filters: Vec::new(),
        searches: Vec::new(),
        searched,
    };
    for step in start {
        match step {
            Transformation::Filter(expr) => {
                picked
                    .filters
                    .push(check_condition(model, set, expr, TARGET)?);
            }
            Transformation::Search(search) => {
                if picked.searched.is_empty() {
                    let msg = format!("{} cannot be searched", set.name);
                    return Err(QueryError::new("search_unsupported", TARGET, msg));
                }
                picked.searches.push(search);
            }
            _ => {}
        }
    }
    Ok(picked)
}

/// The siblings' order: each item a property of `set`.
fn sibling_order<'a>(
    set: &'a EntitySet,
    order: &[OrderItem],
) -> Result<Vec<(&'a Property, bool)>, QueryError> {
    let mut checked = Vec::with_capacity(order.len());
    for item in order {
        let name = item.path.to_string();
        let Some(property) = set.find_property(&name) else {
            let msg = format!("{} has no property '{name}' to order siblings by", set.name);
            return Err(QueryError::new("unknown_property", TARGET, msg));
        };
        checked.push((property, item.descending));
    }
    Ok(checked)
}
