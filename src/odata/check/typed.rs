//! Checked expressions: a `$filter` (or a scope) after every path in it has
//! been resolved against the model and every node given its type. The SQL
//! step renders this tree as it is; it never resolves a name or infers a type
//! again, and a path that ends in a collection where a value is wanted (or
//! the reverse) cannot be written down.

use crate::odata::check::resolve::{resolve, Hop, QueryError, Resolved, Tail};
use crate::odata::check::typing::{binary_type, describe, function_type, literal_type, Ty};
use crate::odata::model::sets::{EdmType, EntitySet, Model, Property};
use crate::odata::query::syntax::{BinaryOp, Expr, Function, Literal, Path, Quantifier, UnaryOp};

/// A path that ends in a structural property.
#[derive(Debug, Clone)]
pub(crate) struct PropertyPath<'m> {
    /// Which lambda variable the path starts from (counted from the
    /// outermost lambda of the expression), or `None` for the entity the
    /// expression is about.
    pub variable: Option<usize>,
    /// The single-valued navigations crossed, in order.
    pub hops: Vec<Hop<'m>>,
    /// The property read at the end.
    pub property: &'m Property,
}

impl PropertyPath<'_> {
    /// Whether `other` reads the same property along the same navigations.
    pub fn same_as(&self, other: &PropertyPath<'_>) -> bool {
        self.variable == other.variable
            && std::ptr::eq(self.property, other.property)
            && self.hops.len() == other.hops.len()
            && self
                .hops
                .iter()
                .zip(&other.hops)
                .all(|(a, b)| a.column == b.column && std::ptr::eq(a.to, b.to))
    }
}

/// A path that ends in a collection-valued navigation, as `any` and `all`
/// take.
#[derive(Debug, Clone)]
pub(crate) struct CollectionPath<'m> {
    /// As [`PropertyPath::variable`].
    pub variable: Option<usize>,
    /// The single-valued navigations crossed before the collection.
    pub hops: Vec<Hop<'m>>,
    /// The set the collection's members belong to.
    pub to: &'m EntitySet,
    /// The column of `to`'s table that holds the parent's key.
    pub remote_column: &'m str,
}

/// A checked expression with its type.
///
/// Only the checker builds one, so every node's type is the one the typing
/// rules give its operands.
#[derive(Debug, Clone)]
pub(crate) struct Typed<'m> {
    ty: Ty,
    node: Node<'m>,
}

/// What a checked expression is.
#[derive(Debug, Clone)]
pub(crate) enum Node<'m> {
    /// A literal value.
    Literal(Literal),
    /// A property, of the entity or across navigations.
    Property(PropertyPath<'m>),
    /// `left op right`.
    Binary {
        op: BinaryOp,
        left: Box<Typed<'m>>,
        right: Box<Typed<'m>>,
    },
    /// `not x` or `-x`.
    Unary {
        op: UnaryOp,
        operand: Box<Typed<'m>>,
    },
    /// `operand in (list)`.
    In {
        operand: Box<Typed<'m>>,
        list: Vec<Typed<'m>>,
    },
    /// A function call.
    Call {
        function: Function,
        args: Vec<Typed<'m>>,
    },
    /// `collection/any(…)` or `collection/all(…)`; the predicate's lambda
    /// variable is the next one in [`PropertyPath::variable`]'s count.
    Lambda {
        collection: CollectionPath<'m>,
        quantifier: Quantifier,
        predicate: Option<Box<Typed<'m>>>,
    },
}

impl<'m> Typed<'m> {
    /// The expression's type; `None` for the `null` literal.
    pub fn ty(&self) -> Ty {
        self.ty
    }

    /// The expression itself.
    pub fn node(&self) -> &Node<'m> {
        &self.node
    }

    /// The property paths `self` admits only non-null values of: those
    /// compared, in a conjunct at its top, with `eq`, `lt`, `le`, `gt` or
    /// `ge` against a non-null literal, or looked up `in` a list of such
    /// literals. Such a comparison holds for no null (OData's null rules,
    /// and SQL's), so a row that passes has a value there.
    pub fn non_null_paths(&self) -> Vec<&PropertyPath<'m>> {
        let literal = |t: &Typed<'_>| matches!(&t.node, Node::Literal(l) if *l != Literal::Null);
        match &self.node {
            Node::Binary {
                op: BinaryOp::And,
                left,
                right,
            } => {
                let mut paths = left.non_null_paths();
                paths.extend(right.non_null_paths());
                paths
            }
            Node::Binary {
                op: BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
                left,
                right,
            } => match (&left.node, &right.node) {
                (Node::Property(p), _) if literal(right) => vec![p],
                (_, Node::Property(p)) if literal(left) => vec![p],
                _ => Vec::new(),
            },
            Node::In { operand, list } => match &operand.node {
                Node::Property(p) if list.iter().all(literal) => vec![p],
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}

/// Checks `expr` as a condition on the rows of `set`: every path resolved,
/// every operand of a fitting type, the whole boolean (or `null`). Errors
/// carry `target`.
pub(crate) fn check_condition<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    expr: &Expr,
    target: &str,
) -> Result<Typed<'m>, QueryError> {
    let typed = Checker {
        model,
        root: set,
        vars: Vec::new(),
        target,
    }
    .check(expr)?;
    if !matches!(typed.ty, None | Some(EdmType::Boolean)) {
        let msg = format!("the filter must be a condition, not {}", describe(typed.ty));
        return Err(QueryError::new("type_mismatch", target, msg));
    }
    Ok(typed)
}

/// Resolves `path` from the entity of `set` to a property, as `$orderby`
/// takes it; `Err` carries the collection's name when it ends in one.
pub(crate) fn property_path<'m>(
    model: &'m Model,
    set: &'m EntitySet,
    path: &Path,
    target: &str,
) -> Result<Result<PropertyPath<'m>, &'m str>, QueryError> {
    let resolved = resolve(model, set, &[], path, target)?;
    Ok(match resolved.tail {
        Tail::Property(property) => Ok(PropertyPath {
            variable: resolved.scope,
            hops: resolved.hops,
            property,
        }),
        Tail::Collection { name, .. } => Err(name),
    })
}

/// Types expressions, resolving paths as it goes.
struct Checker<'m, 'e, 't> {
    model: &'m Model,
    root: &'m EntitySet,
    /// The lambda variables in scope, outermost first.
    vars: Vec<(&'e str, &'m EntitySet)>,
    target: &'t str,
}

impl<'m, 'e> Checker<'m, 'e, '_> {
    fn mismatch(&self, message: String) -> QueryError {
        QueryError::new("type_mismatch", self.target, message)
    }

    fn resolve(&self, path: &Path) -> Result<Resolved<'m>, QueryError> {
        resolve(self.model, self.root, &self.vars, path, self.target)
    }

    fn check(&mut self, expr: &'e Expr) -> Result<Typed<'m>, QueryError> {
        let typed = |ty: Ty, node: Node<'m>| Ok(Typed { ty, node });
        match expr {
            Expr::Literal(literal) => typed(literal_type(literal), Node::Literal(literal.clone())),
            Expr::Path(path) => {
                let resolved = self.resolve(path)?;
                match resolved.tail {
                    Tail::Property(p) => typed(
                        Some(p.edm_type),
                        Node::Property(PropertyPath {
                            variable: resolved.scope,
                            hops: resolved.hops,
                            property: p,
                        }),
                    ),
                    Tail::Collection { name, .. } => Err(self.mismatch(format!(
                        "'{name}' is a collection; use any or all to test its members"
                    ))),
                }
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.check(left)?, self.check(right)?);
                let ty = binary_type(*op, l.ty, r.ty).map_err(|m| self.mismatch(m))?;
                typed(
                    ty,
                    Node::Binary {
                        op: *op,
                        left: Box::new(l),
                        right: Box::new(r),
                    },
                )
            }
            Expr::Unary { op, operand } => {
                let operand = self.check(operand)?;
                let t = operand.ty;
                let ty = match (op, t) {
                    (_, None) => None,
                    (UnaryOp::Not, Some(EdmType::Boolean)) => t,
                    (UnaryOp::Neg, Some(n)) if n.is_numeric() => t,
                    _ => return Err(self.mismatch(format!("cannot negate {}", describe(t)))),
                };
                let operand = Box::new(operand);
                typed(ty, Node::Unary { op: *op, operand })
            }
            Expr::In { operand, list } => {
                let operand = self.check(operand)?;
                let mut items = Vec::with_capacity(list.len());
                for item in list {
                    let item = self.check(item)?;
                    binary_type(BinaryOp::Eq, operand.ty, item.ty).map_err(|m| self.mismatch(m))?;
                    items.push(item);
                }
                let operand = Box::new(operand);
                typed(
                    Some(EdmType::Boolean),
                    Node::In {
                        operand,
                        list: items,
                    },
                )
            }
            Expr::Call { function, args } => {
                let args = args
                    .iter()
                    .map(|a| self.check(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let types: Vec<Ty> = args.iter().map(|a| a.ty).collect();
                let ty = function_type(*function, &types).map_err(|m| self.mismatch(m))?;
                let function = *function;
                typed(ty, Node::Call { function, args })
            }
            Expr::Lambda {
                collection,
                quantifier,
                predicate,
            } => {
                let resolved = self.resolve(collection)?;
                let Tail::Collection {
                    to, remote_column, ..
                } = resolved.tail
                else {
                    let msg = format!("'{collection}' is not a collection; any and all need one");
                    return Err(self.mismatch(msg));
                };
                let predicate = match predicate {
                    None => None,
                    Some(predicate) => {
                        self.vars.push((&predicate.variable, to));
                        let body = self.check(&predicate.body);
                        self.vars.pop();
                        let body = body?;
                        if !matches!(body.ty, None | Some(EdmType::Boolean)) {
                            let msg =
                                format!("the condition inside '{collection}' must be boolean");
                            return Err(self.mismatch(msg));
                        }
                        Some(Box::new(body))
                    }
                };
                let collection = CollectionPath {
                    variable: resolved.scope,
                    hops: resolved.hops,
                    to,
                    remote_column,
                };
                typed(
                    Some(EdmType::Boolean),
                    Node::Lambda {
                        collection,
                        quantifier: *quantifier,
                        predicate,
                    },
                )
            }
        }
    }
}
