//! Canonical OData syntax for the AST. Printing adds only the parentheses
//! precedence requires, so parsing the printed text yields the same tree; next
//! links and `@odata.context` select lists are built from this output.

use std::fmt::{self, Display, Formatter, Write};

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::odata::query::syntax::{
    ExpandItem, Expr, Format, Literal, OrderItem, Path, Query, SearchExpr, Select, UnaryOp,
    IN_PRECEDENCE, PRIMARY_PRECEDENCE, UNARY_PRECEDENCE,
};

/// Characters escaped in query-string values: those that would end or
/// change a parameter, plus those a URL may not carry raw.
const VALUE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'<')
    .add(b'>')
    .add(b'=')
    .add(b'?')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'[')
    .add(b']');

impl Query {
    /// The options that are set, as `(name, value)` pairs in canonical order
    /// (`$apply`, `$filter`, `$search`, `$select`, `$expand`, `$orderby`, `$top`,
    /// `$skip`, `$skiptoken`, `$count`, `$format`); `extra` is not included.
    ///
    /// ```
    /// let q = gatehouse::odata::parse_query("$top=3&$filter=a eq 1").unwrap();
    /// assert_eq!(q.options(), vec![("$filter", "a eq 1".to_string()), ("$top", "3".to_string())]);
    /// ```
    pub fn options(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(apply) = &self.apply {
            out.push(("$apply", apply.to_string()));
        }
        if let Some(filter) = &self.filter {
            out.push(("$filter", filter.to_string()));
        }
        if let Some(search) = &self.search {
            out.push(("$search", search.to_string()));
        }
        if let Some(select) = &self.select {
            out.push(("$select", select.to_string()));
        }
        if !self.expand.is_empty() {
            out.push(("$expand", joined(&self.expand, ",")));
        }
        if !self.orderby.is_empty() {
            out.push(("$orderby", joined(&self.orderby, ",")));
        }
        if let Some(top) = self.top {
            out.push(("$top", top.to_string()));
        }
        if let Some(skip) = self.skip {
            out.push(("$skip", skip.to_string()));
        }
        if let Some(token) = &self.skiptoken {
            out.push(("$skiptoken", token.clone()));
        }
        if self.count {
            out.push(("$count", "true".to_owned()));
        }
        match self.format {
            Some(Format::Json) => out.push(("$format", "json".to_owned())),
            Some(Format::JsonIeee754) => out.push((
                "$format",
                "application/json;IEEE754Compatible=true".to_owned(),
            )),
            None => {}
        }
        out
    }

    /// The query as a percent-encoded query string (without `?`): the
    /// options in canonical order, then the extra parameters.
    ///
    /// ```
    /// let q = gatehouse::odata::parse_query("$filter=name%20eq%20'A%26B'&lang=en").unwrap();
    /// assert_eq!(q.to_query_string(), "$filter=name%20eq%20'A%26B'&lang=en");
    /// ```
    pub fn to_query_string(&self) -> String {
        let parameters: Vec<String> = self
            .encoded_parameters()
            .into_iter()
            .map(|(_, parameter)| parameter)
            .collect();
        parameters.join("&")
    }

    /// The parameters [`to_query_string`](Query::to_query_string) joins with
    /// `&`: each option's (or extra parameter's) name, and the percent-encoded
    /// `name=value` written for it.
    pub(crate) fn encoded_parameters(&self) -> Vec<(String, String)> {
        let extra = self.extra.iter().map(|(k, v)| (k.as_str(), v.clone()));
        self.options()
            .into_iter()
            .chain(extra)
            .map(|(name, value)| {
                let encoded = format!(
                    "{}={}",
                    utf8_percent_encode(name, VALUE),
                    utf8_percent_encode(&value, VALUE)
                );
                (name.to_owned(), encoded)
            })
            .collect()
    }
}

fn joined<T: Display>(items: &[T], sep: &str) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let _ = write!(out, "{item}");
    }
    out
}

/// Unencoded and `&`-separated; extra parameters follow the options.
impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let extra = self.extra.iter().map(|(k, v)| (k.as_str(), v.clone()));
        for (i, (name, value)) in self.options().into_iter().chain(extra).enumerate() {
            if i > 0 {
                f.write_char('&')?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

impl Display for Path {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("/"))
    }
}

impl Display for OrderItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if self.descending {
            f.write_str(" desc")?;
        }
        Ok(())
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Select::All => f.write_char('*'),
            Select::Paths(paths) => f.write_str(&joined(paths, ",")),
        }
    }
}

impl Display for ExpandItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        let options = self.options.options();
        if !options.is_empty() {
            f.write_char('(')?;
            for (i, (name, value)) in options.iter().enumerate() {
                if i > 0 {
                    f.write_char(';')?;
                }
                write!(f, "{name}={value}")?;
            }
            f.write_char(')')?;
        }
        Ok(())
    }
}

fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Binary { op, .. } => op.precedence(),
        Expr::In { .. } => IN_PRECEDENCE,
        Expr::Unary { .. } => UNARY_PRECEDENCE,
        _ => PRIMARY_PRECEDENCE,
    }
}

fn operand(f: &mut Formatter<'_>, e: &Expr, parens: bool) -> fmt::Result {
    if parens {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Literal(l) => write!(f, "{l}"),
            // A property called `not` standing alone would read as the operator.
            Expr::Path(p) if p.segments() == ["not"] => f.write_str("(not)"),
            Expr::Path(p) => write!(f, "{p}"),
            Expr::Binary { op, left, right } => {
                let p = op.precedence();
                operand(f, left, precedence(left) < p)?;
                write!(f, " {} ", op.keyword())?;
                operand(f, right, precedence(right) <= p)
            }
            Expr::In {
                operand: value,
                list,
            } => {
                operand(f, value, precedence(value) < IN_PRECEDENCE)?;
                write!(f, " in ({})", joined(list, ","))
            }
            Expr::Unary { op, operand: inner } => {
                let low = precedence(inner) < UNARY_PRECEDENCE;
                match op {
                    UnaryOp::Not => {
                        f.write_str("not ")?;
                        operand(f, inner, low)
                    }
                    // `-5` would read back as the literal -5; `- 5` does not,
                    // and nests no deeper than it was written.
                    UnaryOp::Neg if matches!(**inner, Expr::Literal(_)) => write!(f, "- {inner}"),
                    UnaryOp::Neg => {
                        f.write_char('-')?;
                        operand(f, inner, low)
                    }
                }
            }
            Expr::Call { function, args } => {
                write!(f, "{}({})", function.name(), joined(args, ","))
            }
            Expr::Lambda {
                collection,
                quantifier,
                predicate,
            } => {
                let q = match quantifier {
                    crate::odata::query::syntax::Quantifier::Any => "any",
                    crate::odata::query::syntax::Quantifier::All => "all",
                };
                write!(f, "{collection}/{q}(")?;
                if let Some(p) = predicate {
                    write!(f, "{}:{}", p.variable, p.body)?;
                }
                f.write_char(')')
            }
        }
    }
}

fn write_time(f: &mut Formatter<'_>, t: time::Time) -> fmt::Result {
    write!(f, "{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())?;
    if t.nanosecond() > 0 {
        let frac = format!("{:09}", t.nanosecond());
        write!(f, ".{}", frac.trim_end_matches('0'))?;
    }
    Ok(())
}

fn write_date(f: &mut Formatter<'_>, d: time::Date) -> fmt::Result {
    write!(
        f,
        "{:04}-{:02}-{:02}",
        d.year(),
        u8::from(d.month()),
        d.day()
    )
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Decimal(d) => f.write_str(d),
            Literal::Double(v) => write!(f, "{v:e}"),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Date(d) => write_date(f, *d),
            Literal::TimeOfDay(t) => write_time(f, *t),
            Literal::DateTimeOffset(dt) => {
                write_date(f, dt.date())?;
                f.write_char('T')?;
                write_time(f, dt.time())?;
                let offset = dt.offset();
                if offset.is_utc() {
                    f.write_char('Z')
                } else {
                    let sign = if offset.is_negative() { '-' } else { '+' };
                    let (h, m, _) = offset.as_hms();
                    write!(f, "{sign}{:02}:{:02}", h.unsigned_abs(), m.unsigned_abs())
                }
            }
            Literal::Guid(g) => write!(f, "{g}"),
        }
    }
}

fn search_precedence(e: &SearchExpr) -> u8 {
    match e {
        SearchExpr::Or(..) => 1,
        SearchExpr::And(..) => 2,
        SearchExpr::Not(_) => 3,
        _ => 4,
    }
}

fn search_operand(f: &mut Formatter<'_>, e: &SearchExpr, parens: bool) -> fmt::Result {
    if parens {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

impl Display for SearchExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SearchExpr::Word(w) => f.write_str(w),
            SearchExpr::Phrase(p) => {
                write!(f, "\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\""))
            }
            SearchExpr::Not(inner) => {
                f.write_str("NOT ")?;
                search_operand(f, inner, search_precedence(inner) < 3)
            }
            SearchExpr::And(l, r) => {
                search_operand(f, l, search_precedence(l) < 2)?;
                f.write_str(" AND ")?;
                search_operand(f, r, search_precedence(r) <= 2)
            }
            SearchExpr::Or(l, r) => {
                search_operand(f, l, search_precedence(l) < 1)?;
                f.write_str(" OR ")?;
                search_operand(f, r, search_precedence(r) <= 1)
            }
        }
    }
}

#[cfg(test)]
#[path = "print_tests.rs"]
mod tests;
