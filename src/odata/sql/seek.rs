//! Reading a page from a position in the order rather than past a number
//! of rows: the conditions and orders of the statements that read a page
//! starting at the first row, or after the row whose order values a
//! `$skiptoken` carries. Pure: no HTTP, no database.
//!
//! OData sorts nulls below every value: first when ascending, last when
//! descending. An index orders them as its engine does (PostgreSQL's high,
//! SQLite's and MySQL's low), so an order whose first term can be null is
//! read in two parts, its null rows and its other rows, each in an order
//! every engine's ordinary index on the column serves; the part the position
//! lies in is read first, and the other only when the page needs more rows.
//!
//! After a row, the condition is the order's comparison spelled out term by
//! term (`a > x OR (a = x AND (b > y OR …))`), each term null-aware. Where
//! it can, the first term bounds the index range, and within the bound the
//! rest decides: `a >= x AND (a > x OR b > y)`. PostgreSQL estimates that
//! form's rows well; with `a = x` repeated inside, it multiplies the bound
//! by its own complement, guesses too few rows past the middle of a long
//! walk, and sorts every remaining match instead of reading the index.

use crate::odata::query::syntax::Literal;
use crate::odata::sql::expr::Writer;
use crate::odata::sql::select::{render_order, OrderTerm};

/// Where a page read by position starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    /// At the first row of the order.
    First,
    /// After the row with these values of the order's terms, one per term,
    /// the key's last.
    After(Vec<Literal>),
}

/// One statement of a page read by position: which rows of the order it
/// reads, and the row it reads after, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Part<'p> {
    rows: Rows,
    after: Option<&'p [Literal]>,
}

/// The rows a [`Part`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rows {
    /// All of them: the first term cannot be null.
    All,
    /// Those whose first term is null.
    Nulls,
    /// Those whose first term is not null.
    Values,
}

/// The statements that read the rows of `terms`' order from `position`, in
/// the order their rows come: one, or two when the first term can be null.
/// `position` holds one value per term (the service checks it).
pub(crate) fn plan<'p>(terms: &[OrderTerm], position: &'p Position) -> Vec<Part<'p>> {
    let after = match position {
        Position::First => None,
        Position::After(values) => Some(values.as_slice()),
    };
    let part = |rows, after| Part { rows, after };
    let Some(first) = terms.first().filter(|first| first.nullable) else {
        return vec![part(Rows::All, after)];
    };
    let in_nulls = after.map(|values| matches!(values.first(), Some(Literal::Null)));
    match (first.descending, in_nulls) {
        // Ascending: the null rows first.
        (false, None) => vec![part(Rows::Nulls, None), part(Rows::Values, None)],
        (false, Some(true)) => vec![part(Rows::Nulls, after), part(Rows::Values, None)],
        (false, Some(false)) => vec![part(Rows::Values, after)],
        // Descending: the null rows last.
        (true, None) => vec![part(Rows::Values, None), part(Rows::Nulls, None)],
        (true, Some(false)) => vec![part(Rows::Values, after), part(Rows::Nulls, None)],
        (true, Some(true)) => vec![part(Rows::Nulls, after)],
    }
}

impl Part<'_> {
    /// The part's condition on the rows (ANDed to the statement's others)
    /// and its `ORDER BY` terms, over `terms` as written by `w`.
    pub(crate) fn write(
        &self,
        w: &mut Writer<'_>,
        terms: &[OrderTerm],
    ) -> (Option<String>, String) {
        let Some((first, rest)) = terms.split_first().filter(|_| self.rows != Rows::All) else {
            let condition = self.after.map(|values| seek(w, terms, values));
            return (condition, render_order(terms, w.dialect));
        };
        if self.rows == Rows::Nulls {
            let values = self.after.map(|values| values.get(1..).unwrap_or_default());
            let condition = both(
                format!("{} IS NULL", first.sql),
                values.map(|values| seek(w, rest, values)),
            );
            return (Some(condition), render_order(rest, w.dialect));
        }
        let mut valued = terms.to_vec();
        valued[0].nullable = false;
        let condition = both(
            format!("{} IS NOT NULL", first.sql),
            self.after.map(|values| seek(w, &valued, values)),
        );
        (Some(condition), render_order(&valued, w.dialect))
    }
}

/// `a AND b`, or `a` alone.
fn both(a: String, b: Option<String>) -> String {
    match b {
        Some(b) => format!("{a} AND {b}"),
        None => a,
    }
}

/// The rows after `values` in the order of `terms`: spelled out term by
/// term, the first bounded for the index.
fn seek(w: &mut Writer<'_>, terms: &[OrderTerm], values: &[Literal]) -> String {
    let bound: Vec<(&OrderTerm, Option<String>)> = terms
        .iter()
        .zip(values)
        .map(|(term, value)| {
            let placeholder = match value {
                Literal::Null => None,
                value => Some(w.order_value(value, term.edm)),
            };
            (term, placeholder)
        })
        .collect();
    let Some(((first, value), later)) = bound.split_first() else {
        return "1 = 0".to_owned();
    };
    let mut rest: Option<String> = None;
    for (term, value) in later.iter().rev() {
        let after = after(term, value.as_deref());
        rest = Some(match rest {
            None => after,
            Some(rest) => format!(
                "({after} OR ({} AND {rest}))",
                equal(term, value.as_deref())
            ),
        });
    }
    let after_first = after(first, value.as_deref());
    let Some(rest) = rest else {
        // A lone term is its own bound.
        return after_first;
    };
    match value {
        // Bounded for the index: within the bound, a row not after the
        // first term's value has that value, so the rest decides. Null rows
        // come after every value when descending: no bound keeps them, so a
        // term that can be null gets none.
        Some(value) if !(first.nullable && first.descending) => {
            let op = if first.descending { "<=" } else { ">=" };
            format!("{} {op} {value} AND ({after_first} OR {rest})", first.sql)
        }
        _ => format!(
            "({after_first} OR ({} AND {rest}))",
            equal(first, value.as_deref())
        ),
    }
}

/// The rows whose `term` comes after `value` (a placeholder, or null).
fn after(term: &OrderTerm, value: Option<&str>) -> String {
    let sql = &term.sql;
    match (value, term.descending) {
        (None, false) => format!("{sql} IS NOT NULL"),
        (None, true) => "1 = 0".to_owned(),
        (Some(v), false) => format!("{sql} > {v}"),
        (Some(v), true) if term.nullable => format!("({sql} < {v} OR {sql} IS NULL)"),
        (Some(v), true) => format!("{sql} < {v}"),
    }
}

/// The rows whose `term` equals `value` (a placeholder, or null).
fn equal(term: &OrderTerm, value: Option<&str>) -> String {
    match value {
        None => format!("{} IS NULL", term.sql),
        Some(v) => format!("{} = {v}", term.sql),
    }
}

#[cfg(test)]
#[path = "seek_tests.rs"]
mod tests;
