//! The `$search` parser: words, `"quoted phrases"` (with `\"` and `\\`
//! escapes), upper-case `AND`, `OR` and `NOT`, juxtaposition as `AND`, and
//! parentheses. `NOT` binds tightest, then `AND`, then `OR`.

use crate::odata::query::error::ParseError;
use crate::odata::query::filter::{MAX_NESTING, MAX_TREE_HEIGHT};
use crate::odata::query::syntax::SearchExpr;

/// Parses a `$search` expression on its own; errors name `$search` and give
/// the character position of the fault.
///
/// ```
/// use gatehouse::odata::{parse_search, SearchExpr};
/// let e = parse_search("blue NOT \"sky high\"").unwrap();
/// assert_eq!(e.to_string(), "blue AND NOT \"sky high\"");
/// ```
#[cfg(any(test, feature = "internals"))]
pub fn parse_search(input: &str) -> Result<SearchExpr, ParseError> {
    parse_search_expr(input, "$search").map_err(|e| e.in_chars(input))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    And,
    Or,
    Not,
    Word(String),
    Phrase(String),
    End,
}

/// Parses `$search` text; errors name `option` and carry byte positions.
pub(crate) fn parse_search_expr(input: &str, option: &str) -> Result<SearchExpr, ParseError> {
    let tokens = tokenize(input, option)?;
    let mut p = Parser {
        tokens,
        at: 0,
        depth: 0,
        option,
    };
    let (expr, _) = p.or()?;
    let (tok, at) = p.peek();
    if tok != Tok::End {
        return Err(ParseError::new(option, at, "unexpected ')'"));
    }
    Ok(expr)
}

fn tokenize(input: &str, option: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let mut out = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            ' ' | '\t' => {}
            '(' => out.push((Tok::Open, at)),
            ')' => out.push((Tok::Close, at)),
            ';' => {
                let msg = "';' separates options; write it inside a \"quoted phrase\"";
                return Err(ParseError::new(option, at, msg));
            }
            '"' => {
                let mut phrase = String::new();
                loop {
                    match chars.next() {
                        None => {
                            return Err(ParseError::new(option, at, "unterminated phrase"));
                        }
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, e @ ('"' | '\\'))) => phrase.push(e),
                            _ => {
                                let msg = "only \\\" and \\\\ may be escaped in a phrase";
                                return Err(ParseError::new(option, at, msg));
                            }
                        },
                        Some((_, c)) => phrase.push(c),
                    }
                }
                if phrase.trim().is_empty() {
                    return Err(ParseError::new(option, at, "empty phrase"));
                }
                out.push((Tok::Phrase(phrase), at));
            }
            _ => {
                let mut word = String::from(c);
                while let Some(&(_, c)) = chars.peek() {
                    if matches!(c, ' ' | '\t' | '(' | ')' | '"' | ';') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                let tok = match word.as_str() {
                    "AND" => Tok::And,
                    "OR" => Tok::Or,
                    "NOT" => Tok::Not,
                    _ => Tok::Word(word),
                };
                out.push((tok, at));
            }
        }
    }
    out.push((Tok::End, input.len()));
    Ok(out)
}

/// An expression and the height of its tree.
type Sized = (SearchExpr, usize);

struct Parser<'a> {
    tokens: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
    option: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> (Tok, usize) {
        let last = self.tokens.len() - 1;
        self.tokens[self.at.min(last)].clone()
    }

    fn advance(&mut self) -> (Tok, usize) {
        let tok = self.peek();
        if tok.0 != Tok::End {
            self.at += 1;
        }
        tok
    }

    fn error(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(self.option, at, message)
    }

    fn enter(&mut self, at: usize) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(
                at,
                format!("search is nested too deeply (limit {MAX_NESTING})"),
            ));
        }
        Ok(())
    }

    fn grown(&self, height: usize, at: usize) -> Result<usize, ParseError> {
        if height > MAX_TREE_HEIGHT {
            let msg = format!("search has too many terms (limit {MAX_TREE_HEIGHT})");
            return Err(self.error(at, msg));
        }
        Ok(height)
    }

    fn or(&mut self) -> Result<Sized, ParseError> {
        let (mut left, mut height) = self.and()?;
        while let (Tok::Or, at) = self.peek() {
            self.advance();
            let (right, h) = self.and()?;
            height = self.grown(height.max(h) + 1, at)?;
            left = SearchExpr::Or(Box::new(left), Box::new(right));
        }
        Ok((left, height))
    }

    fn and(&mut self) -> Result<Sized, ParseError> {
        let (mut left, mut height) = self.not()?;
        loop {
            let (tok, at) = self.peek();
            match tok {
                Tok::And => {
                    self.advance();
                }
                Tok::Open | Tok::Not | Tok::Word(_) | Tok::Phrase(_) => {}
                _ => return Ok((left, height)),
            }
            let (right, h) = self.not()?;
            height = self.grown(height.max(h) + 1, at)?;
            left = SearchExpr::And(Box::new(left), Box::new(right));
        }
    }

    fn not(&mut self) -> Result<Sized, ParseError> {
        let (tok, at) = self.advance();
        match tok {
            Tok::Not => {
                self.enter(at)?;
                let (inner, h) = self.not()?;
                self.depth -= 1;
                Ok((SearchExpr::Not(Box::new(inner)), self.grown(h + 1, at)?))
            }
            Tok::Open => {
                self.enter(at)?;
                let inner = self.or()?;
                self.depth -= 1;
                match self.advance() {
                    (Tok::Close, _) => Ok(inner),
                    (_, at) => Err(self.error(at, "expected ')'")),
                }
            }
            Tok::Word(w) => Ok((SearchExpr::Word(w), 1)),
            Tok::Phrase(p) => Ok((SearchExpr::Phrase(p), 1)),
            Tok::End => Err(self.error(at, "expected a search term")),
            Tok::Close => Err(self.error(at, "expected a search term, found ')'")),
            Tok::And | Tok::Or => Err(self.error(at, "expected a search term before AND/OR")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> SearchExpr {
        parse_search(s).expect("parses")
    }

    fn word(w: &str) -> Box<SearchExpr> {
        Box::new(SearchExpr::Word(w.into()))
    }

    #[test]
    fn words_phrases_and_implicit_and() {
        assert_eq!(parse("blue"), SearchExpr::Word("blue".into()));
        assert_eq!(
            parse("\"a \\\"b\\\" c\""),
            SearchExpr::Phrase("a \"b\" c".into())
        );
        assert_eq!(parse("a b"), SearchExpr::And(word("a"), word("b")));
        assert_eq!(parse("a AND b"), parse("a b"));
    }

    #[test]
    fn not_binds_tighter_than_and_tighter_than_or() {
        assert_eq!(parse("a OR b c").to_string(), "a OR b AND c");
        assert_eq!(
            parse("a OR b c"),
            SearchExpr::Or(word("a"), Box::new(SearchExpr::And(word("b"), word("c"))))
        );
        assert_eq!(
            parse("NOT a b"),
            SearchExpr::And(Box::new(SearchExpr::Not(word("a"))), word("b"))
        );
        assert_eq!(parse("(a OR b) c").to_string(), "(a OR b) AND c");
        assert_eq!(parse("NOT (a OR b)").to_string(), "NOT (a OR b)");
    }

    #[test]
    fn keywords_are_upper_case_only() {
        assert_eq!(
            parse("a or b"),
            SearchExpr::And(Box::new(SearchExpr::And(word("a"), word("or"))), word("b"))
        );
    }

    #[test]
    fn errors_are_located() {
        let cases = [
            ("", 0, "expected a search term"),
            ("a OR", 4, "expected a search term"),
            ("AND a", 0, "expected a search term before AND/OR"),
            ("(a", 2, "expected ')'"),
            ("a)", 1, "unexpected ')'"),
            ("x \"ab", 2, "unterminated phrase"),
            ("\"  \"", 0, "empty phrase"),
            (
                "a;b",
                1,
                "';' separates options; write it inside a \"quoted phrase\"",
            ),
            (
                "é \"a\\b\"",
                2,
                "only \\\" and \\\\ may be escaped in a phrase",
            ),
        ];
        for (input, position, message) in cases {
            let e = parse_search(input).expect_err(input);
            assert_eq!(e.option, "$search");
            assert_eq!(
                (e.position, e.message.as_str()),
                (position, message),
                "{input}"
            );
        }
    }

    #[test]
    fn nesting_and_length_are_bounded() {
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(parse_search(&deep)
            .expect_err("deep")
            .message
            .contains("nested"));
        let nots = "NOT ".repeat(100) + "a";
        assert!(parse_search(&nots)
            .expect_err("nots")
            .message
            .contains("nested"));
        let long = "a ".repeat(300);
        assert!(parse_search(&long)
            .expect_err("long")
            .message
            .contains("too many"));
    }
}
