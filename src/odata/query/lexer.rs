//! Splits an option value into tokens: identifiers, punctuation and fully
//! decoded literals (numbers, strings, dates, times, GUIDs). Each token knows
//! where it starts and whether whitespace came before it, because OData makes
//! spacing significant around operators.

use crate::odata::query::error::ParseError;
use crate::odata::query::syntax::{Guid, Literal};

/// The kinds of token the parsers see.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// An identifier or keyword (`name`, `eq`, `null`, `contains`).
    Ident(String),
    /// A literal other than `null`, `true` and `false` (which are identifiers
    /// here, keywords to the parser).
    Literal(Literal),
    /// `(`
    Open,
    /// `)`
    Close,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `/`
    Slash,
    /// `-` not followed by a digit: negation.
    Minus,
    /// `*`
    Star,
    /// The end of the input.
    End,
}

/// A token and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Byte offset of its first character.
    pub start: usize,
    /// Whether a space or tab came right before it.
    pub space_before: bool,
}

/// Splits `input` into tokens, ending with [`TokenKind::End`]; errors name `option`.
pub(crate) fn tokenize(input: &str, option: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        src: input,
        bytes: input.as_bytes(),
        pos: 0,
        option,
    };
    let mut tokens = Vec::new();
    loop {
        let mut space_before = false;
        while matches!(lexer.peek(0), Some(b' ' | b'\t')) {
            lexer.pos += 1;
            space_before = true;
        }
        let start = lexer.pos;
        let kind = lexer.next_kind()?;
        let done = kind == TokenKind::End;
        tokens.push(Token {
            kind,
            start,
            space_before,
        });
        if done {
            return Ok(tokens);
        }
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    option: &'a str,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn error(&self, at: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(self.option, at, message)
    }

    fn next_kind(&mut self) -> Result<TokenKind, ParseError> {
        let Some(b) = self.peek(0) else {
            return Ok(TokenKind::End);
        };
        let single = match b {
            b'(' => Some(TokenKind::Open),
            b')' => Some(TokenKind::Close),
            b',' => Some(TokenKind::Comma),
            b':' => Some(TokenKind::Colon),
            b'/' => Some(TokenKind::Slash),
            b'*' => Some(TokenKind::Star),
            b'-' if !self.peek(1).is_some_and(|d| d.is_ascii_digit()) => Some(TokenKind::Minus),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return Ok(kind);
        }
        if b == b'\'' {
            return self
                .string()
                .map(|s| TokenKind::Literal(Literal::String(s)));
        }
        if let Some(guid) = self.guid() {
            return Ok(TokenKind::Literal(Literal::Guid(guid)));
        }
        if b.is_ascii_digit() && self.digits_ahead() == 4 && self.peek(4) == Some(b'-') {
            return self.date_or_datetime().map(TokenKind::Literal);
        }
        if b.is_ascii_digit() && self.digits_ahead() == 2 && self.peek(2) == Some(b':') {
            let start = self.pos;
            return self
                .time(start)
                .map(|t| TokenKind::Literal(Literal::TimeOfDay(t)));
        }
        if b.is_ascii_digit() || b == b'-' {
            return self.number().map(TokenKind::Literal);
        }
        if is_ident_start(b) {
            let start = self.pos;
            while self.peek(0).is_some_and(is_ident_char) {
                self.pos += 1;
            }
            return Ok(TokenKind::Ident(self.src[start..self.pos].to_owned()));
        }
        let c = self.src[self.pos..].chars().next().unwrap_or('?');
        Err(self.error(self.pos, format!("unexpected character '{c}'")))
    }

    fn digits_ahead(&self) -> usize {
        self.bytes[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    }

    /// A `'...'` string with `''` standing for one quote.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut chunk = self.pos;
        loop {
            match self.peek(0) {
                None => return Err(self.error(start, "unterminated string literal")),
                Some(b'\'') if self.peek(1) == Some(b'\'') => {
                    out.push_str(&self.src[chunk..=self.pos]);
                    self.pos += 2;
                    chunk = self.pos;
                }
                Some(b'\'') => {
                    out.push_str(&self.src[chunk..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// A GUID at the current position, consumed only if the whole pattern matches.
    fn guid(&mut self) -> Option<Guid> {
        const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
        let text = self.src.get(self.pos..self.pos + 36)?;
        if !text.is_ascii() {
            return None;
        }
        let bytes = text.as_bytes();
        let mut at = 0;
        let mut hex = String::with_capacity(32);
        for (i, len) in GROUPS.iter().enumerate() {
            if i > 0 {
                if bytes[at] != b'-' {
                    return None;
                }
                at += 1;
            }
            let group = &text[at..at + len];
            if !group.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            hex.push_str(group);
            at += len;
        }
        if self
            .bytes
            .get(self.pos + 36)
            .is_some_and(|&b| is_ident_char(b))
        {
            return None;
        }
        let value = u128::from_str_radix(&hex, 16).ok()?;
        self.pos += 36;
        Some(Guid(value))
    }

    /// Exactly `n` digits as a number, or an error naming `what`.
    fn fixed_digits(&mut self, n: usize, at: usize, what: &str) -> Result<u32, ParseError> {
        let text = self.src.get(self.pos..self.pos + n);
        match text {
            Some(t) if t.bytes().all(|b| b.is_ascii_digit()) => {
                self.pos += n;
                t.parse()
                    .map_err(|_| self.error(at, format!("invalid {what}")))
            }
            _ => Err(self.error(at, format!("invalid {what}: expected {n} digits"))),
        }
    }

    fn expect_byte(&mut self, b: u8, at: usize, what: &str) -> Result<(), ParseError> {
        if self.peek(0) == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(at, format!("invalid {what}: expected '{}'", b as char)))
        }
    }

    fn date_or_datetime(&mut self) -> Result<Literal, ParseError> {
        let start = self.pos;
        let year = self.fixed_digits(4, start, "date")?;
        self.expect_byte(b'-', start, "date")?;
        let month = self.fixed_digits(2, start, "date")?;
        self.expect_byte(b'-', start, "date")?;
        let day = self.fixed_digits(2, start, "date")?;
        let date = u8::try_from(month)
            .ok()
            .and_then(|m| time::Month::try_from(m).ok())
            .and_then(|m| {
                let day = u8::try_from(day).ok()?;
                time::Date::from_calendar_date(year as i32, m, day).ok()
            })
            .ok_or_else(|| self.error(start, "invalid date: no such day"))?;
        if self.peek(0) != Some(b'T') {
            if self.peek(0).is_some_and(is_ident_char) {
                return Err(self.error(start, "invalid date"));
            }
            return Ok(Literal::Date(date));
        }
        self.pos += 1;
        let time = self.time(start)?;
        let offset = match self.peek(0) {
            Some(b'Z') => {
                self.pos += 1;
                time::UtcOffset::UTC
            }
            Some(sign @ (b'+' | b'-')) => {
                self.pos += 1;
                let hours = self.fixed_digits(2, start, "offset")?;
                self.expect_byte(b':', start, "offset")?;
                let minutes = self.fixed_digits(2, start, "offset")?;
                let factor = if sign == b'-' { -1 } else { 1 };
                let (h, m) = (hours as i8, minutes as i8);
                if hours > 23 || minutes > 59 {
                    return Err(self.error(start, "invalid offset"));
                }
                time::UtcOffset::from_hms(factor * h, factor * m, 0)
                    .map_err(|_| self.error(start, "invalid offset"))?
            }
            Some(b' ') if self.peek(1).is_some_and(|b| b.is_ascii_digit()) => {
                return Err(self.error(
                    start,
                    "date-time offset needs '+', which must be sent as %2B in a query string",
                ))
            }
            _ => return Err(self.error(start, "date-time needs 'Z' or an offset like +01:00")),
        };
        if self.peek(0).is_some_and(is_ident_char) {
            return Err(self.error(start, "invalid date-time"));
        }
        Ok(Literal::DateTimeOffset(
            date.with_time(time).assume_offset(offset),
        ))
    }

    /// `HH:MM[:SS[.fraction]]`; errors point at `start`.
    fn time(&mut self, start: usize) -> Result<time::Time, ParseError> {
        let hour = self.fixed_digits(2, start, "time")?;
        self.expect_byte(b':', start, "time")?;
        let minute = self.fixed_digits(2, start, "time")?;
        let mut second = 0;
        let mut nanos = 0;
        if self.peek(0) == Some(b':') {
            self.pos += 1;
            second = self.fixed_digits(2, start, "time")?;
            if self.peek(0) == Some(b'.') {
                self.pos += 1;
                let digits = self.digits_ahead();
                if digits == 0 || digits > 12 {
                    return Err(self.error(start, "invalid time: 1 to 12 fractional digits"));
                }
                let frac = &self.src[self.pos..self.pos + digits.min(9)];
                let scale = 10u32.pow(9 - frac.len() as u32);
                nanos = frac
                    .parse::<u32>()
                    .map_err(|_| self.error(start, "invalid time"))?
                    * scale;
                self.pos += digits;
            }
        }
        if self
            .peek(0)
            .is_some_and(|b| is_ident_char(b) && b != b'T' && b != b'Z')
        {
            return Err(self.error(start, "invalid time"));
        }
        let (h, m, s) = (hour as u8, minute as u8, second as u8);
        time::Time::from_hms_nano(h, m, s, nanos)
            .map_err(|_| self.error(start, "invalid time: out of range"))
    }

    /// `[-]digits[.digits][(e|E)[+|-]digits]`.
    fn number(&mut self) -> Result<Literal, ParseError> {
        let start = self.pos;
        if self.peek(0) == Some(b'-') {
            self.pos += 1;
        }
        self.pos += self.digits_ahead();
        let mut decimal = false;
        let mut exponent = false;
        if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|b| b.is_ascii_digit()) {
            decimal = true;
            self.pos += 1;
            self.pos += self.digits_ahead();
        }
        if matches!(self.peek(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek(1), Some(b'+' | b'-')));
            if self.peek(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                exponent = true;
                self.pos += 1 + sign;
                self.pos += self.digits_ahead();
            }
        }
        if self.peek(0).is_some_and(|b| is_ident_char(b) || b == b'.') {
            return Err(self.error(start, "malformed number"));
        }
        let text = &self.src[start..self.pos];
        if exponent {
            return match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Literal::Double(v)),
                _ => Err(self.error(start, "number out of range")),
            };
        }
        if decimal {
            return Ok(Literal::Decimal(text.to_owned()));
        }
        Ok(text
            .parse::<i64>()
            .map(Literal::Int)
            .unwrap_or_else(|_| Literal::Decimal(text.to_owned())))
    }
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
