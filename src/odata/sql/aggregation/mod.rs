//! From a `$apply` over a set to the set of rows it makes: the caller's
//! scope, `filter` and `search` restrict the set's rows, `groupby` and
//! `aggregate` make one row per group in one `GROUP BY` statement, and
//! `filter`, `orderby`, `top`, `skip` and further `groupby` or `aggregate`
//! after them read those rows, each wrapping the statement before it. A
//! `concat` makes one such statement per branch, joined by `UNION ALL`.
//! The result is a derived [`EntitySet`] whose properties are the grouping
//! properties and the aliases (typed per the Data Aggregation Extension),
//! read from that statement in place of a table — so `$filter`,
//! `$orderby`, `$select`, `$top`, `$skip`, `$count` and server paging apply
//! to the aggregated rows as to any set's.

mod concat;
mod measure;

use measure::Measure;

use crate::db::{Bind, Dialect};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::check::typed::{check_condition, property_path, PropertyPath, Typed};
use crate::odata::model::sets::{Derived, EntitySet, Model, Property};
use crate::odata::query::syntax::{
    Aggregate, Apply, Expr, OrderItem, Path, SearchExpr, Transformation,
};
use crate::odata::sql::expr::Writer;
use crate::odata::sql::hierarchy;
use crate::odata::sql::select::{clamp, search_condition};

const TARGET: &str = "$apply";

/// The rows `apply` makes of `set`, as a derived set, and the order they
/// come in when `$orderby` names none (the grouping properties, ascending;
/// a `concat`'s branches one after the other).
pub(crate) fn derive<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    apply: &Apply,
    scopes: &'m Scopes<'m>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    if hierarchy::is_hierarchy(&apply.0) {
        return hierarchy::derive(model, set, &apply.0, scopes, dialect);
    }
    let branches = concat::branches(&apply.0)?;
    match branches.as_slice() {
        [one] => linear(model, set, one, scopes, dialect, Vec::new()),
        _ => concat::union(model, set, &branches, scopes, dialect),
    }
}

/// What restricts a set's rows before they are grouped.
struct Restriction<'a, 's> {
    scopes: Option<&'s Scopes<'s>>,
    filters: Vec<&'a Expr>,
    searches: Vec<&'a SearchExpr>,
}

/// The rows one sequence without `concat` makes of `set`, its statement's
/// placeholders numbered after `carried`'s.
fn linear<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    steps: &[&Transformation],
    scopes: &'m Scopes<'m>,
    dialect: Dialect,
    carried: Vec<Bind>,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let mut restriction = Restriction {
        scopes: Some(scopes),
        filters: Vec::new(),
        searches: Vec::new(),
    };
    let mut carried = Some(carried);
    let mut rows: Option<(EntitySet, Vec<OrderItem>)> = None;
    for step in steps {
        let grouping = match step {
            Transformation::GroupBy { paths, then } => {
                Some((paths.as_slice(), aggregates_in(then)?))
            }
            Transformation::Aggregate(items) => Some((&[][..], items.as_slice())),
            _ => None,
        };
        rows = match (rows, grouping) {
            (kept, None) if matches!(step, Transformation::Identity) => kept,
            (None, Some((paths, aggregates))) => {
                let carried = carried.take().unwrap_or_default();
                Some(group(
                    model,
                    set,
                    &restriction,
                    paths,
                    aggregates,
                    dialect,
                    carried,
                )?)
            }
            (Some((read, _)), Some((paths, aggregates))) => {
                let model = Model::new().set(read);
                let none = Restriction {
                    scopes: None,
                    filters: Vec::new(),
                    searches: Vec::new(),
                };
                Some(group(
                    &model,
                    &model.sets[0],
                    &none,
                    paths,
                    aggregates,
                    dialect,
                    Vec::new(),
                )?)
            }
            (None, None) => {
                match step {
                    Transformation::Filter(expr) => restriction.filters.push(expr),
                    Transformation::Search(expr) => restriction.searches.push(expr),
                    other => {
                        return refuse(&format!("{} before groupby or aggregate", name(other)))
                    }
                }
                None
            }
            (Some((read, mut order)), None) => match step {
                Transformation::Filter(_)
                | Transformation::OrderBy(_)
                | Transformation::Skip(_)
                | Transformation::Top(_) => Some((after(read, step, &mut order, dialect)?, order)),
                other => return refuse(&format!("{} after groupby or aggregate", name(other))),
            },
        };
    }
    rows.ok_or_else(|| {
        QueryError::new(
            "apply_unsupported",
            TARGET,
            "a $apply without groupby or aggregate is not supported: use $filter and $search",
        )
    })
}

/// The `aggregate` a `groupby`'s sequence holds, if any.
fn aggregates_in(then: &Option<Apply>) -> Result<&[Aggregate], QueryError> {
    match then.as_ref().map(|a| a.0.as_slice()) {
        None => Ok(&[]),
        Some([Transformation::Aggregate(items)]) => Ok(items),
        Some(_) => refuse("a groupby sequence other than one aggregate"),
    }
}

fn refuse<T>(what: &str) -> Result<T, QueryError> {
    let msg = format!("{what} is not supported: filter and search first, then groupby or aggregate, then filter, orderby, skip, top, groupby and aggregate; concat of such sequences");
    Err(QueryError::new("apply_unsupported", TARGET, msg))
}

/// A transformation's name, as `$apply` spells it.
fn name(step: &Transformation) -> String {
    let text = step.to_string();
    text.split('(').next().unwrap_or_default().to_owned()
}

/// A grouping property: one of the rows' own, or one reached across
/// single-valued navigations.
enum Group<'r> {
    Own(&'r Property),
    Across(Path, PropertyPath<'r>),
}

/// The rows of `read` that `restriction` admits, grouped by `paths` (none:
/// one row) with `aggregates` computed per group.
fn group<'r>(
    model: &'r Model,
    read: &'r EntitySet,
    restriction: &Restriction<'_, 'r>,
    paths: &[Path],
    aggregates: &[Aggregate],
    dialect: Dialect,
    carried: Vec<Bind>,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let mut groups = Vec::new();
    for path in paths {
        if paths.iter().filter(|p| *p == path).count() > 1 {
            let msg = format!("groupby names '{path}' twice");
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
        groups.push(match read.derived {
            Some(_) => Group::Own(own_property(read, path, "group by")?),
            None => match property_path(model, read, path, TARGET)? {
                Ok(found) if found.hops.is_empty() => Group::Own(found.property),
                Ok(found) => Group::Across(path.clone(), found),
                Err(_) => {
                    let msg = format!("cannot group by '{path}': it is a collection");
                    return Err(QueryError::new("apply_unsupported", TARGET, msg));
                }
            },
        });
    }
    let mut w = Writer::new(read, dialect)
        .with_scopes(restriction.scopes)
        .after_binds(carried);
    let t0 = w.root_alias();
    let wheres = where_clause(model, read, restriction, &mut w)?;
    let from = format!("{} AS {t0}{wheres}", read.rows_sql(dialect));
    if groups.iter().all(|g| matches!(g, Group::Own(_))) {
        let own: Vec<&Property> = groups
            .iter()
            .filter_map(|g| match g {
                Group::Own(p) => Some(*p),
                Group::Across(..) => None,
            })
            .collect();
        return grouped(read, &own, aggregates, &from, w, dialect);
    }
    // Values across navigations are read per row first, then grouped.
    let mut widened = read.clone();
    let mut columns = vec![format!("{t0}.*")];
    for group in &groups {
        if let Group::Across(path, found) = group {
            let name = path.to_string();
            let value = w.path_value(found)?;
            columns.push(format!("{} AS {}", value.sql, dialect.quote(&name)));
            widened.properties.push(Property {
                name: name.clone(),
                column: name,
                edm_type: found.property.edm_type,
                nullable: true,
            });
        }
    }
    widened.derived = Some(Derived {
        text: format!("SELECT {} FROM {from}", columns.join(", ")),
        binds: w.binds,
        branches: Vec::new(),
    });
    let widened = Model::new().set(widened);
    let read = &widened.sets[0];
    let own = paths
        .iter()
        .map(|path| own_property(read, path, "group by"))
        .collect::<Result<Vec<_>, _>>()?;
    let w = Writer::new(read, dialect);
    let from = format!("{} AS {t0}", read.rows_sql(dialect));
    grouped(read, &own, aggregates, &from, w, dialect)
}

/// ` WHERE …` for the scope, filters and searches of `restriction`, or
/// nothing.
fn where_clause<'r>(
    model: &'r Model,
    read: &'r EntitySet,
    restriction: &Restriction<'_, 'r>,
    w: &mut Writer<'r>,
) -> Result<String, QueryError> {
    let mut conditions: Vec<Typed<'r>> = Vec::new();
    for filter in &restriction.filters {
        conditions.push(check_condition(model, read, filter, TARGET)?);
    }
    let searched: Vec<&Property> = read.searchable_properties().collect();
    if !restriction.searches.is_empty() && searched.is_empty() {
        let msg = format!("{} cannot be searched", read.name);
        return Err(QueryError::new("search_unsupported", TARGET, msg));
    }
    let scope = match restriction.scopes {
        Some(_) => w.root_scope()?,
        None => None,
    };
    let all: Vec<&Typed<'r>> = scope.into_iter().chain(conditions.iter()).collect();
    let mut wheres: Vec<String> = w.condition(&all)?.into_iter().collect();
    for search in &restriction.searches {
        wheres.push(search_condition(w, &searched, search));
    }
    Ok(match wheres.is_empty() {
        true => String::new(),
        false => format!(" WHERE {}", wheres.join(" AND ")),
    })
}

/// The statement grouping the rows `from` names (aliased `t0`) by
/// `groups`, computing `aggregates`, as a derived set; and the order of
/// its rows by default.
fn grouped(
    read: &EntitySet,
    groups: &[&Property],
    aggregates: &[Aggregate],
    from: &str,
    w: Writer<'_>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let measures = aggregates
        .iter()
        .map(|a| Measure::of(read, a))
        .collect::<Result<Vec<_>, _>>()?;
    for measure in &measures {
        let clashes = groups.iter().any(|g| {
            g.name == measure.alias || g.name.split('/').next() == Some(measure.alias.as_str())
        });
        if clashes || measures.iter().filter(|m| m.alias == measure.alias).count() > 1 {
            let msg = format!("the alias {} names another property", measure.alias);
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
    }
    let t0 = w.root_alias();
    let mut columns: Vec<String> = groups
        .iter()
        .map(|g| format!("{} AS {}", w.property(&t0, g), dialect.quote(&g.name)))
        .collect();
    for measure in &measures {
        let value = measure.sql(&w, &t0);
        columns.push(format!("{value} AS {}", dialect.quote(&measure.alias)));
    }
    let mut text = format!("SELECT {} FROM {from}", columns.join(", "));
    if !groups.is_empty() {
        let grouped: Vec<String> = groups.iter().map(|g| w.property(&t0, g)).collect();
        text += &format!(" GROUP BY {}", grouped.join(", "));
    }
    let listed: Vec<Property> = groups
        .iter()
        .map(|g| Property {
            name: g.name.clone(),
            column: g.name.clone(),
            edm_type: g.edm_type,
            nullable: g.nullable,
        })
        .collect();
    let properties: Vec<Property> = navigations_together(listed)
        .into_iter()
        .chain(measures.iter().map(Measure::property))
        .collect();
    let key = properties
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let mut derived = EntitySet::new(&read.name, &read.table, &key).public(true);
    derived.properties = properties;
    derived.derived = Some(Derived {
        text,
        binds: w.binds,
        branches: Vec::new(),
    });
    let order = groups
        .iter()
        .map(|g| OrderItem {
            path: Path::single(&g.name),
            descending: false,
        })
        .collect();
    Ok((derived, order))
}

/// The rows of `rows` (a derived set) after one `filter`, `orderby`, `skip`
/// or `top`: the same set over a statement that reads `rows`' statement.
/// `order` is the rows' order so far, which an `orderby` replaces (the
/// grouping properties staying last) and which `skip` and `top` slice.
fn after(
    rows: EntitySet,
    step: &Transformation,
    order: &mut Vec<OrderItem>,
    dialect: Dialect,
) -> Result<EntitySet, QueryError> {
    let model = Model::new().set(rows.clone());
    let read = &model.sets[0];
    let mut w = Writer::new(read, dialect);
    let t0 = w.root_alias();
    let from = format!("SELECT * FROM {} AS {t0}", read.rows_sql(dialect));
    let text = match step {
        Transformation::Filter(expr) => {
            let typed = check_condition(&model, read, expr, TARGET)?;
            match w.condition(&[&typed])? {
                Some(condition) => format!("{from} WHERE {condition}"),
                None => from,
            }
        }
        Transformation::OrderBy(items) => {
            for item in items {
                if read.find_property(&item.path.to_string()).is_none() {
                    let msg = format!("the aggregated rows have no property '{}'", item.path);
                    return Err(QueryError::new("unknown_property", TARGET, msg));
                }
            }
            let rest: Vec<OrderItem> = order
                .drain(..)
                .filter(|o| !items.iter().any(|i| i.path == o.path))
                .collect();
            *order = items.iter().cloned().chain(rest).collect();
            // Only the order changes: it is applied where rows are sliced
            // and by the answer itself.
            return Ok(rows);
        }
        Transformation::Skip(_) | Transformation::Top(_) => {
            let (top, skip) = match step {
                Transformation::Top(n) => (*n, 0),
                Transformation::Skip(n) => (u64::MAX, *n),
                _ => (u64::MAX, 0),
            };
            let terms = order_terms(&w, &t0, order);
            let limit = w.bind(Bind::Int(clamp(top)));
            let offset = w.bind(Bind::Int(clamp(skip)));
            format!(
                "{from} ORDER BY {terms} {}",
                dialect.limit_offset(&limit, &offset)
            )
        }
        _ => return Ok(rows),
    };
    let mut next = rows;
    next.derived = Some(Derived {
        text,
        binds: w.binds,
        branches: Vec::new(),
    });
    Ok(next)
}

/// `properties` with those across one navigation (`category/name`,
/// `category/id`) moved together, where the first of them stands: an
/// answer writes them as one nested object.
fn navigations_together(properties: Vec<Property>) -> Vec<Property> {
    let firsts: Vec<String> = properties
        .iter()
        .map(|p| p.name.split('/').next().unwrap_or_default().to_owned())
        .collect();
    let place = |i: usize| firsts.iter().position(|f| *f == firsts[i]).unwrap_or(i);
    let mut placed: Vec<(usize, Property)> = properties
        .into_iter()
        .enumerate()
        .map(|(i, p)| (place(i), p))
        .collect();
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, p)| p).collect()
}

/// `order` as `ORDER BY` terms over the rows aliased `t0`, in OData's
/// order on every engine: null first ascending, last descending.
fn order_terms(w: &Writer<'_>, t0: &str, order: &[OrderItem]) -> String {
    let terms: Vec<String> = order
        .iter()
        .map(|o| {
            let column = w.column(t0, &o.path.to_string());
            match o.descending {
                false => format!("({column} IS NULL) DESC, {column} ASC"),
                true => format!("({column} IS NULL) ASC, {column} DESC"),
            }
        })
        .collect();
    match terms.is_empty() {
        true => "1".to_owned(),
        false => terms.join(", "),
    }
}

/// A property of the set's own rows named by a path: one segment, or on a
/// derived set the whole path of a group across navigations.
fn own_property<'m>(
    set: &'m EntitySet,
    path: &Path,
    what: &str,
) -> Result<&'m Property, QueryError> {
    let name = path.to_string();
    if let Some(found) = set.find_property(&name) {
        return Ok(found);
    }
    match path.segments() {
        [_] => {
            let msg = format!("{} has no property '{name}' to {what}", set.name);
            Err(QueryError::new("unknown_property", TARGET, msg))
        }
        _ => {
            let msg = format!(
                "cannot {what} the path '{name}': name a property of {}",
                set.name
            );
            Err(QueryError::new("apply_unsupported", TARGET, msg))
        }
    }
}
