//! Rust source read as text: the code without its comments and string
//! literals, the string literals themselves, `use` trees, paths written
//! inline, the items a file defines and the routes it declares. Enough of
//! Rust's lexical rules to read this repository, not a parser.

/// A source file taken apart.
#[derive(Debug, Default, Clone)]
pub struct Source {
    /// The text with comments and string and char literals blanked out
    /// (same length, same lines).
    pub code: String,
    /// Each string literal's contents, with the line it starts on.
    pub strings: Vec<(usize, String)>,
}

impl Source {
    /// `text` taken apart.
    pub fn of(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut code = String::with_capacity(text.len());
        let mut strings = Vec::new();
        let mut line = 1;
        let mut i = 0;
        let blank = |s: &str, code: &mut String| {
            for c in s.chars() {
                code.push(if c == '\n' { '\n' } else { ' ' });
            }
        };
        while i < bytes.len() {
            let rest = &text[i..];
            if rest.starts_with("//") {
                let end = rest.find('\n').unwrap_or(rest.len());
                blank(&rest[..end], &mut code);
                i += end;
                continue;
            }
            if rest.starts_with("/*") {
                let mut depth = 0;
                let mut j = 0;
                let rb = rest.as_bytes();
                while j < rb.len() {
                    if rb[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if rb[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                let j = j.min(rest.len());
                line += rest[..j].matches('\n').count();
                blank(&rest[..j], &mut code);
                i += j;
                continue;
            }
            if let Some((len, contents)) = raw_string(rest) {
                strings.push((line, contents.to_owned()));
                line += rest[..len].matches('\n').count();
                blank(&rest[..len], &mut code);
                i += len;
                continue;
            }
            if rest.starts_with('"') || rest.starts_with("b\"") {
                let start = if rest.starts_with('"') { 1 } else { 2 };
                let rb = rest.as_bytes();
                let mut j = start;
                while j < rb.len() && rb[j] != b'"' {
                    j += if rb[j] == b'\\' { 2 } else { 1 };
                }
                let j = (j + 1).min(rest.len());
                let contents = &rest[start..j.saturating_sub(1).max(start)];
                strings.push((line, contents.to_owned()));
                line += rest[..j].matches('\n').count();
                blank(&rest[..j], &mut code);
                i += j;
                continue;
            }
            if let Some(len) = char_literal(rest) {
                blank(&rest[..len], &mut code);
                i += len;
                continue;
            }
            let c = rest.chars().next().unwrap_or(' ');
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += c.len_utf8();
        }
        Self { code, strings }
    }

    /// The 1-based line of byte offset `at` of the code.
    pub fn line_of(&self, at: usize) -> usize {
        self.code[..at.min(self.code.len())].matches('\n').count() + 1
    }
}

/// A raw string literal at the start of `s` (`r"…"`, `r#"…"#`, `br"…"`):
/// its length and contents.
fn raw_string(s: &str) -> Option<(usize, &str)> {
    let after_prefix = s.strip_prefix("br").or_else(|| s.strip_prefix('r'))?;
    let prefix = s.len() - after_prefix.len();
    let hashes = after_prefix.bytes().take_while(|b| *b == b'#').count();
    let body = after_prefix[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some((prefix + hashes + 1 + end + close.len(), &body[..end]))
}

/// A char literal at the start of `s` (`'a'`, `'\n'`, `'\u{1F600}'`), not a
/// lifetime: its length.
fn char_literal(s: &str) -> Option<usize> {
    let body = s.strip_prefix('\'')?;
    if let Some(escaped) = body.strip_prefix('\\') {
        let end = escaped.find('\'')?;
        return (end <= 10).then_some(end + 3);
    }
    let c = body.chars().next()?;
    body[c.len_utf8()..]
        .starts_with('\'')
        .then_some(c.len_utf8() + 2)
}

/// The offset of the bracket that closes the one at `open` in `code`
/// (`(`, `[` or `{`, counting only its own kind).
pub fn closing(code: &str, open: usize) -> Option<usize> {
    let opener = code[open..].chars().next()?;
    let closer = match opener {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        if c == opener {
            depth += 1;
        } else if c == closer {
            depth -= 1;
            if depth == 0 {
                return Some(open + i);
            }
        }
    }
    None
}

/// Whether `c` may be part of an identifier.
pub fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The offsets at which the word `word` stands alone in `code`.
pub fn words<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(word).filter_map(move |(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        let alone = !before.is_some_and(ident_char) && !after.is_some_and(ident_char);
        alone.then_some(at)
    })
}

/// One `use` path, expanded from its tree: its segments (the last may be
/// `*`), whether the `use` is a re-export (`pub`), and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsePath {
    /// The path's segments; `self` at the end of a group is dropped.
    pub segments: Vec<String>,
    /// The name it brings into scope (the last segment, or its `as` name).
    pub alias: String,
    /// `pub use` (of any visibility but private).
    pub public: bool,
    /// The line of the `use`.
    pub line: usize,
    /// Its byte offset in the code.
    pub at: usize,
}

/// Every `use` of `source`, each path of its tree.
pub fn uses(source: &Source) -> Vec<UsePath> {
    let code = &source.code;
    let mut found = Vec::new();
    for at in words(code, "use") {
        let before = code[..at].trim_end();
        let public = before.ends_with("pub")
            || before.ends_with(')') && {
                let open = before.rfind('(').unwrap_or(0);
                before[..open].trim_end().ends_with("pub")
            };
        let prefix_ok = before.is_empty()
            || before.ends_with(';')
            || before.ends_with('{')
            || before.ends_with('}')
            || before.ends_with(']')
            || public;
        if !prefix_ok {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            continue;
        };
        let tree = code[at + 3..at + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let line = source.line_of(at);
        let mut paths = Vec::new();
        expand(&tree, &mut Vec::new(), &mut paths);
        for (segments, alias) in paths {
            found.push(UsePath {
                segments,
                alias,
                public,
                line,
                at,
            });
        }
    }
    found
}

/// Expands the use tree `tree` under `prefix` into paths and their aliases.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth = prefix.len();
        prefix.extend(
            head.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        for part in split_top(body) {
            expand(part, prefix, out);
        }
        prefix.truncate(depth);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path, alias.trim()),
        None => (tree, ""),
    };
    let mut segments: Vec<String> = prefix.clone();
    segments.extend(
        path.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    if segments.last().is_some_and(|s| s == "self") {
        segments.pop();
    }
    if segments.is_empty() {
        return;
    }
    let alias = if alias.is_empty() {
        segments.last().cloned().unwrap_or_default()
    } else {
        alias.to_owned()
    };
    out.push((segments, alias));
}

/// `body` split at its top-level commas.
fn split_top(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Every path written inline that starts at `crate`, `super` or `self`
/// (outside `use`, too), with its line and byte offset.
pub fn inline_paths(source: &Source) -> Vec<(usize, usize, Vec<String>)> {
    let code = &source.code;
    let mut found = Vec::new();
    for start in ["crate", "super", "self"] {
        for at in words(code, start) {
            if !code[at + start.len()..].starts_with("::") {
                continue;
            }
            let mut segments = Vec::new();
            let mut rest = &code[at..];
            loop {
                let len = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
                if len == 0 {
                    break;
                }
                segments.push(rest[..len].to_owned());
                rest = &rest[len..];
                match rest.strip_prefix("::") {
                    Some(next) if next.starts_with(|c: char| ident_char(c)) => rest = next,
                    _ => break,
                }
            }
            found.push((source.line_of(at), at, segments));
        }
    }
    found
}

/// The names of the items `source` defines at any depth (functions,
/// types, traits, constants, statics, macros, modules).
pub fn definitions(source: &Source) -> Vec<String> {
    let code = &source.code;
    let mut names = Vec::new();
    for keyword in [
        "fn", "struct", "enum", "trait", "const", "static", "type", "mod", "union",
    ] {
        for at in words(code, keyword) {
            let rest = code[at + keyword.len()..].trim_start();
            let len = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
            if len > 0 {
                names.push(rest[..len].to_owned());
            }
        }
    }
    for at in code.match_indices("macro_rules!").map(|(at, _)| at) {
        let rest = code[at + "macro_rules!".len()..].trim_start();
        let len = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
        names.push(rest[..len].to_owned());
    }
    names
}

/// A route a file declares: its method, its line and its handler's
/// parameter list (as code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// `get`, `post`, …
    pub method: String,
    /// The line of its attribute.
    pub line: usize,
    /// The handler's name.
    pub handler: String,
    /// The handler's parameters, as written.
    pub parameters: String,
}

/// The routes `source` declares (`#[get(…)]`, `#[post(…)]`, … on a
/// function).
pub fn routes(source: &Source) -> Vec<Route> {
    let code = &source.code;
    let mut found = Vec::new();
    for method in ["get", "post", "put", "patch", "delete"] {
        let attribute = format!("#[{method}(");
        for (at, _) in code.match_indices(&attribute) {
            let Some(fn_at) = words(&code[at..], "fn").next().map(|f| at + f) else {
                continue;
            };
            let rest = code[fn_at + 2..].trim_start();
            let len = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
            let handler = rest[..len].to_owned();
            let open = code[fn_at..].find('(').map(|o| fn_at + o);
            let parameters = open
                .and_then(|open| closing(code, open).map(|close| code[open + 1..close].to_owned()))
                .unwrap_or_default();
            found.push(Route {
                method: method.to_owned(),
                line: source.line_of(at),
                handler,
                parameters,
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_strings_are_blanked_and_strings_kept() {
        let source = Source::of("let a = \"x // y\"; // crate::z\n/* crate::w */ r#\"q\"#; 'c';");
        assert!(!source.code.contains("crate::z"));
        assert!(!source.code.contains("crate::w"));
        assert_eq!(
            source.strings,
            vec![(1, "x // y".to_owned()), (2, "q".to_owned())]
        );
        assert_eq!(source.code.lines().count(), 2);
    }

    #[test]
    fn use_trees_expand_into_paths() {
        let source = Source::of(
            "use crate::a::{b, c::{D, E as F}, self};\npub(crate) use super::g::*;\nfn f() { crate::h::i(); }",
        );
        let paths: Vec<(Vec<String>, String, bool)> = uses(&source)
            .into_iter()
            .map(|u| (u.segments, u.alias, u.public))
            .collect();
        let seg = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            paths,
            vec![
                (seg("crate::a::b"), "b".into(), false),
                (seg("crate::a::c::D"), "D".into(), false),
                (seg("crate::a::c::E"), "F".into(), false),
                (seg("crate::a"), "a".into(), false),
                (seg("super::g::*"), "*".into(), true),
            ]
        );
        let inline = inline_paths(&source);
        assert!(
            inline
                .iter()
                .any(|(line, _, s)| *line == 3 && *s == seg("crate::h::i")),
            "{inline:?}"
        );
    }

    #[test]
    fn routes_are_found_with_their_parameters() {
        let source = Source::of(
            "#[post(\"/x\", data = \"<b>\")]\npub async fn submit(_o: SameOrigin, b: Json<X>) -> Y {}",
        );
        let routes = routes(&source);
        assert_eq!(routes.len(), 1);
        assert_eq!(routes[0].handler, "submit");
        assert!(routes[0].parameters.contains("SameOrigin"));
    }
}
