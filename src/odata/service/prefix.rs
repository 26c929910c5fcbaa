//! What opens each property in an entity's JSON, appended as one
//! fixed-size copy.

use super::values::write_str;

/// How many bytes a prefix may have to be appended as one fixed-size copy:
/// a property name of up to 28 plain characters.
const SHORT: usize = 32;

/// What precedes a property's value in an entity's JSON object, escaped
/// once per statement: `{"name":` for the first property, `,"name":` for
/// the others.
///
/// A page appends one per property per row. A short one is kept in a
/// fixed-size array and appended whole, then the padding cut off: a copy of
/// known size is a few stores, where a slice of unknown length is a call to
/// `memcpy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prefix {
    /// The bytes, padded to [`SHORT`], and how many of them are the prefix.
    Short([u8; SHORT], usize),
    /// A prefix longer than [`SHORT`] bytes.
    Long(Vec<u8>),
}

impl Prefix {
    /// The prefix of property `name`, the first of its object or not.
    pub fn new(name: &str, first: bool) -> Prefix {
        let mut bytes = vec![if first { b'{' } else { b',' }];
        write_str(&mut bytes, name);
        bytes.push(b':');
        let mut short = [0; SHORT];
        match short.get_mut(..bytes.len()) {
            Some(head) => {
                head.copy_from_slice(&bytes);
                Prefix::Short(short, bytes.len())
            }
            None => Prefix::Long(bytes),
        }
    }

    /// Appends the prefix to `out`.
    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Prefix::Short(padded, len) => {
                out.extend_from_slice(padded);
                out.truncate(out.len() - (SHORT - len));
            }
            Prefix::Long(bytes) => out.extend_from_slice(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Prefix;

    fn written(prefix: &Prefix) -> String {
        let mut out = b"[".to_vec();
        prefix.write(&mut out);
        prefix.write(&mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn a_prefix_is_its_name_as_a_json_string_then_a_colon() {
        assert_eq!(written(&Prefix::new("ID", true)), r#"[{"ID":{"ID":"#);
        assert_eq!(
            written(&Prefix::new("category", false)),
            r#"[,"category":,"category":"#
        );
        assert_eq!(
            written(&Prefix::new("say \"hé\"", false)),
            r#"[,"say \"hé\"":,"say \"hé\"":"#
        );
    }

    #[test]
    fn prefixes_of_every_length_around_the_short_width_are_written_whole() {
        for n in 25..=35 {
            let name = "n".repeat(n);
            let one = format!(",\"{name}\":");
            assert_eq!(
                written(&Prefix::new(&name, false)),
                format!("[{one}{one}"),
                "{n}"
            );
        }
    }
}
