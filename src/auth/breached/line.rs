//! One line of a Pwned Passwords download: `SHA1HEX:COUNT`, 40 hex digits in
//! either case, a colon and the number of breaches the hash was seen in.
//!
//! Downloads of the other kinds look alike and would import silently as
//! nonsense, so they are told apart and refused by name: NTLM hashes (32 hex
//! digits) and range responses' suffixes without their 5-digit prefix (35).

use std::fmt;

/// A parsed line: the password's SHA-1 and how often it was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The SHA-1 of the password, as bytes.
    pub sha1: [u8; 20],
    /// The number of times the password was seen in breaches.
    pub count: u64,
}

/// Why a line is not `SHA1HEX:COUNT`; its `Display` is the message the
/// import shows after the file name and line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// No `:` between the hash and the count.
    NoCount,
    /// 32 hex digits: a line of the NTLM download.
    Ntlm,
    /// 35 hex digits: a range response's suffix without its prefix.
    Suffix,
    /// Hex digits, but not 40 of them.
    Length(usize),
    /// Something other than a hex digit before the `:`.
    NotHex,
    /// The count is not a whole number that fits in 64 bits.
    Count,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::NoCount => f.write_str("expected `SHA1HEX:COUNT`, found no `:`"),
            LineError::Ntlm => f.write_str(
                "an NTLM hash (32 hex digits); import the SHA-1 download \
                 (`haveibeenpwned-downloader pwnedpasswords`, without `-n`)",
            ),
            LineError::Suffix => f.write_str(
                "a hash suffix without its 5-digit prefix (35 hex digits); import the \
                 whole hashes that `haveibeenpwned-downloader pwnedpasswords` writes",
            ),
            LineError::Length(n) => {
                write!(f, "expected a SHA-1 of 40 hex digits, found {n} hex digits")
            }
            LineError::NotHex => f.write_str("expected a SHA-1 of 40 hex digits before `:`"),
            LineError::Count => f.write_str("the count after `:` is not a whole number"),
        }
    }
}

/// The value of each hex digit (either case); 0xFF for any other byte.
const HEX: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Parses one line without its `\n`; a trailing `\r` is dropped. An empty
/// line is `Ok(None)` (a download may end with one).
pub fn parse_line(line: &[u8]) -> Result<Option<Entry>, LineError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Ok(None);
    }
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return Err(LineError::NoCount);
    };
    let (hash, count) = (&line[..colon], &line[colon + 1..]);
    if !hash.iter().all(|&b| HEX[usize::from(b)] != 0xFF) {
        return Err(LineError::NotHex);
    }
    match hash.len() {
        40 => {}
        32 => return Err(LineError::Ntlm),
        35 => return Err(LineError::Suffix),
        n => return Err(LineError::Length(n)),
    }
    let mut sha1 = [0; 20];
    for (byte, pair) in sha1.iter_mut().zip(hash.chunks_exact(2)) {
        *byte = (HEX[usize::from(pair[0])] << 4) | HEX[usize::from(pair[1])];
    }
    Ok(Some(Entry {
        sha1,
        count: parse_count(count)?,
    }))
}

fn parse_count(digits: &[u8]) -> Result<u64, LineError> {
    if digits.is_empty() {
        return Err(LineError::Count);
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return Err(LineError::Count);
        }
        n.checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
            .ok_or(LineError::Count)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD_SHA1: &str = "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8";

    fn sha1_of_password() -> [u8; 20] {
        hex::decode(PASSWORD_SHA1).unwrap().try_into().unwrap()
    }

    #[test]
    fn a_sha1_line_gives_the_hash_and_its_count() {
        let entry = parse_line(format!("{PASSWORD_SHA1}:52256179").as_bytes()).unwrap();
        assert_eq!(
            entry,
            Some(Entry {
                sha1: sha1_of_password(),
                count: 52_256_179
            })
        );
    }

    #[test]
    fn lower_case_and_a_carriage_return_read_the_same() {
        let lower = format!("{}:3\r", PASSWORD_SHA1.to_lowercase());
        assert_eq!(
            parse_line(lower.as_bytes()).unwrap().unwrap().sha1,
            sha1_of_password()
        );
    }

    #[test]
    fn an_empty_line_is_skipped() {
        assert_eq!(parse_line(b""), Ok(None));
        assert_eq!(parse_line(b"\r"), Ok(None));
    }

    #[test]
    fn ntlm_and_suffix_lines_are_refused_by_name() {
        let ntlm = "8846F7EAEE8FB117AD06BDD830B7586C:1";
        assert_eq!(parse_line(ntlm.as_bytes()), Err(LineError::Ntlm));
        assert!(LineError::Ntlm.to_string().contains("NTLM"));
        let suffix = format!("{}:1", &PASSWORD_SHA1[5..]);
        assert_eq!(parse_line(suffix.as_bytes()), Err(LineError::Suffix));
        assert!(LineError::Suffix.to_string().contains("prefix"));
    }

    #[test]
    fn malformed_lines_are_refused() {
        let cases = [
            (PASSWORD_SHA1.to_owned(), LineError::NoCount),
            ("5BAA61E4:1".to_owned(), LineError::Length(8)),
            (format!("{PASSWORD_SHA1}0:1"), LineError::Length(41)),
            (
                "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FDX:1".to_owned(),
                LineError::NotHex,
            ),
            (format!(" {PASSWORD_SHA1}:1"), LineError::NotHex),
            (format!("{PASSWORD_SHA1}:"), LineError::Count),
            (format!("{PASSWORD_SHA1}:-1"), LineError::Count),
            (format!("{PASSWORD_SHA1}:1 "), LineError::Count),
            (format!("{PASSWORD_SHA1}:1:2"), LineError::Count),
            (
                format!("{PASSWORD_SHA1}:18446744073709551616"),
                LineError::Count,
            ),
        ];
        for (line, error) in cases {
            assert_eq!(parse_line(line.as_bytes()), Err(error), "{line}");
        }
    }

    #[test]
    fn the_largest_count_fits() {
        let line = format!("{PASSWORD_SHA1}:18446744073709551615");
        assert_eq!(parse_line(line.as_bytes()).unwrap().unwrap().count, u64::MAX);
    }
}
