//! Checking a parsed [`Query`] against the model: the second pure step of the
//! `/odata` pipeline. Every name must exist on the entity set (or on the sets
//! its navigations lead to), every operator and function must receive values
//! of fitting types, and options the set cannot honour are refused, each with
//! a [`QueryError`] naming the option at fault.

use super::model::{EdmType, EntitySet, Model};
use super::query::{BinaryOp, Expr, Function, Literal, Query, Select, UnaryOp};
use super::resolve::{resolve, target_set, QueryError, Tail};

/// The type of a checked expression: `None` for the `null` literal, which
/// fits wherever a value does.
pub(crate) type Ty = Option<EdmType>;

/// Checks every option of `query` against `set` of `model`.
///
/// ```
/// use gatehouse::odata::{check_query, parse_query, EdmType, EntitySet, Model, Property};
/// let model = Model::new().set(
///     EntitySet::new("Pets", "pets", "id")
///         .property(Property::new("id", EdmType::Int32).not_null())
///         .property(Property::new("name", EdmType::String)),
/// );
/// let pets = model.find("Pets").unwrap();
/// assert!(check_query(&model, pets, &parse_query("$filter=name eq 'Rex'").unwrap()).is_ok());
/// let err = check_query(&model, pets, &parse_query("$filter=name eq 5").unwrap()).unwrap_err();
/// assert_eq!(err.code, "type_mismatch");
/// ```
pub fn check_query(model: &Model, set: &EntitySet, query: &Query) -> Result<(), QueryError> {
    check_options(model, set, query, None)
}

/// Checks `query`; inside an expansion every error names `nested`.
fn check_options(
    model: &Model,
    set: &EntitySet,
    query: &Query,
    nested: Option<&str>,
) -> Result<(), QueryError> {
    let target = |option: &'static str| nested.unwrap_or(option).to_owned();
    if let Some(filter) = &query.filter {
        let target = target("$filter");
        let ty = Checker::new(model, set, &target).infer(filter)?;
        if !matches!(ty, None | Some(EdmType::Boolean)) {
            let msg = format!("the filter must be a condition, not {}", describe(ty));
            return Err(QueryError::new("type_mismatch", &target, msg));
        }
    }
    if query.search.is_some() && set.searchable_properties().next().is_none() {
        let msg = format!("{} cannot be searched", set.name);
        return Err(QueryError::new(
            "search_unsupported",
            &target("$search"),
            msg,
        ));
    }
    for item in &query.orderby {
        let target = target("$orderby");
        if let Tail::Collection { name, .. } = resolve(model, set, &[], &item.path, &target)?.tail {
            let msg = format!("cannot order by the collection '{name}'");
            return Err(QueryError::new("not_sortable", &target, msg));
        }
    }
    if let Some(Select::Paths(paths)) = &query.select {
        let target = target("$select");
        for path in paths {
            let name = path.to_string();
            if path.segments().len() != 1 || set.find_property(&name).is_none() {
                let msg = format!("{} has no property '{name}' to select", set.name);
                return Err(QueryError::new("unknown_property", &target, msg));
            }
        }
    }
    for item in &query.expand {
        let name = item.path.to_string();
        let nav = (item.path.segments().len() == 1)
            .then(|| set.find_navigation(&name))
            .flatten()
            .ok_or_else(|| {
                let msg = format!("{} has no navigation '{name}' to expand", set.name);
                QueryError::new("unknown_property", "$expand", msg)
            })?;
        let to = target_set(model, nav, "$expand")?;
        check_options(model, to, &item.options, Some("$expand"))?;
    }
    Ok(())
}

/// Infers expression types, resolving paths as it goes.
struct Checker<'m, 't> {
    model: &'m Model,
    root: &'m EntitySet,
    vars: Vec<(&'m str, &'m EntitySet)>,
    target: &'t str,
}

impl<'m, 't> Checker<'m, 't> {
    fn new(model: &'m Model, root: &'m EntitySet, target: &'t str) -> Self {
        Checker {
            model,
            root,
            vars: Vec::new(),
            target,
        }
    }

    fn mismatch(&self, message: String) -> QueryError {
        QueryError::new("type_mismatch", self.target, message)
    }

    fn infer(&mut self, expr: &'m Expr) -> Result<Ty, QueryError> {
        match expr {
            Expr::Literal(literal) => Ok(literal_type(literal)),
            Expr::Path(path) => {
                match resolve(self.model, self.root, &self.vars, path, self.target)?.tail {
                    Tail::Property(p) => Ok(Some(p.edm_type)),
                    Tail::Collection { name, .. } => Err(self.mismatch(format!(
                        "'{name}' is a collection; use any or all to test its members"
                    ))),
                }
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.infer(left)?, self.infer(right)?);
                binary_type(*op, l, r).map_err(|m| self.mismatch(m))
            }
            Expr::Unary { op, operand } => {
                let t = self.infer(operand)?;
                match (op, t) {
                    (_, None) => Ok(None),
                    (UnaryOp::Not, Some(EdmType::Boolean)) => Ok(t),
                    (UnaryOp::Neg, Some(n)) if n.is_numeric() => Ok(t),
                    (UnaryOp::Not, _) => {
                        Err(self.mismatch(format!("cannot negate {}", describe(t))))
                    }
                    (UnaryOp::Neg, _) => {
                        Err(self.mismatch(format!("cannot negate {}", describe(t))))
                    }
                }
            }
            Expr::In { operand, list } => {
                let t = self.infer(operand)?;
                for item in list {
                    let u = self.infer(item)?;
                    binary_type(BinaryOp::Eq, t, u).map_err(|m| self.mismatch(m))?;
                }
                Ok(Some(EdmType::Boolean))
            }
            Expr::Call { function, args } => {
                let types = args
                    .iter()
                    .map(|a| self.infer(a))
                    .collect::<Result<Vec<_>, _>>()?;
                function_type(*function, &types).map_err(|m| self.mismatch(m))
            }
            Expr::Lambda {
                collection,
                predicate,
                ..
            } => {
                let resolved = resolve(self.model, self.root, &self.vars, collection, self.target)?;
                let Tail::Collection { to, .. } = resolved.tail else {
                    let msg = format!("'{collection}' is not a collection; any and all need one");
                    return Err(self.mismatch(msg));
                };
                if let Some(predicate) = predicate {
                    self.vars.push((&predicate.variable, to));
                    let t = self.infer(&predicate.body);
                    self.vars.pop();
                    if !matches!(t?, None | Some(EdmType::Boolean)) {
                        let msg = format!("the condition inside '{collection}' must be boolean");
                        return Err(self.mismatch(msg));
                    }
                }
                Ok(Some(EdmType::Boolean))
            }
        }
    }
}

/// The type of a literal; integers are `Int64` and fit every numeric type.
pub(crate) fn literal_type(literal: &Literal) -> Ty {
    Some(match literal {
        Literal::Null => return None,
        Literal::Boolean(_) => EdmType::Boolean,
        Literal::Int(_) => EdmType::Int64,
        Literal::Decimal(_) => EdmType::Decimal,
        Literal::Double(_) => EdmType::Double,
        Literal::String(_) => EdmType::String,
        Literal::Date(_) => EdmType::Date,
        Literal::DateTimeOffset(_) => EdmType::DateTimeOffset,
        Literal::TimeOfDay(_) => EdmType::TimeOfDay,
        Literal::Guid(_) => EdmType::Guid,
    })
}

fn describe(ty: Ty) -> &'static str {
    ty.map_or("null", EdmType::name)
}

/// The wider of two numeric types.
fn promote(a: EdmType, b: EdmType) -> EdmType {
    let rank = |t: EdmType| match t {
        EdmType::Int16 => 0,
        EdmType::Int32 => 1,
        EdmType::Int64 => 2,
        EdmType::Decimal => 3,
        _ => 4,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The result type of `l op r`, or why the operands do not fit.
pub(crate) fn binary_type(op: BinaryOp, l: Ty, r: Ty) -> Result<Ty, String> {
    use BinaryOp::*;
    let fail = || {
        format!(
            "'{}' cannot combine {} and {}",
            op.keyword(),
            describe(l),
            describe(r)
        )
    };
    match op {
        And | Or => match (l, r) {
            (None | Some(EdmType::Boolean), None | Some(EdmType::Boolean)) => {
                Ok(Some(EdmType::Boolean))
            }
            _ => Err(fail()),
        },
        Eq | Ne | Gt | Ge | Lt | Le => match (l, r) {
            (Some(a), Some(b)) if a != b && !(a.is_numeric() && b.is_numeric()) => Err(fail()),
            _ => Ok(Some(EdmType::Boolean)),
        },
        Add | Sub | Mul | Div | DivBy | Mod => match (l, r) {
            (Some(a), Some(b)) if a.is_numeric() && b.is_numeric() => Ok(Some(match op {
                DivBy if promote(a, b) != EdmType::Double => EdmType::Decimal,
                _ => promote(a, b),
            })),
            (Some(a), None) | (None, Some(a)) if a.is_numeric() => Ok(Some(a)),
            (None, None) => Ok(None),
            _ => Err(fail()),
        },
    }
}

/// The result type of calling `function` on `args`, or why they do not fit.
pub(crate) fn function_type(function: Function, args: &[Ty]) -> Result<Ty, String> {
    use EdmType::*;
    use Function as F;
    type Accepts = fn(EdmType) -> bool;
    let string: Accepts = |t| t == String;
    let integer: Accepts = EdmType::is_integer;
    let numeric: Accepts = EdmType::is_numeric;
    let datelike: Accepts = |t| matches!(t, Date | DateTimeOffset);
    let timelike: Accepts = |t| matches!(t, TimeOfDay | DateTimeOffset);
    let instant: Accepts = |t| t == DateTimeOffset;
    let (wants, result): (&[Accepts], EdmType) = match function {
        F::Contains | F::StartsWith | F::EndsWith => (&[string, string], Boolean),
        F::Length => (&[string], Int32),
        F::IndexOf => (&[string, string], Int32),
        F::Substring => (&[string, integer, integer], String),
        F::ToLower | F::ToUpper | F::Trim => (&[string], String),
        F::Concat => (&[string, string], String),
        F::Year | F::Month | F::Day => (&[datelike], Int32),
        F::Hour | F::Minute | F::Second => (&[timelike], Int32),
        F::Date => (&[instant], Date),
        F::Time => (&[instant], TimeOfDay),
        F::Now => (&[], DateTimeOffset),
        F::Round | F::Floor | F::Ceiling => (
            &[numeric],
            args.first().copied().flatten().unwrap_or(Decimal),
        ),
    };
    for (i, (arg, accepts)) in args.iter().zip(wants).enumerate() {
        if let Some(t) = arg {
            if !accepts(*t) {
                return Err(format!(
                    "{}() cannot take {} as argument {}",
                    function.name(),
                    t.name(),
                    i + 1
                ));
            }
        }
    }
    Ok(Some(result))
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
