//! The `$filter` expression parser: precedence climbing over the lexer's
//! tokens, producing an [`Expr`]. It enforces OData's spacing rules around
//! operators, checks function arities, and bounds both recursion depth and
//! tree height so a hostile expression can neither overflow the stack nor
//! produce a tree too deep for later steps to walk.

use crate::odata::query::error::ParseError;
use crate::odata::query::lexer::{tokenize, Token, TokenKind};
use crate::odata::query::syntax::{
    BinaryOp, Expr, Function, LambdaPredicate, Literal, Path, Quantifier, UnaryOp,
};

/// How deeply the parser may recurse (parentheses, operands, calls, lambdas).
pub const MAX_NESTING: usize = 64;
/// How tall the resulting tree may be, long `and`/`or` chains included.
pub const MAX_TREE_HEIGHT: usize = 256;
/// How many values an `in` list may hold.
pub const MAX_IN_LIST: usize = 1000;

/// Parses a `$filter` expression on its own.
///
/// Errors name `$filter` and give the character position of the fault.
///
/// ```
/// use gatehouse::odata::{parse_filter, BinaryOp, Expr};
/// let e = parse_filter("age gt 30 and organisation/name eq 'Acme'").unwrap();
/// assert!(matches!(e, Expr::Binary { op: BinaryOp::And, .. }));
/// let err = parse_filter("age gt").unwrap_err();
/// assert_eq!((err.option.as_str(), err.position), ("$filter", 6));
/// ```
pub fn parse_filter(input: &str) -> Result<Expr, ParseError> {
    parse_expr(input, "$filter").map_err(|e| e.in_chars(input))
}

/// Parses an expression; errors name `option` and carry byte positions.
pub(crate) fn parse_expr(input: &str, option: &str) -> Result<Expr, ParseError> {
    let tokens = tokenize(input, option)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
        option,
    };
    if parser.peek().kind == TokenKind::End {
        return Err(parser.error(0, "expected an expression"));
    }
    let (expr, _) = parser.binary(0)?;
    let tok = parser.peek();
    if tok.kind != TokenKind::End {
        let msg = format!("expected an operator, found {}", describe(&tok.kind));
        return Err(parser.error(tok.start, msg));
    }
    Ok(expr)
}

/// An expression and the height of its tree.
type Sized = (Expr, usize);

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
    option: &'a str,
}

fn describe(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Ident(w) => format!("'{w}'"),
        TokenKind::Literal(_) => "a literal".into(),
        TokenKind::Open => "'('".into(),
        TokenKind::Close => "')'".into(),
        TokenKind::Comma => "','".into(),
        TokenKind::Colon => "':'".into(),
        TokenKind::Slash => "'/'".into(),
        TokenKind::Minus => "'-'".into(),
        TokenKind::Star => "'*'".into(),
        TokenKind::End => "the end".into(),
    }
}

enum Operator {
    Binary(BinaryOp),
    In,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.at + ahead).min(last)]
    }

    fn advance(&mut self) -> Token {
        let tok = self.peek().clone();
        if tok.kind != TokenKind::End {
            self.at += 1;
        }
        tok
    }

    fn error(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(self.option, at, message)
    }

    /// Counts one level of recursion, refusing before the stack gets deep.
    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let at = self.peek().start;
            return Err(self.error(
                at,
                format!("expression is nested too deeply (limit {MAX_NESTING})"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn grown(&self, height: usize, at: usize) -> Result<usize, ParseError> {
        if height > MAX_TREE_HEIGHT {
            return Err(self.error(
                at,
                format!("expression is too long to nest (limit {MAX_TREE_HEIGHT} levels)"),
            ));
        }
        Ok(height)
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> Result<Token, ParseError> {
        let tok = self.advance();
        if tok.kind == kind {
            Ok(tok)
        } else {
            let msg = format!("expected {what}, found {}", describe(&tok.kind));
            Err(self.error(tok.start, msg))
        }
    }

    fn operator(&self) -> Option<Operator> {
        match &self.peek().kind {
            TokenKind::Ident(w) if w == "in" => Some(Operator::In),
            TokenKind::Ident(w) => BinaryOp::from_keyword(w).map(Operator::Binary),
            _ => None,
        }
    }

    /// Operators binding at least as tightly as `min`, left-associative.
    fn binary(&mut self, min: u8) -> Result<Sized, ParseError> {
        self.enter()?;
        let (mut left, mut height) = self.unary()?;
        while let Some(op) = self.operator() {
            let prec = match op {
                Operator::Binary(op) => op.precedence(),
                Operator::In => crate::odata::query::syntax::IN_PRECEDENCE,
            };
            if prec < min {
                break;
            }
            let tok = self.advance();
            let word = describe(&tok.kind);
            if !tok.space_before {
                return Err(self.error(tok.start, format!("{word} must be preceded by a space")));
            }
            match op {
                Operator::In => {
                    let (list, h) = self.list()?;
                    left = Expr::In {
                        operand: Box::new(left),
                        list,
                    };
                    height = self.grown(height.max(h) + 1, tok.start)?;
                }
                Operator::Binary(op) => {
                    let next = self.peek();
                    if !next.space_before && next.kind != TokenKind::End {
                        let at = self.peek().start;
                        return Err(self.error(at, format!("{word} must be followed by a space")));
                    }
                    let (right, h) = self.binary(prec + 1)?;
                    left = Expr::Binary {
                        op,
                        left: Box::new(left),
                        right: Box::new(right),
                    };
                    height = self.grown(height.max(h) + 1, tok.start)?;
                }
            }
        }
        self.leave();
        Ok((left, height))
    }

    /// `- operand`, `not operand`, or a primary expression.
    fn unary(&mut self) -> Result<Sized, ParseError> {
        let op = match &self.peek().kind {
            TokenKind::Minus => Some(UnaryOp::Neg),
            TokenKind::Ident(w) if w == "not" => {
                let next = self.peek_at(1);
                let operand_follows = next.space_before || next.kind == TokenKind::Open;
                (operand_follows || next.kind == TokenKind::End).then_some(UnaryOp::Not)
            }
            _ => None,
        };
        let Some(op) = op else {
            return self.primary();
        };
        let tok = self.advance();
        if op == UnaryOp::Not && self.peek().kind == TokenKind::End {
            return Err(self.error(self.peek().start, "expected an expression after 'not'"));
        }
        self.enter()?;
        let (operand, h) = self.unary()?;
        self.leave();
        let height = self.grown(h + 1, tok.start)?;
        let expr = Expr::Unary {
            op,
            operand: Box::new(operand),
        };
        Ok((expr, height))
    }

    fn primary(&mut self) -> Result<Sized, ParseError> {
        let tok = self.advance();
        match tok.kind {
            TokenKind::Literal(l) => Ok((Expr::Literal(l), 1)),
            TokenKind::Open => {
                let inner = self.binary(0)?;
                self.expect(TokenKind::Close, "')'")?;
                Ok(inner)
            }
            TokenKind::Ident(name) => match name.as_str() {
                "null" => Ok((Expr::Literal(Literal::Null), 1)),
                "true" => Ok((Expr::Literal(Literal::Boolean(true)), 1)),
                "false" => Ok((Expr::Literal(Literal::Boolean(false)), 1)),
                _ if self.peek().kind == TokenKind::Open && !self.peek().space_before => {
                    self.call(name, tok.start)
                }
                _ => self.path_or_lambda(name),
            },
            other => {
                let msg = format!("expected an expression, found {}", describe(&other));
                Err(self.error(tok.start, msg))
            }
        }
    }

    fn call(&mut self, name: String, start: usize) -> Result<Sized, ParseError> {
        let function = Function::from_name(&name)
            .ok_or_else(|| self.error(start, format!("unknown function '{name}'")))?;
        self.advance();
        self.enter()?;
        let (args, h) = self.items(")")?;
        self.leave();
        let (min, max) = function.arity();
        if args.len() < min || args.len() > max {
            let wanted = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            let msg = format!("{name}() takes {wanted} argument(s), got {}", args.len());
            return Err(self.error(start, msg));
        }
        let height = self.grown(h + 1, start)?;
        Ok((Expr::Call { function, args }, height))
    }

    /// Comma-separated expressions up to `)`; the `(` is already consumed.
    fn items(&mut self, closing: &str) -> Result<(Vec<Expr>, usize), ParseError> {
        let mut items = Vec::new();
        let mut height = 0;
        if self.peek().kind == TokenKind::Close {
            self.advance();
            return Ok((items, height));
        }
        loop {
            if items.len() >= MAX_IN_LIST {
                let at = self.peek().start;
                return Err(self.error(at, format!("list is longer than {MAX_IN_LIST} items")));
            }
            let (item, h) = self.binary(0)?;
            items.push(item);
            height = height.max(h);
            let tok = self.advance();
            match tok.kind {
                TokenKind::Comma => continue,
                TokenKind::Close => return Ok((items, height)),
                other => {
                    let msg = format!("expected ',' or {closing}, found {}", describe(&other));
                    return Err(self.error(tok.start, msg));
                }
            }
        }
    }

    /// The parenthesised list after `in`.
    fn list(&mut self) -> Result<(Vec<Expr>, usize), ParseError> {
        let open = self.expect(TokenKind::Open, "'(' after 'in'")?;
        self.enter()?;
        let (list, h) = self.items("')'")?;
        self.leave();
        if list.is_empty() {
            return Err(self.error(open.start, "the list after 'in' is empty"));
        }
        Ok((list, h))
    }

    fn path_or_lambda(&mut self, first: String) -> Result<Sized, ParseError> {
        let mut segments = vec![first];
        while self.peek().kind == TokenKind::Slash {
            let slash = self.advance();
            let tok = self.advance();
            if slash.space_before || tok.space_before {
                return Err(self.error(slash.start, "no spaces are allowed around '/'"));
            }
            let TokenKind::Ident(name) = tok.kind else {
                let msg = format!("expected a property name, found {}", describe(&tok.kind));
                return Err(self.error(tok.start, msg));
            };
            let quantifier = match name.as_str() {
                "any" => Some(Quantifier::Any),
                "all" => Some(Quantifier::All),
                _ => None,
            };
            match quantifier {
                Some(q) if self.peek().kind == TokenKind::Open && !self.peek().space_before => {
                    return self.lambda(Path(segments), q, tok.start);
                }
                _ => segments.push(name),
            }
        }
        Ok((Expr::Path(Path(segments)), 1))
    }

    fn lambda(
        &mut self,
        collection: Path,
        quantifier: Quantifier,
        start: usize,
    ) -> Result<Sized, ParseError> {
        self.advance();
        if self.peek().kind == TokenKind::Close {
            self.advance();
            if quantifier == Quantifier::All {
                return Err(self.error(start, "all() needs a variable and a predicate"));
            }
            let expr = Expr::Lambda {
                collection,
                quantifier,
                predicate: None,
            };
            return Ok((expr, 1));
        }
        let tok = self.advance();
        let TokenKind::Ident(variable) = tok.kind else {
            let msg = format!("expected a lambda variable, found {}", describe(&tok.kind));
            return Err(self.error(tok.start, msg));
        };
        self.expect(TokenKind::Colon, "':' after the lambda variable")?;
        self.enter()?;
        let (body, h) = self.binary(0)?;
        self.leave();
        self.expect(TokenKind::Close, "')'")?;
        let height = self.grown(h + 1, start)?;
        let predicate = Some(LambdaPredicate {
            variable,
            body: Box::new(body),
        });
        let expr = Expr::Lambda {
            collection,
            quantifier,
            predicate,
        };
        Ok((expr, height))
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
