//! The general form of a page query, for key lookups, navigation routes and
//! `$expand`: the rows of a set restricted to those whose column holds one of
//! a few values (the keys of a page of parents), optionally paged per value
//! rather than as a whole, and carrying internal columns the response needs
//! but does not show (foreign keys that nested expansions follow).
//!
//! ```
//! use gatehouse::db::Dialect;
//! use gatehouse::odata::{check_query, fetch_query, parse_query, EdmType, EntitySet, Fetch, Literal, Model, Page, Property, Restriction};
//! let model = Model::new().set(
//!     EntitySet::new("Pets", "pets", "id")
//!         .property(Property::new("id", EdmType::Int32).not_null())
//!         .property(Property::new("owner", EdmType::Int32)),
//! );
//! let q = parse_query("$top=2").unwrap();
//! let checked = check_query(&model, &model.sets[0], &q).unwrap();
//! let owners = Restriction::of("owner", vec![Literal::Int(1), Literal::Int(2)]);
//! let page = Page::from_prefer(None, 200, None).of(&q);
//! let fetch = Fetch { restriction: Some(&owners), per_value: true, internal: vec![], page, scopes: None, count: false };
//! let sql = fetch_query(&checked, &fetch, Dialect::Sqlite).unwrap();
//! assert!(sql.text.contains("ROW_NUMBER() OVER (PARTITION BY"));
//! ```

use crate::db::Dialect;
use crate::odata::check::checked::Checked;
use crate::odata::check::paging::Page;
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::model::sets::EdmType;
use crate::odata::query::syntax::Literal;
use crate::odata::sql::expr::Writer;
use crate::odata::sql::seek::{self, Part, Position};
use crate::odata::sql::select::{
    clamp, order_terms, render_order, where_with, Bind, OrderTerm, Sql,
};

/// Rows whose `column` (a column of the set's table, exposed or not) holds
/// one of `values`, or the value read [`Through`] another table's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Restriction {
    /// The table column compared.
    pub column: String,
    /// The admitted values; none admits no row (unless `through` is set).
    pub values: Vec<Literal>,
    /// The admitted value is read, when the statement runs, from a row of
    /// another table instead.
    pub through: Option<Through>,
}

/// A value read by the statement itself from one row of another table:
/// `column` of the row of `table` whose `key_column` holds `key` (a to-one
/// navigation's foreign key, read with its target).
#[derive(Debug, Clone, PartialEq)]
pub struct Through {
    /// The table holding the row.
    pub table: String,
    /// The column whose value is admitted.
    pub column: String,
    /// The row's key column.
    pub key_column: String,
    /// The row's key.
    pub key: Literal,
}

impl Restriction {
    /// Rows whose `column` holds one of `values`.
    pub fn of(column: impl Into<String>, values: Vec<Literal>) -> Restriction {
        Restriction {
            column: column.into(),
            values,
            through: None,
        }
    }
}

/// What a fetch reads besides the query's own options.
#[derive(Debug, Clone)]
pub struct Fetch<'a> {
    /// Only rows matching this, when given.
    pub restriction: Option<&'a Restriction>,
    /// Page per restriction value (each parent's own `$top`/`$skip`) instead
    /// of over the whole result. The statement then also yields the value as
    /// column `__parent` after the internal columns, and rows come grouped by it.
    pub per_value: bool,
    /// Table columns read after the selected properties, as `__0`, `__1`, …
    pub internal: Vec<String>,
    /// The slice to read: [`Page::limit`] rows past its offset, per value
    /// when paging per value.
    pub page: Page,
    /// The caller's scopes: joined to the rows of the set read, and
    /// confining the other sets paths and lambdas reach.
    pub scopes: Option<&'a Scopes<'a>>,
    /// Also yield, as the last column `__count` (the same on every row),
    /// how many rows the query admits in all, ignoring the page; not with
    /// `per_value`.
    pub count: bool,
}

/// The statement reading `fetch` of `checked` over its set: selected
/// properties in declaration order, then the internal columns, then
/// `__count` or (per-value paging) `__parent` and `__rn`.
pub fn fetch_query<'m>(
    checked: &Checked<'m, '_>,
    fetch: &Fetch<'m>,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    build(
        checked,
        fetch,
        dialect,
        Read::Offset {
            order_values: false,
        },
    )
}

/// The statements reading a page of `fetch` (not per value) whose order
/// can be sought: from `position` ([`seek`](crate::odata::sql::seek)), one or two
/// statements whose rows follow each other; or, without one, past the
/// page's offset. Each also selects, after the internal columns, the
/// values of the order's terms it does not select already, as `__s<i>`
/// ([`Order::columns`] says where each value is), then `__count`.
pub fn seek_statements<'m>(
    checked: &Checked<'m, '_>,
    fetch: &Fetch<'m>,
    position: Option<&Position>,
    dialect: Dialect,
) -> Result<Vec<Sql>, QueryError> {
    let Some(position) = position else {
        let read = Read::Offset { order_values: true };
        return Ok(vec![build(checked, fetch, dialect, read)?]);
    };
    let mut w = Writer::new(checked.set(), dialect).with_scopes(fetch.scopes);
    let terms = order_terms(&mut w, checked)?;
    seek::plan(&terms, position)
        .iter()
        .map(|part| build(checked, fetch, dialect, Read::At(part)))
        .collect()
}

/// The order of a page's rows as its next links seek it: each term's type
/// and where a statement of [`seek_statements`] reads its value; worked out
/// once, when the page is planned.
#[derive(Debug, Clone)]
pub struct Order {
    terms: Vec<OrderTerm>,
}

impl Order {
    /// The order of `checked`'s rows, ending in the key.
    pub fn of(checked: &Checked<'_, '_>, dialect: Dialect) -> Result<Order, QueryError> {
        let mut w = Writer::new(checked.set(), dialect);
        Ok(Order {
            terms: order_terms(&mut w, checked)?,
        })
    }

    /// The types of the order's terms, in order.
    pub fn types(&self) -> Vec<EdmType> {
        self.terms.iter().map(|t| t.edm).collect()
    }

    /// The column each of the order's values is read from in a statement
    /// of [`seek_statements`] with `internal` internal columns: a selected
    /// property's own column, or one of its own (`__s<i>`) after the
    /// internal columns, in order, for a term that is not selected.
    pub fn columns(
        &self,
        checked: &Checked<'_, '_>,
        internal: usize,
        dialect: Dialect,
    ) -> Vec<usize> {
        value_columns(checked, &self.terms, internal, dialect)
    }
}

/// See [`Order::columns`]. An instant that `dialect` orders by a normalised
/// value rather than as stored (SQLite's text) gets a column of its own for
/// that value even when selected: the token must carry what the order
/// compares, not the spelling stored.
fn value_columns(
    checked: &Checked<'_, '_>,
    terms: &[OrderTerm],
    internal: usize,
    dialect: Dialect,
) -> Vec<usize> {
    let selected = checked.selected();
    let mut next = selected.len() + internal;
    terms
        .iter()
        .map(|term| {
            let as_stored =
                term.edm != EdmType::DateTimeOffset || !dialect.orders_instants_normalised();
            let own = term.property.as_deref().filter(|_| as_stored);
            match selected.iter().position(|p| Some(p.name.as_str()) == own) {
                Some(column) => column,
                None => {
                    next += 1;
                    next - 1
                }
            }
        })
        .collect()
}

/// How a statement reaches its page's first row.
#[derive(Clone, Copy)]
enum Read<'p> {
    /// Past the page's offset; selecting the order's values too, or not.
    Offset { order_values: bool },
    /// From a position: one part of [`seek::plan`], with the order's values.
    At(&'p Part<'p>),
}

fn build<'m>(
    checked: &Checked<'m, '_>,
    fetch: &Fetch<'m>,
    dialect: Dialect,
    read: Read<'_>,
) -> Result<Sql, QueryError> {
    let set = checked.set();
    let mut w = Writer::new(set, dialect).with_scopes(fetch.scopes);
    let t0 = w.root_alias();
    let mut columns: Vec<String> = checked
        .selected()
        .iter()
        .map(|p| {
            let value = dialect.output_value(&w.column(&t0, &p.column), p.edm_type.stored());
            format!("{value} AS {}", dialect.quote(&p.name))
        })
        .collect();
    for (i, column) in fetch.internal.iter().enumerate() {
        columns.push(format!(
            "{} AS {}",
            w.column(&t0, column),
            dialect.quote(&format!("__{i}"))
        ));
    }
    let terms = order_terms(&mut w, checked)?;
    if matches!(read, Read::At(_) | Read::Offset { order_values: true }) {
        // A value the page selects anyway is read from its own column.
        let first = columns.len();
        let at = value_columns(checked, &terms, fetch.internal.len(), dialect);
        for (i, (term, column)) in terms.iter().zip(at).enumerate() {
            if column >= first {
                let value = dialect.output_value(&term.sql, term.edm.stored());
                columns.push(format!("{value} AS {}", dialect.quote(&format!("__s{i}"))));
            }
        }
    }
    if fetch.count && !fetch.per_value {
        let count = match (&set.derived, &read) {
            // A derived set's rows are made by a statement of their own:
            // counted as they are read, before the page is cut from them,
            // rather than made a second time. A position (`At`) would cut
            // them first.
            (Some(_), Read::Offset { .. }) => "COUNT(*) OVER ()".to_owned(),
            // An uncorrelated subquery: every engine runs it once per
            // statement.
            _ => format!("({})", counting(&mut w, checked, fetch.restriction)?),
        };
        columns.push(format!("{count} AS {}", dialect.quote("__count")));
    }
    let restriction = fetch.restriction.map(|r| restrict(&mut w, r));
    let (position, order) = match read {
        Read::At(part) => part.write(&mut w, &terms),
        Read::Offset { .. } => (None, render_order(&terms, dialect)),
    };
    let conditions: Vec<String> = restriction.into_iter().chain(position).collect();
    let condition = (!conditions.is_empty()).then(|| conditions.join(" AND "));
    let parent = fetch
        .restriction
        .filter(|_| fetch.per_value)
        .map(|r| w.column(&t0, &r.column));
    if let Some(parent) = &parent {
        columns.push(format!("{parent} AS {}", dialect.quote("__parent")));
        columns.push(format!(
            "ROW_NUMBER() OVER (PARTITION BY {parent} ORDER BY {order}) AS {}",
            dialect.quote("__rn")
        ));
    }
    let table = set.rows_sql(dialect);
    let mut rows = format!(" FROM {table} AS {t0}");
    where_with(&mut w, checked, condition, &mut rows)?;
    let select = format!("SELECT {}", columns.join(", "));
    let mut text = format!("{select}{rows}");
    let first = match read {
        Read::At(_) => 0,
        Read::Offset { .. } => clamp(fetch.page.offset()),
    };
    let probe = clamp(fetch.page.limit());
    if parent.is_some() {
        let (rn, by) = (dialect.quote("__rn"), dialect.quote("__parent"));
        let low = w.bind(Bind::Int(first));
        let high = w.bind(Bind::Int(first.saturating_add(probe)));
        text = format!(
            "SELECT * FROM ({text}) AS {w0} WHERE {w0}.{rn} > {low} AND {w0}.{rn} <= {high} \
             ORDER BY {w0}.{by}, {w0}.{rn}",
            w0 = dialect.quote("w0")
        );
    } else {
        let (limit, offset) = if dialect.writes_page_bounds() {
            (probe.to_string(), first.to_string())
        } else {
            (w.bind(Bind::Int(probe)), w.bind(Bind::Int(first)))
        };
        let slice = format!(
            " ORDER BY {order} {}",
            dialect.limit_offset(&limit, &offset)
        );
        match (
            first > 0 && dialect.defers_columns_past_offset() && set.derived.is_none(),
            set.key_property(),
        ) {
            (true, Some(key)) => {
                // The skipped rows yield only their keys (an index-only
                // scan); the page's columns are read for its own rows.
                let (k, key) = (dialect.quote("k"), dialect.quote(&key.column));
                text = format!(
                    "{select} FROM (SELECT {t0}.{key}{rows}{slice}) AS {k} \
                     JOIN {table} AS {t0} ON {t0}.{key} = {k}.{key} ORDER BY {order}"
                );
            }
            _ => text += &slice,
        }
    }
    Ok(Sql::finish(text, w.binds, dialect))
}

/// The statement counting, per restriction value, the rows `checked`'s
/// `$filter` and `$search` admit: rows of (value, count).
pub fn count_per_value<'m>(
    checked: &Checked<'m, '_>,
    restriction: &Restriction,
    scopes: Option<&'m Scopes<'m>>,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    let set = checked.set();
    let mut w = Writer::new(set, dialect).with_scopes(scopes);
    let t0 = w.root_alias();
    let column = w.column(&t0, &restriction.column);
    let mut text = format!(
        "SELECT {column}, COUNT(*) FROM {} AS {t0}",
        set.rows_sql(dialect)
    );
    let condition = restrict(&mut w, restriction);
    where_with(&mut w, checked, Some(condition), &mut text)?;
    text += &format!(" GROUP BY {column}");
    Ok(Sql::finish(text, w.binds, dialect))
}

/// The statement counting the rows of `checked` that also match
/// `restriction`.
pub fn count_restricted<'m>(
    checked: &Checked<'m, '_>,
    restriction: Option<&Restriction>,
    scopes: Option<&'m Scopes<'m>>,
    dialect: Dialect,
) -> Result<Sql, QueryError> {
    let mut w = Writer::new(checked.set(), dialect).with_scopes(scopes);
    let text = counting(&mut w, checked, restriction)?;
    Ok(Sql::finish(text, w.binds, dialect))
}

/// `SELECT COUNT(*)` of the rows of `checked` over the writer's set that also
/// match `restriction`: a statement alone, or a page's `__count` column.
fn counting<'m>(
    w: &mut Writer<'m>,
    checked: &Checked<'m, '_>,
    restriction: Option<&Restriction>,
) -> Result<String, QueryError> {
    let table = w.root().rows_sql(w.dialect);
    let mut text = format!("SELECT COUNT(*) FROM {table} AS {}", w.root_alias());
    let condition = restriction.map(|r| restrict(w, r));
    where_with(w, checked, condition, &mut text)?;
    Ok(text)
}

fn restrict(w: &mut Writer<'_>, restriction: &Restriction) -> String {
    if let Some(through) = &restriction.through {
        let column = w.column(&w.root_alias(), &restriction.column);
        let a = w.alias();
        let key = w.column(&a, &through.key_column);
        let test = format!("IN ({})", w.literal(&through.key).sql);
        let matched = match through.key {
            Literal::String(_) => w.dialect.text_match(&key, &test),
            _ => format!("{key} {test}"),
        };
        let (value, table) = (
            w.column(&a, &through.column),
            w.dialect.quote(&through.table),
        );
        return format!("{column} IN (SELECT {value} FROM {table} AS {a} WHERE {matched})");
    }
    if restriction.values.is_empty() {
        return "1 = 0".to_owned();
    }
    let column = w.column(&w.root_alias(), &restriction.column);
    let values: Vec<String> = restriction
        .values
        .iter()
        .map(|v| w.literal(v).sql)
        .collect();
    let test = format!("IN ({})", values.join(", "));
    // Text keys match exactly, as `$filter=key eq '…'` does.
    if restriction
        .values
        .iter()
        .all(|v| matches!(v, Literal::String(_)))
    {
        return w.dialect.text_match(&column, &test);
    }
    format!("{column} {test}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::odata::model::fixture::model;
    use crate::odata::{check_query, parse_query, Query};

    fn sql(query: &str, fetch: &Fetch<'_>, d: Dialect) -> Sql {
        let m = model();
        let posts = m.find("Posts").expect("fixture");
        let q = parse_query(query).expect("parses");
        let checked = check_query(&m, posts, &q).expect("fits");
        fetch_query(&checked, fetch, d).expect("fits")
    }

    fn authors(values: Vec<Literal>) -> Restriction {
        Restriction::of("author_id", values)
    }

    #[test]
    fn restriction_binds_each_value_and_internal_columns_follow() {
        let r = authors(vec![Literal::Int(4), Literal::Int(9)]);
        let fetch = Fetch {
            restriction: Some(&r),
            per_value: false,
            internal: vec!["author_id".into()],
            page: Page::first(10),
            scopes: None,
            count: false,
        };
        let s = sql("$select=title", &fetch, Dialect::Postgres);
        assert_eq!(
            s.text,
            concat!(
                r#"SELECT "t0"."id" AS "id", "t0"."title" AS "title", "t0"."author_id" AS "__0" "#,
                r#"FROM "posts" AS "t0" WHERE "t0"."author_id" IN ($1, $2) "#,
                r#"ORDER BY "t0"."id" ASC LIMIT 11 OFFSET 0"#
            )
        );
        assert_eq!(s.binds, [Bind::Int(4), Bind::Int(9)]);
        let s = sql("$select=title", &fetch, Dialect::Sqlite);
        assert!(s.text.ends_with("LIMIT $3 OFFSET $4"), "{}", s.text);
        assert_eq!(
            s.binds,
            [Bind::Int(4), Bind::Int(9), Bind::Int(11), Bind::Int(0)]
        );
    }

    #[test]
    fn per_value_paging_numbers_rows_within_each_parent() {
        let r = authors(vec![Literal::Int(1)]);
        let fetch = Fetch {
            restriction: Some(&r),
            per_value: true,
            internal: vec![],
            page: Page::first(3).of(&parse_query("$skip=2").expect("parses")),
            scopes: None,
            count: false,
        };
        let s = sql(
            "$orderby=likes desc&$filter=likes gt 1",
            &fetch,
            Dialect::Sqlite,
        );
        assert!(
            s.text.contains(r#"ROW_NUMBER() OVER (PARTITION BY "t0"."author_id" ORDER BY "t0"."likes" DESC, "t0"."id" DESC) AS "__rn""#),
            "{}",
            s.text
        );
        assert!(s.text.ends_with(r#"WHERE "w0"."__rn" > $3 AND "w0"."__rn" <= $4 ORDER BY "w0"."__parent", "w0"."__rn""#), "{}", s.text);
        assert_eq!(
            s.binds,
            [Bind::Int(1), Bind::Int(1), Bind::Int(2), Bind::Int(6)]
        );
    }

    #[test]
    fn empty_restriction_admits_nothing() {
        let r = authors(vec![]);
        let m = model();
        let posts = m.find("Posts").expect("fixture");
        let q = Query::default();
        let checked = check_query(&m, posts, &q).expect("fits");
        let s = count_restricted(&checked, Some(&r), None, Dialect::Sqlite).expect("fits");
        assert_eq!(
            s.text,
            r#"SELECT COUNT(*) FROM "posts" AS "t0" WHERE 1 = 0"#
        );
        let s = count_per_value(
            &checked,
            &authors(vec![Literal::Int(3)]),
            None,
            Dialect::MySql,
        )
        .expect("fits");
        assert_eq!(
            s.text,
            "SELECT `t0`.`author_id`, COUNT(*) FROM `posts` AS `t0` WHERE `t0`.`author_id` IN (?) GROUP BY `t0`.`author_id`"
        );
    }

    #[test]
    fn a_page_of_n_asks_for_n_plus_one_rows_alone_and_per_parent() {
        let m = model();
        let users = m.find("Users").expect("fixture");
        let request = Page::from_prefer(Some("odata.maxpagesize=4"), 200, None);
        let q = parse_query("$expand=posts($skip=2)").expect("parses");
        let checked = check_query(&m, users, &q).expect("fits");
        // The top level: LIMIT 5 OFFSET 0.
        let fetch = Fetch {
            restriction: None,
            per_value: false,
            internal: vec![],
            page: request.of(&q),
            scopes: None,
            count: false,
        };
        let top = fetch_query(&checked, &fetch, Dialect::Postgres).expect("fits");
        assert!(top.text.ends_with("LIMIT 5 OFFSET 0"), "{}", top.text);
        assert_eq!(top.binds, []);
        // Inside $expand, each parent's page: rows 3 to 7 of each author.
        let expansion = &checked.expand()[0];
        let parents = authors(vec![Literal::Int(1), Literal::Int(2)]);
        let fetch = Fetch {
            restriction: Some(&parents),
            per_value: true,
            internal: vec![],
            page: request.of(expansion.options()),
            scopes: None,
            count: false,
        };
        let nested = fetch_query(expansion.checked(), &fetch, Dialect::Postgres).expect("fits");
        assert!(
            nested
                .text
                .contains(r#""w0"."__rn" > $3 AND "w0"."__rn" <= $4"#),
            "{}",
            nested.text
        );
        assert_eq!(
            nested.binds,
            [Bind::Int(1), Bind::Int(2), Bind::Int(2), Bind::Int(7)]
        );
    }
}
