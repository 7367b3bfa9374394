//! Streaming JSON output: a document is written with `serde_json`'s
//! pretty printer straight into a buffered writer, its large arrays from
//! iterators, so that no tree of `serde_json::Value`s the size of the
//! model is built. Objects are written with their keys in sorted order —
//! the order of `serde_json::Map` — so that the output is that of
//! `serde_json::to_string_pretty` of the same document as a `Value`.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::ser::{Compound, PrettyFormatter};
use std::io::Write;

/// The object being written: [`SerializeMap::serialize_entry`] adds a key
/// and its value.
pub(crate) type Object<'a, 'w> = Compound<'a, &'w mut dyn Write, PrettyFormatter<'static>>;

/// A JSON array whose elements an iterator produces while it is written.
/// `Array(|| iter)`: the closure is called once per serialization.
pub(crate) struct Array<F>(pub(crate) F);

impl<F, I> Serialize for Array<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// Writes a pretty-printed JSON object and a final newline to `w`;
/// `entries` adds its entries, in sorted key order.
pub(crate) fn write_object<'w>(
    w: &'w mut dyn Write,
    entries: impl FnOnce(&mut Object<'_, 'w>) -> serde_json::Result<()>,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(w);
    let mut map = ser.serialize_map(None)?;
    entries(&mut map)?;
    SerializeMap::end(map)?;
    ser.into_inner().write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn streamed_objects_match_the_pretty_printed_values() {
        let mut out: Vec<u8> = Vec::new();
        write_object(&mut out, |m| {
            m.serialize_entry(
                "a",
                &Array(|| (1..4).map(|k| json!({"k": k, "v": [k, 0.5]}))),
            )?;
            m.serialize_entry("b", &Array(std::iter::empty::<u32>))?;
            m.serialize_entry("c", &f64::NAN)?;
            m.serialize_entry("d", &Array(|| ["x", "y"]))
        })
        .unwrap();
        let value = json!({
            "a": (1..4).map(|k| json!({"k": k, "v": [k, 0.5]})).collect::<Vec<_>>(),
            "b": Vec::<u32>::new(),
            "c": f64::NAN,
            "d": ["x", "y"],
        });
        let expected = serde_json::to_string_pretty(&value).unwrap() + "\n";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
