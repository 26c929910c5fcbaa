//! The built-in functions a `$filter` may call, with their names and the
//! number of arguments each accepts. The parser refuses any other name and
//! any call with the wrong number of arguments.

/// The built-in functions `$filter` may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Function {
    /// `contains(string, substring)`
    Contains,
    /// `startswith(string, prefix)`
    StartsWith,
    /// `endswith(string, suffix)`
    EndsWith,
    /// `length(string)`
    Length,
    /// `indexof(string, substring)`
    IndexOf,
    /// `substring(string, start[, length])`
    Substring,
    /// `tolower(string)`
    ToLower,
    /// `toupper(string)`
    ToUpper,
    /// `trim(string)`
    Trim,
    /// `concat(a, b)`
    Concat,
    /// `year(date)`
    Year,
    /// `month(date)`
    Month,
    /// `day(date)`
    Day,
    /// `hour(time)`
    Hour,
    /// `minute(time)`
    Minute,
    /// `second(time)`
    Second,
    /// `date(datetimeoffset)`
    Date,
    /// `time(datetimeoffset)`
    Time,
    /// `now()`
    Now,
    /// `round(number)`
    Round,
    /// `floor(number)`
    Floor,
    /// `ceiling(number)`
    Ceiling,
}

impl Function {
    /// Every function.
    pub(crate) const ALL: [Function; 22] = [
        Function::Contains,
        Function::StartsWith,
        Function::EndsWith,
        Function::Length,
        Function::IndexOf,
        Function::Substring,
        Function::ToLower,
        Function::ToUpper,
        Function::Trim,
        Function::Concat,
        Function::Year,
        Function::Month,
        Function::Day,
        Function::Hour,
        Function::Minute,
        Function::Second,
        Function::Date,
        Function::Time,
        Function::Now,
        Function::Round,
        Function::Floor,
        Function::Ceiling,
    ];

    /// The function's name in OData syntax.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Function::Contains => "contains",
            Function::StartsWith => "startswith",
            Function::EndsWith => "endswith",
            Function::Length => "length",
            Function::IndexOf => "indexof",
            Function::Substring => "substring",
            Function::ToLower => "tolower",
            Function::ToUpper => "toupper",
            Function::Trim => "trim",
            Function::Concat => "concat",
            Function::Year => "year",
            Function::Month => "month",
            Function::Day => "day",
            Function::Hour => "hour",
            Function::Minute => "minute",
            Function::Second => "second",
            Function::Date => "date",
            Function::Time => "time",
            Function::Now => "now",
            Function::Round => "round",
            Function::Floor => "floor",
            Function::Ceiling => "ceiling",
        }
    }

    /// The function called `name` (case-sensitive), if any.
    pub(crate) fn from_name(name: &str) -> Option<Function> {
        Function::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The smallest and largest number of arguments the function takes.
    pub(crate) fn arity(self) -> (usize, usize) {
        match self {
            Function::Now => (0, 0),
            Function::Contains
            | Function::StartsWith
            | Function::EndsWith
            | Function::IndexOf
            | Function::Concat => (2, 2),
            Function::Substring => (2, 3),
            _ => (1, 1),
        }
    }
}
