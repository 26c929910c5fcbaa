//! The OData query AST: what a request's query string asks for, parsed once
//! and free of syntax. Nothing here knows the entity model; names are checked
//! against it by the next step of the pipeline.

use std::fmt;

pub use crate::odata::query::function::Function;

/// Everything a request's query string asks of a collection.
///
/// Built by [`parse_query`](crate::odata::parse_query); printed back (canonically)
/// by its `Display` implementation or
/// [`to_query_string`](Query::to_query_string).
///
/// ```
/// let q = gatehouse::odata::parse_query("$top=5&$filter=age gt 30").unwrap();
/// assert_eq!(q.top, Some(5));
/// assert!(q.filter.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// `$apply`: transformations applied to the collection before every
    /// other option.
    pub apply: Option<Apply>,
    /// `$top`: how many entities the client wants in total.
    pub top: Option<u64>,
    /// `$skip`: how many entities to leave out from the start.
    pub skip: Option<u64>,
    /// `$skiptoken`: where the page starts, as a next link wrote it
    /// (opaque; opened by the service).
    pub skiptoken: Option<String>,
    /// `$count=true`: include the total count of the (filtered) collection.
    pub count: bool,
    /// `$orderby`: the sort keys, most significant first.
    pub orderby: Vec<OrderItem>,
    /// `$filter`: the boolean expression rows must satisfy.
    pub filter: Option<Expr>,
    /// `$search`: the free-text search expression.
    pub search: Option<SearchExpr>,
    /// `$select`: the properties to return; `None` when the option is absent.
    pub select: Option<Select>,
    /// `$expand`: the navigations to load alongside each entity.
    pub expand: Vec<ExpandItem>,
    /// `$format`: the requested response format, when given.
    pub format: Option<Format>,
    /// Parameters whose names do not start with `$`, in order of appearance:
    /// OData ignores them, but next links must carry them on.
    pub extra: Vec<(String, String)>,
}

/// One `$orderby` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderItem {
    /// The property sorted on.
    pub path: Path,
    /// `desc` was given (the default is ascending).
    pub descending: bool,
}

/// The `$select` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Select {
    /// `$select=*`: every structural property.
    All,
    /// An explicit list of properties.
    Paths(Vec<Path>),
}

/// One `$expand` item: a navigation and the options applied to its targets.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandItem {
    /// The navigation property to expand.
    pub path: Path,
    /// Nested options (`$filter`, `$select`, `$orderby`, `$top`, `$skip`,
    /// `$count`, `$expand`, `$search`); `format` and `extra` are always empty.
    pub options: Query,
}

/// A response format the service can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `json` or `application/json`.
    Json,
    /// `application/json;IEEE754Compatible=true`: Int64 and Decimal values
    /// as JSON strings.
    JsonIeee754,
}

/// A property path: one or more identifiers joined by `/`, such as
/// `organisation/name`. Inside a lambda the first segment may be the lambda
/// variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Path(pub Vec<String>);

impl Path {
    /// A path of a single property.
    ///
    /// ```
    /// use gatehouse::odata::Path;
    /// assert_eq!(Path::single("name").to_string(), "name");
    /// ```
    pub fn single(name: &str) -> Path {
        Path(vec![name.to_owned()])
    }

    /// The path's segments, outermost first.
    pub fn segments(&self) -> &[String] {
        &self.0
    }
}

/// A `$filter` expression.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// A constant.
    Literal(Literal),
    /// A property (or lambda variable) path.
    Path(Path),
    /// `left op right`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// `not operand` or `-operand`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// `operand in (a, b, ...)`; the list is never empty.
    In {
        /// The value looked up.
        operand: Box<Expr>,
        /// The candidate values.
        list: Vec<Expr>,
    },
    /// A built-in function call; the argument count fits the function.
    Call {
        /// The function.
        function: Function,
        /// The arguments, in order.
        args: Vec<Expr>,
    },
    /// `collection/any(v: predicate)`, `collection/any()` or
    /// `collection/all(v: predicate)`.
    Lambda {
        /// The collection-valued navigation.
        collection: Path,
        /// `any` or `all`.
        quantifier: Quantifier,
        /// The variable and predicate; `None` only for `any()`.
        predicate: Option<LambdaPredicate>,
    },
}

/// The variable and body of a lambda.
#[derive(Debug, Clone, PartialEq)]
pub struct LambdaPredicate {
    /// The name bound to each member of the collection.
    pub variable: String,
    /// The condition, in which paths may start with `variable`.
    pub body: Box<Expr>,
}

/// Lambda quantifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quantifier {
    /// True when some member satisfies the predicate (or, without one, when
    /// the collection is not empty).
    Any,
    /// True when every member satisfies the predicate.
    All,
}

/// Binary operators, from loosest to tightest binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BinaryOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `eq`
    Eq,
    /// `ne`
    Ne,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `lt`
    Lt,
    /// `le`
    Le,
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `mul`
    Mul,
    /// `div`
    Div,
    /// `divby` (decimal division)
    DivBy,
    /// `mod`
    Mod,
}

/// Precedence of `in`, shared with the relational operators.
pub(crate) const IN_PRECEDENCE: u8 = 4;
/// Precedence of the unary operators.
pub(crate) const UNARY_PRECEDENCE: u8 = 7;
/// Precedence of literals, paths, calls and lambdas.
pub(crate) const PRIMARY_PRECEDENCE: u8 = 8;

impl BinaryOp {
    /// Every binary operator.
    pub(crate) const ALL: [BinaryOp; 14] = [
        BinaryOp::Or,
        BinaryOp::And,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::DivBy,
        BinaryOp::Mod,
    ];

    /// The operator's keyword in OData syntax.
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::DivBy => "divby",
            BinaryOp::Mod => "mod",
        }
    }

    /// The operator named by `keyword` (case-sensitive), if any.
    pub(crate) fn from_keyword(keyword: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.keyword() == keyword)
    }

    /// Binding strength per OData Part 2: a higher number binds tighter.
    pub(crate) fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq | BinaryOp::Ne => 3,
            BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Lt | BinaryOp::Le => IN_PRECEDENCE,
            BinaryOp::Add | BinaryOp::Sub => 5,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::DivBy | BinaryOp::Mod => 6,
        }
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnaryOp {
    /// Logical `not`.
    Not,
    /// Arithmetic negation `-`.
    Neg,
}

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// `null`
    Null,
    /// `true` or `false`
    Boolean(bool),
    /// An integer that fits in 64 bits, such as `42` or `-7`.
    Int(i64),
    /// A decimal such as `1.50`, kept as written so no precision is lost;
    /// also an integer too large for 64 bits.
    Decimal(String),
    /// A number with an exponent, such as `1.5e3`.
    Double(f64),
    /// A string; the `''` escapes are already resolved.
    String(String),
    /// A date, `YYYY-MM-DD`.
    Date(time::Date),
    /// An instant with its offset, `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`.
    DateTimeOffset(time::OffsetDateTime),
    /// A time of day, `HH:MM[:SS[.fff]]`.
    TimeOfDay(time::Time),
    /// A GUID, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    Guid(Guid),
}

/// A GUID value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guid(pub u128);

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

/// A `$search` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchExpr {
    /// A bare word.
    Word(String),
    /// A `"quoted phrase"` (escapes resolved).
    Phrase(String),
    /// `NOT term`
    Not(Box<SearchExpr>),
    /// `a AND b`, or `a b`.
    And(Box<SearchExpr>, Box<SearchExpr>),
    /// `a OR b`
    Or(Box<SearchExpr>, Box<SearchExpr>),
}

/// A `$apply` value: transformations applied in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Apply(pub Vec<Transformation>);

/// One transformation of a `$apply` sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Transformation {
    /// `filter(expr)`: the rows the expression admits.
    Filter(Expr),
    /// `search(expr)`: the rows the search expression matches.
    Search(SearchExpr),
    /// `groupby((paths))` or `groupby((paths),sequence)`: one row per
    /// distinct combination of the paths' values, the sequence (an
    /// `aggregate`) applied to each group.
    GroupBy {
        /// The grouping properties (to-one navigation paths allowed).
        paths: Vec<Path>,
        /// What is computed per group.
        then: Option<Apply>,
    },
    /// `aggregate(…)`: one row of aggregated values.
    Aggregate(Vec<Aggregate>),
    /// `orderby(…)`: the rows in this order.
    OrderBy(Vec<OrderItem>),
    /// `top(n)`: the first `n` rows.
    Top(u64),
    /// `skip(n)`: all but the first `n` rows.
    Skip(u64),
    /// `concat(sequence,…)`: the rows of each sequence, applied to the
    /// same input, one after the other.
    Concat(Vec<Apply>),
    /// `identity`: the rows as they are.
    Identity,
    /// `com.sap.vocabularies.Hierarchy.v1.TopLevels(…)`: a hierarchy's
    /// nodes down to a level, some expanded further, in preorder.
    TopLevels(TopLevels),
    /// `descendants(…)` or `ancestors(…)`: the nodes below, or above, those
    /// a sequence of `filter` and `search` picks.
    Related(Related),
}

/// `com.sap.vocabularies.Hierarchy.v1.TopLevels(HierarchyNodes=$root/SET,
/// HierarchyQualifier='Q',NodeProperty='P'[,Levels=n][,ExpandLevels=…])`.
#[derive(Debug, Clone, PartialEq)]
pub struct TopLevels {
    /// The set after `$root/`.
    pub nodes: String,
    /// The hierarchy's qualifier.
    pub qualifier: String,
    /// The node property (the key).
    pub node_property: String,
    /// How many levels from the roots; `None`: all.
    pub levels: Option<u64>,
    /// Nodes expanded (or collapsed) beyond `levels`, in order.
    pub expand_levels: Vec<ExpandLevel>,
}

/// One entry of `ExpandLevels`: `{"NodeID": …, "Levels": n}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandLevel {
    /// The node's value (a JSON string or number).
    pub node: serde_json::Value,
    /// Levels shown below it: 0 collapses it, `None` shows all.
    pub levels: Option<u64>,
}

/// Which way a [`Related`] transformation looks from the nodes it picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `descendants`: the nodes below.
    Descendants,
    /// `ancestors`: the nodes above.
    Ancestors,
}

/// `descendants($root/SET,Q,P,sequence[,n][,keep start])` or the same with
/// `ancestors`.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    /// Below or above.
    pub direction: Direction,
    /// The set after `$root/`.
    pub nodes: String,
    /// The hierarchy's qualifier.
    pub qualifier: String,
    /// The node property (the key).
    pub node_property: String,
    /// The `filter` and `search` steps that pick the start nodes.
    pub start: Apply,
    /// How many levels away at most; `None`: all.
    pub distance: Option<u64>,
    /// Whether the start nodes are kept (`keep start`).
    pub keep_start: bool,
}

/// One aggregated value: what, and its alias.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    /// The value.
    pub expr: AggregateExpr,
    /// The property it becomes in the result.
    pub alias: String,
}

/// What an aggregate computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AggregateExpr {
    /// `$count`: the number of rows.
    Count,
    /// `path with method`.
    Method {
        /// The property aggregated.
        path: Path,
        /// How.
        method: Method,
    },
}

/// The standard aggregation methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `sum`.
    Sum,
    /// `min`.
    Min,
    /// `max`.
    Max,
    /// `average`.
    Average,
    /// `countdistinct`.
    CountDistinct,
}

impl Method {
    /// The method's name in `$apply`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Min => "min",
            Self::Max => "max",
            Self::Average => "average",
            Self::CountDistinct => "countdistinct",
        }
    }
}

/// Whether `name` can be used in URLs and `$filter` as it is.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
