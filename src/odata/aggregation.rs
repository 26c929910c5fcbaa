//! From a `$apply` over a set to the set of rows it makes: the caller's
//! scope, `filter` and `search` restrict the set's rows, `groupby` and
//! `aggregate` make one row per group in one `GROUP BY` statement, and
//! `orderby`, `top` and `skip` after them order and slice those rows. The
//! result is a derived [`EntitySet`] whose properties are the grouping
//! properties and the aliases (typed per the Data Aggregation Extension),
//! read from that statement in place of a table — so `$filter`,
//! `$orderby`, `$select`, `$top`, `$skip`, `$count` and server paging apply
//! to the aggregated rows as to any set's.

use super::model::{Derived, EdmType, EntitySet, Model, Property};
use super::query::{Aggregate, AggregateExpr, Apply, Method, OrderItem, Path, Transformation};
use super::resolve::QueryError;
use super::scopes::Scopes;
use super::sql::{clamp, search_condition};
use super::sql_expr::Writer;
use super::typed::{check_condition, Typed};
use crate::db::{Bind, Dialect};

const TARGET: &str = "$apply";

/// The rows `apply` makes of `set`, as a derived set, and the order they
/// come in when `$orderby` names none (the grouping properties, ascending).
pub(crate) fn derive<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    apply: &Apply,
    scopes: &'m Scopes<'m>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let shape = Shape::of(apply)?;
    let mut conditions: Vec<Typed<'m>> = Vec::new();
    for filter in &shape.filters {
        conditions.push(check_condition(model, set, filter, TARGET)?);
    }
    let searched: Vec<&Property> = set.searchable_properties().collect();
    if !shape.searches.is_empty() && searched.is_empty() {
        let msg = format!("{} cannot be searched", set.name);
        return Err(QueryError::new("search_unsupported", TARGET, msg));
    }
    let groups = shape
        .groups
        .iter()
        .map(|path| own_property(set, path, "group by"))
        .collect::<Result<Vec<_>, _>>()?;
    let measures = shape
        .aggregates
        .iter()
        .map(|a| Measure::of(set, a))
        .collect::<Result<Vec<_>, _>>()?;
    for measure in &measures {
        if groups.iter().any(|g| g.name == measure.alias) {
            let msg = format!("the alias {} is a grouping property's name", measure.alias);
            return Err(QueryError::new("invalid_apply", TARGET, msg));
        }
    }
    let properties: Vec<Property> = groups
        .iter()
        .map(|g| Property {
            name: g.name.clone(),
            column: g.name.clone(),
            edm_type: g.edm_type,
            nullable: g.nullable,
        })
        .chain(measures.iter().map(Measure::property))
        .collect();
    let mut w = Writer::new(set, dialect).with_scopes(Some(scopes));
    let t0 = w.root_alias();
    let mut columns: Vec<String> = groups
        .iter()
        .map(|g| format!("{} AS {}", w.property(&t0, g), dialect.quote(&g.name)))
        .collect();
    for measure in &measures {
        let value = measure.sql(&w, &t0);
        columns.push(format!("{value} AS {}", dialect.quote(&measure.alias)));
    }
    let mut text = format!(
        "SELECT {} FROM {} AS {t0}",
        columns.join(", "),
        set.rows_sql(dialect)
    );
    let scope = w.root_scope()?;
    let all: Vec<&Typed<'m>> = scope.into_iter().chain(conditions.iter()).collect();
    let mut wheres: Vec<String> = w.condition(&all)?.into_iter().collect();
    for search in &shape.searches {
        wheres.push(search_condition(&mut w, &searched, search));
    }
    if !wheres.is_empty() {
        text += " WHERE ";
        text += &wheres.join(" AND ");
    }
    if !groups.is_empty() {
        let grouped: Vec<String> = groups.iter().map(|g| w.property(&t0, g)).collect();
        text += &format!(" GROUP BY {}", grouped.join(", "));
    }
    let key = properties
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let mut derived = EntitySet::new(&set.name, &set.table, &key).public(true);
    derived.properties = properties;
    derived.derived = Some(Derived {
        text,
        binds: w.binds,
    });
    let mut order: Vec<OrderItem> = groups
        .iter()
        .map(|g| OrderItem {
            path: Path::single(&g.name),
            descending: false,
        })
        .collect();
    for step in &shape.post {
        derived = after(derived, step, &mut order, dialect)?;
    }
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
                let known = item.path.segments().len() == 1
                    && read.find_property(&item.path.segments()[0]).is_some();
                if !known {
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
            let terms: Vec<String> = order
                .iter()
                .map(|o| {
                    // OData's order on every engine: null first ascending,
                    // last descending.
                    let column = w.column(&t0, &o.path.segments()[0]);
                    match o.descending {
                        false => format!("({column} IS NULL) DESC, {column} ASC"),
                        true => format!("({column} IS NULL) ASC, {column} DESC"),
                    }
                })
                .collect();
            let terms = if terms.is_empty() {
                "1".to_owned()
            } else {
                terms.join(", ")
            };
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
    });
    Ok(next)
}

/// A property of the set's own rows named by a one-segment path.
fn own_property<'m>(
    set: &'m EntitySet,
    path: &Path,
    what: &str,
) -> Result<&'m Property, QueryError> {
    let name = path.to_string();
    match path.segments() {
        [one] => set.find_property(one).ok_or_else(|| {
            let msg = format!("{} has no property '{name}' to {what}", set.name);
            QueryError::new("unknown_property", TARGET, msg)
        }),
        _ => {
            let msg = format!(
                "cannot {what} the path '{name}': name a property of {}",
                set.name
            );
            Err(QueryError::new("apply_unsupported", TARGET, msg))
        }
    }
}

/// One aggregated value, checked: its SQL and its result type.
struct Measure<'m> {
    alias: String,
    of: Option<(&'m Property, Method)>,
}

impl<'m> Measure<'m> {
    fn of(set: &'m EntitySet, aggregate: &Aggregate) -> Result<Measure<'m>, QueryError> {
        let of = match &aggregate.expr {
            AggregateExpr::Count => None,
            AggregateExpr::Method { path, method } => {
                let property = own_property(set, path, "aggregate")?;
                let numeric = property.edm_type.is_numeric();
                if matches!(method, Method::Sum | Method::Average) && !numeric {
                    let msg = format!(
                        "cannot {} '{}': it is {}, not a number",
                        method.name(),
                        property.name,
                        property.edm_type.name()
                    );
                    return Err(QueryError::new("type_mismatch", TARGET, msg));
                }
                Some((property, *method))
            }
        };
        Ok(Measure {
            alias: aggregate.alias.clone(),
            of,
        })
    }

    /// The result type (OData Data Aggregation 4.0, 3.1.3): `sum` of an
    /// integer a Decimal, of a Decimal or Double the same; `average` a
    /// Decimal of a Decimal, else a Double; `min` and `max` the input's;
    /// `countdistinct` and `$count` an Int64.
    fn edm_type(&self) -> EdmType {
        match self.of {
            None => EdmType::Int64,
            Some((p, Method::Sum)) if p.edm_type.is_integer() => EdmType::Decimal,
            Some((p, Method::Sum)) => p.edm_type,
            Some((p, Method::Average)) if p.edm_type == EdmType::Decimal => EdmType::Decimal,
            Some((_, Method::Average)) => EdmType::Double,
            Some((p, Method::Min | Method::Max)) => p.edm_type,
            Some((_, Method::CountDistinct)) => EdmType::Int64,
        }
    }

    fn property(&self) -> Property {
        let counts = matches!(self.of, None | Some((_, Method::CountDistinct)));
        Property {
            name: self.alias.clone(),
            column: self.alias.clone(),
            edm_type: self.edm_type(),
            nullable: !counts,
        }
    }

    fn sql(&self, w: &Writer<'_>, alias: &str) -> String {
        match self.of {
            None => "COUNT(*)".to_owned(),
            Some((p, method)) => {
                let value = w.property(alias, p);
                match method {
                    Method::Sum => format!("SUM({value})"),
                    Method::Min => format!("MIN({value})"),
                    Method::Max => format!("MAX({value})"),
                    // A double's average, not the engine's decimal of some
                    // digits (MariaDB keeps four).
                    Method::Average if p.edm_type != EdmType::Decimal => {
                        format!("AVG({value} * 1.0e0)")
                    }
                    Method::Average => format!("AVG({value})"),
                    Method::CountDistinct => format!("COUNT(DISTINCT {value})"),
                }
            }
        }
    }
}

/// The one shape of `$apply` served: `filter` and `search` first, then at
/// most one `groupby` (with at most an `aggregate` inside) or `aggregate`,
/// then `orderby`, `skip` and `top`.
#[derive(Default)]
struct Shape<'a> {
    filters: Vec<&'a super::query::Expr>,
    searches: Vec<&'a super::query::SearchExpr>,
    groups: Vec<Path>,
    aggregates: Vec<Aggregate>,
    /// `filter`, `orderby`, `skip` and `top` over the aggregated rows, in
    /// turn.
    post: Vec<&'a Transformation>,
}

impl<'a> Shape<'a> {
    fn of(apply: &'a Apply) -> Result<Shape<'a>, QueryError> {
        let mut shape = Shape::default();
        let mut aggregated = false;
        for step in &apply.0 {
            let refuse = |what: &str| {
                let msg = format!("{what} is not supported here: filter and search first, then one groupby or aggregate, then filter, orderby, skip and top");
                Err(QueryError::new("apply_unsupported", TARGET, msg))
            };
            match step {
                Transformation::Filter(expr) if !aggregated => shape.filters.push(expr),
                Transformation::Search(expr) if !aggregated => shape.searches.push(expr),
                Transformation::GroupBy { paths, then } if !aggregated => {
                    aggregated = true;
                    shape.groups = paths.clone();
                    match then.as_ref().map(|a| a.0.as_slice()) {
                        None => {}
                        Some([Transformation::Aggregate(items)]) => {
                            shape.aggregates = items.clone()
                        }
                        Some(_) => return refuse("a groupby sequence other than one aggregate"),
                    }
                }
                Transformation::Aggregate(items) if !aggregated => {
                    aggregated = true;
                    shape.aggregates = items.clone();
                }
                Transformation::Identity => {}
                Transformation::Filter(_)
                | Transformation::OrderBy(_)
                | Transformation::Skip(_)
                | Transformation::Top(_)
                    if aggregated =>
                {
                    shape.post.push(step)
                }
                Transformation::Concat(_) => return refuse("concat"),
                other => {
                    let name = other.to_string();
                    let name = name.split('(').next().unwrap_or_default().to_owned();
                    return refuse(&format!("{name} in this place"));
                }
            }
        }
        if !aggregated {
            return refuse_plain();
        }
        Ok(shape)
    }
}

fn refuse_plain<T>() -> Result<T, QueryError> {
    Err(QueryError::new(
        "apply_unsupported",
        TARGET,
        "a $apply without groupby or aggregate is not supported: use $filter and $search",
    ))
}
