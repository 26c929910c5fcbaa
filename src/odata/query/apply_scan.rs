//! The scanner `$apply`'s parsers share: which bytes of a value are
//! structure rather than quoted text, the parts between top-level
//! separators, and the parenthesis that closes another.

/// Which bytes of `text` are structure, not quoted text: `filter`'s
/// strings quote with `'` (doubled inside), `search`'s phrases with `"`
/// (escaped by `\`), each only inside its own transformation.
fn structural(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut mask = vec![false; bytes.len()];
    // For each open parenthesis: whether it is inside `search(...)`.
    let mut open: Vec<bool> = Vec::new();
    let mut quote: Option<u8> = None;
    let mut pos = 0;
    while let Some(&b) = bytes.get(pos) {
        if let Some(q) = quote {
            if q == b'"' && b == b'\\' {
                pos += 1;
            } else if b == q {
                quote = None;
            }
            pos += 1;
            continue;
        }
        let in_search = open.last() == Some(&true);
        match b {
            b'\'' if !in_search => quote = Some(b),
            b'"' if in_search => quote = Some(b),
            b'(' => {
                let named = text[..pos].strip_suffix("search").is_some_and(|before| {
                    !before
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                open.push(in_search || named);
                mask[pos] = true;
            }
            b')' => {
                open.pop();
                mask[pos] = true;
            }
            _ => mask[pos] = true,
        }
        pos += 1;
    }
    mask
}

/// The parts of `text` between top-level `separator`s (outside quotes and
/// parentheses), with their byte offsets.
pub(super) fn split_top(text: &str, separator: u8) -> Vec<(usize, &str)> {
    let mask = structural(text);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (pos, &b) in text.as_bytes().iter().enumerate() {
        if !mask[pos] {
            continue;
        }
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ if b == separator && depth == 0 => {
                parts.push((start, &text[start..pos]));
                start = pos + 1;
            }
            _ => {}
        }
    }
    parts.push((start, &text[start..]));
    parts
}

/// The position of the `)` that closes the `(` at `open` in `text`,
/// skipping quoted text.
pub(super) fn closing(text: &str, open: usize) -> Option<usize> {
    let mask = structural(text);
    let mut depth = 0usize;
    for (pos, &b) in text.as_bytes().iter().enumerate().skip(open) {
        if !mask[pos] {
            continue;
        }
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(pos);
                }
            }
            _ => {}
        }
    }
    None
}
