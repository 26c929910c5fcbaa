//! Turning a checked (typed) `$filter` expression into an SQL condition with
//! OData's null semantics: comparisons are two-valued (`x ne 3` holds where `x` is
//! null, `x gt 3` does not, `null eq null` holds), while `and`/`or`/`not`
//! keep the three-valued logic both languages share. Values become numbered
//! bind parameters; identifiers come from the model, quoted by the dialect.

use crate::db::Bind;
use crate::db::{DatePart, Dialect, TextValue};
use crate::odata::check::resolve::{Hop, QueryError};
use crate::odata::check::scopes::Scopes;
use crate::odata::check::typed::{Node, PropertyPath, Typed};
use crate::odata::check::typing::{literal_type, Ty};
use crate::odata::model::sets::{EdmType, EntitySet, Property};
use crate::odata::query::syntax::{BinaryOp, Function, Literal, Quantifier, UnaryOp};

/// A rendered expression with what later operators need to know about it.
pub(crate) struct Frag {
    /// The SQL text.
    pub sql: String,
    /// Its OData type; `None` for the `null` literal.
    pub ty: Ty,
    /// Whether it may evaluate to null.
    pub nullable: bool,
    /// Whether it is a column of a row in the statement (which an index
    /// may serve), not a computed value.
    pub column: bool,
}

impl Frag {
    fn new(sql: String, ty: Ty, nullable: bool) -> Frag {
        Frag {
            sql,
            ty,
            nullable,
            column: false,
        }
    }

    fn is_null_literal(&self) -> bool {
        self.ty.is_none()
    }
}

/// Renders expressions for one statement, collecting its binds.
pub(crate) struct Writer<'m> {
    pub dialect: Dialect,
    pub binds: Vec<Bind>,
    root: &'m EntitySet,
    aliases: usize,
    /// The rows lambda variables stand for (their set and alias), outermost
    /// first.
    vars: Vec<(&'m EntitySet, String)>,
    /// The expression being rendered: the row its paths start from (alias
    /// and set) and where its own lambda variables begin in `vars`. A
    /// scope is rendered in a frame of the row it confines.
    frame: Frame<'m>,
    target: &'static str,
    scopes: Option<&'m Scopes<'m>>,
    in_scope: bool,
    /// Whether the expression being rendered only ever filters rows (a
    /// chain of `and`/`or` at the top of a `WHERE`): there a null condition
    /// drops the row just as false does, so comparisons need no null guard
    /// and stay usable by indexes.
    positive: bool,
}

/// Where the paths of the expression being rendered start.
struct Frame<'m> {
    alias: String,
    set: &'m EntitySet,
    base: usize,
}

impl<'m> Writer<'m> {
    /// A writer for a statement over `root`, aliased `"t0"`.
    pub fn new(root: &'m EntitySet, dialect: Dialect) -> Writer<'m> {
        Writer {
            dialect,
            // A derived set's statement comes first, with its own binds.
            binds: root
                .derived
                .as_ref()
                .map_or_else(Vec::new, |d| d.binds.clone()),
            root,
            aliases: 0,
            vars: Vec::new(),
            frame: Frame {
                alias: dialect.quote("t0"),
                set: root,
                base: 0,
            },
            target: "$filter",
            scopes: None,
            in_scope: false,
            positive: false,
        }
    }

    /// Numbers this statement's placeholders after `earlier`'s, whose
    /// binds come first (a statement placed after others in one text).
    pub fn after_binds(mut self, mut earlier: Vec<Bind>) -> Writer<'m> {
        earlier.append(&mut self.binds);
        self.binds = earlier;
        self
    }

    /// Renders conditions that filter rows (a `WHERE` clause's part),
    /// joined by `and`; `None` when there are none.
    pub fn condition(&mut self, all: &[&Typed<'m>]) -> Result<Option<String>, QueryError> {
        self.positive = true;
        let rendered = match all.split_first() {
            None => Ok(None),
            Some((first, rest)) => self.expr(first).and_then(|first| {
                let joined = rest.iter().try_fold(first.sql, |sql, next| {
                    Ok(format!("({sql} AND {})", self.expr(next)?.sql))
                });
                joined.map(Some)
            }),
        };
        self.positive = false;
        rendered
    }

    /// Also joins the caller's scope of the statement's set to its rows'
    /// condition, and confines every other set a path or lambda reaches to
    /// the rows its scope admits.
    pub fn with_scopes(mut self, scopes: Option<&'m Scopes<'m>>) -> Writer<'m> {
        self.scopes = scopes;
        self
    }

    /// The caller's scope of the statement's set, if it has one.
    pub fn root_scope(&self) -> Result<Option<&'m Typed<'m>>, QueryError> {
        self.scoped(self.root)
    }

    /// Refuses a path into a set the caller may not read.
    fn admit(&self, set: &EntitySet) -> Result<(), QueryError> {
        if !self.in_scope && self.scopes.is_some_and(|s| s.denies(&set.name)) {
            let msg = format!("{} needs a signed-in caller or a bearer token", set.name);
            return Err(QueryError::new("unauthorized", self.target, msg));
        }
        Ok(())
    }

    /// `key` (of an entity of `set` reached across a navigation), or null
    /// when `set`'s scope does not admit that entity.
    fn confined_key(&mut self, set: &'m EntitySet, key: String) -> Result<String, QueryError> {
        self.admit(set)?;
        if self.in_scope || self.scoped(set)?.is_none() {
            return Ok(key);
        }
        let (a, table) = (self.alias(), self.dialect.quote(&set.table));
        let pk = self.column(&a, self.key_column(set)?);
        let confined = self.confined(set, &a)?;
        Ok(format!(
            "(SELECT {pk} FROM {table} AS {a} WHERE {pk} = {key}{confined})"
        ))
    }

    /// The caller's scope of `set`, if it has one.
    fn scoped(&self, set: &EntitySet) -> Result<Option<&'m Typed<'m>>, QueryError> {
        match self.scopes {
            Some(scopes) => scopes.of(&set.name),
            None => Ok(None),
        }
    }

    /// ` AND <scope>` for rows of `set` aliased `alias`, when `set` is
    /// scoped (scopes themselves are rendered unconfined).
    fn confined(&mut self, set: &'m EntitySet, alias: &str) -> Result<String, QueryError> {
        self.admit(set)?;
        if self.in_scope {
            return Ok(String::new());
        }
        let Some(scope) = self.scoped(set)? else {
            return Ok(String::new());
        };
        self.in_scope = true;
        let frame = Frame {
            alias: alias.to_owned(),
            set,
            base: self.vars.len(),
        };
        let outer = std::mem::replace(&mut self.frame, frame);
        let rendered = self.expr(scope);
        self.frame = outer;
        self.in_scope = false;
        let f = rendered?;
        Ok(format!(" AND {}", false_if_null(f.sql, f.nullable)))
    }

    /// The entity set the statement reads.
    pub fn root(&self) -> &'m EntitySet {
        self.root
    }

    /// The quoted alias of the root table.
    pub fn root_alias(&self) -> String {
        self.dialect.quote("t0")
    }

    /// Adds a bind and returns its placeholder.
    pub fn bind(&mut self, value: Bind) -> String {
        self.binds.push(value);
        format!("${}", self.binds.len())
    }

    /// A fresh table alias.
    pub(crate) fn alias(&mut self) -> String {
        self.aliases += 1;
        self.dialect.quote(&format!("t{}", self.aliases))
    }

    fn internal(&self, message: String) -> QueryError {
        QueryError::new("model_error", self.target, message)
    }

    /// `alias.column`, quoted.
    pub fn column(&self, alias: &str, column: &str) -> String {
        format!("{alias}.{}", self.dialect.quote(column))
    }

    /// The value of `property` of the row aliased `alias`, comparable by
    /// instant where the engine stores instants as text.
    pub fn property(&self, alias: &str, property: &Property) -> String {
        let column = self.column(alias, &property.column);
        match property.edm_type {
            EdmType::DateTimeOffset => self.dialect.instant_column(&column),
            _ => column,
        }
    }

    fn key_column(&self, set: &'m EntitySet) -> Result<&'m str, QueryError> {
        match set.key_property() {
            Some(key) => Ok(&key.column),
            None => Err(self.internal(format!("{} declares no key property", set.name))),
        }
    }

    /// The key of the entity `hops` lead to from the row aliased `alias`:
    /// after a single-valued navigation that is its foreign key.
    fn entity_key(
        &mut self,
        alias: &str,
        set: &'m EntitySet,
        hops: &[Hop<'m>],
    ) -> Result<String, QueryError> {
        let Some((first, rest)) = hops.split_first() else {
            return Ok(self.column(alias, self.key_column(set)?));
        };
        let (mut key, mut from) = (self.column(alias, first.column), first.to);
        for hop in rest {
            let (a, table) = (self.alias(), self.dialect.quote(&from.table));
            let (fk, pk) = (
                self.column(&a, hop.column),
                self.column(&a, self.key_column(from)?),
            );
            let confined = self.confined(from, &a)?;
            key = format!("(SELECT {fk} FROM {table} AS {a} WHERE {pk} = {key}{confined})");
            from = hop.to;
        }
        Ok(key)
    }

    /// The row a path starting at `variable` starts from: its alias and set.
    fn start(&self, variable: Option<usize>) -> (String, &'m EntitySet) {
        match variable.and_then(|i| self.vars.get(self.frame.base + i)) {
            Some((set, alias)) => (alias.clone(), set),
            None => (self.frame.alias.clone(), self.frame.set),
        }
    }

    /// The value a property path denotes: a column of its row, or a
    /// correlated subquery across single-valued navigations.
    pub fn path_value(&mut self, r: &PropertyPath<'m>) -> Result<Frag, QueryError> {
        let p = r.property;
        let (alias, set) = self.start(r.variable);
        let Some(last) = r.hops.last() else {
            let mut frag = Frag::new(self.property(&alias, p), Some(p.edm_type), p.nullable);
            frag.column = true;
            return Ok(frag);
        };
        let key = self.entity_key(&alias, set, &r.hops)?;
        let (a, table) = (self.alias(), self.dialect.quote(&last.to.table));
        let (value, pk) = (
            self.property(&a, p),
            self.column(&a, self.key_column(last.to)?),
        );
        let confined = self.confined(last.to, &a)?;
        let sql = format!("(SELECT {value} FROM {table} AS {a} WHERE {pk} = {key}{confined})");
        Ok(Frag::new(sql, Some(p.edm_type), true))
    }

    /// Renders a checked `$filter` (or nested) expression.
    pub fn expr(&mut self, expr: &Typed<'m>) -> Result<Frag, QueryError> {
        let ty = expr.ty();
        match expr.node() {
            Node::Literal(literal) => Ok(self.literal(literal)),
            Node::Property(path) => self.path_value(path),
            Node::Binary { op, left, right } => {
                let node = self.positive;
                self.positive = node && matches!(op, BinaryOp::And | BinaryOp::Or);
                let (l, r) = (self.expr(left), self.expr(right));
                self.positive = node;
                Ok(self.binary(*op, l?, r?, ty))
            }
            Node::Unary { op, operand } => {
                let node = std::mem::replace(&mut self.positive, false);
                let f = self.expr(operand);
                self.positive = node;
                let f = f?;
                let sql = match op {
                    UnaryOp::Not => format!("(NOT {})", f.sql),
                    UnaryOp::Neg => format!("(-{})", f.sql),
                };
                Ok(Frag::new(sql, f.ty, f.nullable))
            }
            Node::In { operand, list } => self.in_list(operand, list),
            Node::Call { function, args } => {
                let node = std::mem::replace(&mut self.positive, false);
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>();
                self.positive = node;
                Ok(self.call(*function, args?, ty))
            }
            Node::Lambda {
                collection: r,
                quantifier,
                predicate,
            } => {
                let (to, remote_column) = (r.to, r.remote_column);
                let (alias, set) = self.start(r.variable);
                let mut parent = self.entity_key(&alias, set, &r.hops)?;
                if let Some(last) = r.hops.last() {
                    parent = self.confined_key(last.to, parent)?;
                }
                let (a, table) = (self.alias(), self.dialect.quote(&to.table));
                let confined = self.confined(to, &a)?;
                let from = format!(
                    "SELECT 1 FROM {table} AS {a} WHERE {} = {parent}{confined}",
                    self.column(&a, remote_column)
                );
                let sql = match predicate {
                    None => format!("EXISTS ({from})"),
                    Some(body) => {
                        self.vars.push((to, a));
                        let node = self.positive;
                        self.positive = *quantifier == Quantifier::Any;
                        let body = self.expr(body);
                        self.positive = node;
                        self.vars.pop();
                        let body = body?.sql;
                        match quantifier {
                            Quantifier::Any => format!("EXISTS ({from} AND {body})"),
                            Quantifier::All => {
                                format!("NOT EXISTS ({from} AND NOT COALESCE({body}, FALSE))")
                            }
                        }
                    }
                };
                Ok(Frag::new(sql, Some(EdmType::Boolean), false))
            }
        }
    }

    /// A literal as a bound value, converted where the engine needs it.
    pub fn literal(&mut self, literal: &Literal) -> Frag {
        let ty = literal_type(literal);
        let sql = match literal {
            Literal::Null => return Frag::new("NULL".into(), None, true),
            Literal::Boolean(b) => self.bind(Bind::Bool(*b)),
            Literal::Int(i) => self.bind(Bind::Int(*i)),
            Literal::Double(d) => self.bind(Bind::Double(*d)),
            Literal::String(s) => self.bind(Bind::Text(s.clone())),
            Literal::Decimal(d) => self.text(Bind::Decimal(d.clone()), TextValue::Decimal),
            Literal::Date(_) => self.text(Bind::Text(literal.to_string()), TextValue::Date),
            Literal::TimeOfDay(_) => {
                self.text(Bind::Text(literal.to_string()), TextValue::TimeOfDay)
            }
            Literal::Guid(g) => self.text(Bind::Text(g.to_string()), TextValue::Guid),
            Literal::DateTimeOffset(t) => {
                let text = self.dialect.instant_text(*t);
                self.text(Bind::Text(text), TextValue::Instant)
            }
        };
        Frag::new(sql, ty, false)
    }

    /// A value a `$skiptoken` carries for an order term of type `edm`, bound
    /// as the term compares: a time of day, carried as the text it was read
    /// as, converted where the engine holds times as times; anything else
    /// as [`literal`](Self::literal) binds it.
    pub fn order_value(&mut self, value: &Literal, edm: EdmType) -> String {
        match (value, edm) {
            (Literal::String(text), EdmType::TimeOfDay) => {
                self.text(Bind::Text(text.clone()), TextValue::TimeOfDay)
            }
            _ => self.literal(value).sql,
        }
    }

    fn text(&mut self, value: Bind, kind: TextValue) -> String {
        let placeholder = self.bind(value);
        self.dialect.text_param(&placeholder, kind)
    }

    /// `l op r`, whose type the checker found to be `ty`.
    fn binary(&mut self, op: BinaryOp, l: Frag, r: Frag, ty: Ty) -> Frag {
        use BinaryOp::*;
        let nullable = l.nullable || r.nullable;
        let (a, b) = (&l.sql, &r.sql);
        let sql = match op {
            And => format!("({a} AND {b})"),
            Or => format!("({a} OR {b})"),
            Eq | Ne | Gt | Ge | Lt | Le => return self.compare(op, &l, &r),
            Add => format!("({a} + {b})"),
            Sub => format!("({a} - {b})"),
            Mul => format!("({a} * {b})"),
            Div if ty.is_some_and(EdmType::is_integer) => self.dialect.int_div(a, b),
            Div | DivBy => self.dialect.decimal_div(a, b),
            Mod => self
                .dialect
                .modulo(a, b, ty.is_some_and(EdmType::is_integer)),
        };
        Frag::new(sql, ty, nullable)
    }

    /// A two-valued comparison: true or false, never null.
    fn compare(&self, op: BinaryOp, l: &Frag, r: &Frag) -> Frag {
        let boolean = |sql: String| Frag::new(sql, Some(EdmType::Boolean), false);
        let other = if l.is_null_literal() { r } else { l };
        if l.is_null_literal() || r.is_null_literal() {
            return boolean(match op {
                BinaryOp::Eq => format!("({} IS NULL)", other.sql),
                BinaryOp::Ne => format!("({} IS NOT NULL)", other.sql),
                _ => "FALSE".into(),
            });
        }
        let text = l.ty == Some(EdmType::String);
        let a = match op {
            BinaryOp::Eq | BinaryOp::Ne if text => self.dialect.exact_text(&l.sql),
            _ if text => self.dialect.case_sensitive(&l.sql),
            _ => l.sql.clone(),
        };
        let b = &r.sql;
        let nullable = l.nullable || r.nullable;
        if text && l.column && op == BinaryOp::Eq && self.positive && !r.nullable {
            // Null compares as unknown, which drops the row as false does.
            return boolean(self.dialect.text_match(&l.sql, &format!("= {b}")));
        }
        // Where only true keeps a row, `x = 3` may be null for a null `x`:
        // the row goes either way, and the plain form can use an index.
        let guarded = nullable && !self.positive;
        let symbol = match op {
            BinaryOp::Eq if self.positive && !(l.nullable && r.nullable) => "=",
            BinaryOp::Eq if nullable => return boolean(self.dialect.null_safe_eq(&a, b)),
            BinaryOp::Ne if nullable => return boolean(self.dialect.null_safe_ne(&a, b)),
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "<>",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Lt => "<",
            _ => "<=",
        };
        boolean(false_if_null(format!("({a} {symbol} {b})"), guarded))
    }

    fn in_list(&mut self, operand: &Typed<'m>, list: &[Typed<'m>]) -> Result<Frag, QueryError> {
        let node = std::mem::replace(&mut self.positive, false);
        let o = self.expr(operand);
        let items = list
            .iter()
            .map(|e| self.expr(e))
            .collect::<Result<Vec<_>, _>>();
        self.positive = node;
        let (o, items) = (o?, items?);
        if o.is_null_literal() || items.iter().any(|i| i.nullable) {
            let terms: Vec<_> = items
                .iter()
                .map(|i| self.compare(BinaryOp::Eq, &o, i).sql)
                .collect();
            let sql = format!("({})", terms.join(" OR "));
            return Ok(Frag::new(sql, Some(EdmType::Boolean), false));
        }
        let list: Vec<_> = items.iter().map(|i| i.sql.as_str()).collect();
        let test = format!("IN ({})", list.join(", "));
        let condition = match o.ty {
            Some(EdmType::String) if o.column => self.dialect.text_match(&o.sql, &test),
            Some(EdmType::String) => format!("({} {test})", self.dialect.exact_text(&o.sql)),
            _ => format!("({} {test})", o.sql),
        };
        let sql = false_if_null(condition, o.nullable);
        Ok(Frag::new(sql, Some(EdmType::Boolean), false))
    }

    /// `function(args)`, whose type the checker found to be `ty`.
    fn call(&mut self, function: Function, args: Vec<Frag>, ty: Ty) -> Frag {
        use Function as F;
        let nullable = args.iter().any(|a| a.nullable);
        let d = self.dialect;
        let arg = |i: usize| args.get(i).map_or("NULL", |a| a.sql.as_str());
        let text = d.case_sensitive(arg(0));
        let part = |p: DatePart| d.date_part(p, arg(0));
        let sql = match function {
            F::Contains => false_if_null(format!("({} > 0)", d.position(&text, arg(1))), nullable),
            F::StartsWith => {
                false_if_null(format!("({} = 1)", d.position(&text, arg(1))), nullable)
            }
            F::EndsWith => false_if_null(d.ends_with(&text, arg(1)), nullable),
            F::Length => d.char_length(arg(0)),
            F::IndexOf => format!("({} - 1)", d.position(&text, arg(1))),
            F::Substring => d.substring(arg(0), arg(1), args.get(2).map(|a| a.sql.as_str())),
            F::ToLower => format!("lower({})", arg(0)),
            F::ToUpper => format!("upper({})", arg(0)),
            F::Trim => format!("trim({})", arg(0)),
            F::Concat => d.concat(arg(0), arg(1)),
            F::Year => part(DatePart::Year),
            F::Month => part(DatePart::Month),
            F::Day => part(DatePart::Day),
            F::Hour => part(DatePart::Hour),
            F::Minute => part(DatePart::Minute),
            F::Second => part(DatePart::Second),
            F::Date => d.date_of(arg(0)),
            F::Time => d.time_of(arg(0)),
            F::Now => d.now_instant(),
            F::Round => d.round(arg(0)),
            F::Floor => d.floor(arg(0)),
            F::Ceiling => d.ceiling(arg(0)),
        };
        let nullable = nullable && ty != Some(EdmType::Boolean);
        Frag::new(sql, ty, nullable)
    }
}

/// Makes a possibly-null condition false where it would be null.
pub(crate) fn false_if_null(condition: String, nullable: bool) -> String {
    if nullable {
        format!("COALESCE({condition}, FALSE)")
    } else {
        condition
    }
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
