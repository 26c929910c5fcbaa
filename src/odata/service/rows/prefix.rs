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
    /// The prefixes of properties named `names`, in order, as members of
    /// one JSON object, and what closes the objects left open after the
    /// last. A name with `/` (`category/name`, an aggregated row's group
    /// across a navigation) is a member of nested objects, one per
    /// navigation: names sharing navigations must come together.
    pub fn object<'a>(names: impl IntoIterator<Item = &'a str>) -> (Vec<Prefix>, Vec<u8>) {
        let mut open: Vec<&str> = Vec::new();
        let mut prefixes = Vec::new();
        // Whether the innermost open object has no member yet.
        let mut empty = true;
        for (i, name) in names.into_iter().enumerate() {
            let mut bytes = Vec::new();
            if i == 0 {
                bytes.push(b'{');
            }
            let segments: Vec<&str> = name.split('/').collect();
            let (leaf, navigations) = segments.split_last().unwrap_or((&"", &[]));
            let shared = open
                .iter()
                .zip(navigations)
                .take_while(|(a, b)| a == b)
                .count();
            while open.len() > shared {
                bytes.push(b'}');
                open.pop();
                empty = false;
            }
            for navigation in &navigations[shared..] {
                if !empty {
                    bytes.push(b',');
                }
                write_str(&mut bytes, navigation);
                bytes.extend_from_slice(b":{");
                open.push(navigation);
                empty = true;
            }
            if !empty {
                bytes.push(b',');
            }
            write_str(&mut bytes, leaf);
            bytes.push(b':');
            empty = false;
            prefixes.push(Prefix::raw(bytes));
        }
        (prefixes, vec![b'}'; open.len()])
    }

    fn raw(bytes: Vec<u8>) -> Prefix {
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

    /// The prefix of property `name`, the first of its object or not.
    fn new(name: &str, first: bool) -> Prefix {
        match first {
            true => Prefix::object([name]).0.remove(0),
            false => Prefix::object(["a", name]).0.remove(1),
        }
    }

    fn written(prefix: &Prefix) -> String {
        let mut out = b"[".to_vec();
        prefix.write(&mut out);
        prefix.write(&mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn a_prefix_is_its_name_as_a_json_string_then_a_colon() {
        assert_eq!(written(&new("ID", true)), r#"[{"ID":{"ID":"#);
        assert_eq!(
            written(&new("category", false)),
            r#"[,"category":,"category":"#
        );
        assert_eq!(
            written(&new("say \"hé\"", false)),
            r#"[,"say \"hé\"":,"say \"hé\"":"#
        );
    }

    #[test]
    fn prefixes_of_every_length_around_the_short_width_are_written_whole() {
        for n in 25..=35 {
            let name = "n".repeat(n);
            let one = format!(",\"{name}\":");
            assert_eq!(written(&new(&name, false)), format!("[{one}{one}"), "{n}");
        }
    }

    /// The object `Prefix::object` lays out, with `1`, `2`, … as values.
    fn object(names: &[&str]) -> String {
        let (prefixes, suffix) = Prefix::object(names.iter().copied());
        let mut out = Vec::new();
        for (i, prefix) in prefixes.iter().enumerate() {
            prefix.write(&mut out);
            out.extend_from_slice((i + 1).to_string().as_bytes());
        }
        out.extend_from_slice(&suffix);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn names_with_navigations_nest_in_objects() {
        assert_eq!(object(&["a", "b"]), r#"{"a":1,"b":2"#);
        assert_eq!(
            object(&["c/name", "c/id", "n"]),
            r#"{"c":{"name":1,"id":2},"n":3"#
        );
        assert_eq!(object(&["n", "c/name"]), r#"{"n":1,"c":{"name":2}"#);
        assert_eq!(
            object(&["c/p/name", "c/id", "d/x"]),
            r#"{"c":{"p":{"name":1},"id":2},"d":{"x":3}"#
        );
        for names in [&["a", "b"][..], &["x/y"], &["c/name", "c/id", "n"]] {
            let json = format!("{}}}", object(names));
            serde_json::from_str::<serde_json::Value>(&json).expect(&json);
        }
    }
}
