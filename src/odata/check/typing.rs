//! The typing rules of expressions: what type a literal has, what an
//! operator or a function makes of its operands, and why operands that do
//! not fit are refused. The checker applies them once per expression; the
//! SQL step reads the types it recorded.

use crate::odata::model::sets::EdmType;
use crate::odata::query::syntax::{BinaryOp, Function, Literal};

/// The type of a checked expression: `None` for the `null` literal, which
/// fits wherever a value does.
pub(crate) type Ty = Option<EdmType>;

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

pub(crate) fn describe(ty: Ty) -> &'static str {
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
