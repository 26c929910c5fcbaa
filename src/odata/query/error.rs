//! The one error of the OData parser: which option failed, where, and why.
//! Positions let a client find the mistake in what it sent; the option name
//! becomes the `target` of the OData error body.

/// A query string the parser refused.
///
/// `option` is the query option at fault with its `$` (`"$filter"`); errors
/// inside `$expand` name `"$expand"` and give the position within the whole
/// `$expand` value. An empty `option` means the query string as a whole (for
/// example when it is too long). `position` is the 0-based character offset
/// into the option's percent-decoded value.
///
/// ```
/// let err = gatehouse::odata::parse_query("$top=-1").unwrap_err();
/// assert_eq!(err.option, "$top");
/// assert_eq!(err.position, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option}: {message} (at position {position})")]
#[non_exhaustive]
pub struct ParseError {
    /// The query option at fault, such as `$top`.
    pub option: String,
    /// Character offset into the option's decoded value.
    pub position: usize,
    /// What is wrong, for a human.
    pub message: String,
}

impl ParseError {
    /// An error in `option` at byte offset `position` (converted to
    /// characters by the public entry points).
    pub(crate) fn new(option: &str, position: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            option: option.to_owned(),
            position,
            message: message.into(),
        }
    }

    /// Re-labels an error from a value nested at byte `offset` of `option`'s
    /// value, prefixing the message with `context`.
    pub(crate) fn nested(mut self, option: &str, offset: usize, context: &str) -> ParseError {
        self.position += offset;
        if !context.is_empty() {
            self.message = format!("{context}: {}", self.message);
        }
        self.option = option.to_owned();
        self
    }

    /// Converts `position` from a byte offset in `value` to a character offset.
    pub(crate) fn in_chars(mut self, value: &str) -> ParseError {
        self.position = value
            .char_indices()
            .take_while(|(i, _)| *i < self.position)
            .count();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_option_and_position() {
        let e = ParseError::new("$filter", 4, "expected an operand");
        assert_eq!(
            e.to_string(),
            "$filter: expected an operand (at position 4)"
        );
    }

    #[test]
    fn nested_errors_take_the_outer_option_and_shift_position() {
        let e = ParseError::new("$filter", 2, "bad").nested("$expand", 10, "in $filter of 'x'");
        assert_eq!(e.option, "$expand");
        assert_eq!(e.position, 12);
        assert_eq!(e.message, "in $filter of 'x': bad");
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        let e = ParseError::new("$filter", 5, "bad").in_chars("'é' x");
        assert_eq!(e.position, 4);
    }
}
