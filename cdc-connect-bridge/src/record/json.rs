//! JSON text written straight into a byte buffer, exactly as `serde_json` writes it (compact,
//! the same string escapes, integers in decimal), so the record payloads need no
//! `serde_json::Value` tree on their way to Kafka.
//!
//! ```text
//!  column values, source and transaction fields ──push_*──► Vec<u8> (the record's value bytes)
//!  a `serde_json::Value` (keys, rare value kinds) ──push_json──┘
//! ```
//!
//! The tests compare every function with `serde_json`'s own output.

use serde_json::Value as Json;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `s` as a JSON string, quoted and escaped as `serde_json` escapes: `"` and `\`, the control
/// characters `\b \t \n \f \r` in their short form and the others as `\u00XX`; everything else,
/// non-ASCII included, as it is. Eight bytes at a time are checked for anything to escape, so
/// text without escapes is copied in one piece.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // the next eight bytes, or the last few padded with blanks (never escaped)
        let rest = &bytes[i..];
        let mut chunk = [b' '; 8];
        let n = rest.len().min(8);
        chunk[..n].copy_from_slice(&rest[..n]);
        if !needs_escape(u64::from_le_bytes(chunk)) {
            i += n;
            continue;
        }
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => &[],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether one of the eight bytes of `chunk` is escaped in a JSON string: below `0x20`, `"` or
/// `\`. A byte below `n` (`n` ≤ 128) is the only way `(b - n) & !b` gets its high bit without
/// a borrow from a lower byte, and a borrow needs a lower byte below `n` too; so the test is
/// exact for the word as a whole.
fn needs_escape(chunk: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let any_below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH != 0;
    any_below(chunk, 0x20)
        || any_below(chunk ^ (ONES * u64::from(b'"')), 1)
        || any_below(chunk ^ (ONES * u64::from(b'\\')), 1)
}

/// The two-digit decimal numbers `00` to `99`, one after another.
const PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Appends `bytes` (pre-rendered JSON of a kilobyte or more, such as a table's Connect schema)
/// 64 bytes at a time. A copy of this size through the C library's `memcpy` takes the CPU's
/// string-move instruction, which is several times slower than vector moves on some CPUs
/// (the AMD EPYC of the bench machines); fixed-size blocks compile to vector moves.
pub fn push_large(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len());
    let (blocks, rest) = bytes.as_chunks::<64>();
    for block in blocks {
        out.extend_from_slice(block);
    }
    out.extend_from_slice(rest);
}

/// An unsigned integer in decimal, two digits at a time.
pub fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

/// A signed integer in decimal.
pub fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// `"name":`, the start of an object member.
pub fn push_key(out: &mut Vec<u8>, name: &str) {
    push_str(out, name);
    out.push(b':');
}

/// A string or `null`.
pub fn push_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// Any JSON value, as `serde_json` writes it. Floats (rare in records) go through
/// `serde_json`'s own formatting.
pub fn push_json(out: &mut Vec<u8>, value: &Json) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                push_u64(out, u);
            } else if let Some(i) = n.as_i64() {
                push_i64(out, i);
            } else {
                out.extend_from_slice(n.to_string().as_bytes());
            }
        }
        Json::String(s) => push_str(out, s),
        Json::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_json(out, item);
            }
            out.push(b']');
        }
        Json::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_key(out, key);
                push_json(out, item);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn every_ascii_character_escapes_as_serde_json_does() {
        for c in 0u8..=0x7f {
            let s = format!("a{}b", char::from(c));
            assert_eq!(text(|o| push_str(o, &s)), Json::from(s.clone()).to_string());
        }
        for s in ["", "é€😀", "\u{2028}\u{2029}", "\u{7f}", "C:\\path/\"x\""] {
            assert_eq!(text(|o| push_str(o, s)), Json::from(s).to_string());
        }
    }

    #[test]
    fn a_large_copy_appends_every_byte_in_order() {
        // lengths around the 64-byte block, and a schema-sized one
        for len in [0usize, 1, 63, 64, 65, 127, 128, 129, 2_000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut out = b"head".to_vec();
            push_large(&mut out, &bytes);
            assert_eq!(out.len(), 4 + len);
            assert_eq!(&out[..4], b"head");
            assert_eq!(&out[4..], bytes.as_slice(), "length {len}");
        }
    }

    #[test]
    fn integers_at_their_limits() {
        for n in [
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            999,
            1000,
            u64::MAX,
            u64::MAX / 10,
        ] {
            assert_eq!(text(|o| push_u64(o, n)), n.to_string());
        }
        for n in [0, -1, -10, i64::MIN, i64::MAX, i64::MIN + 1] {
            assert_eq!(text(|o| push_i64(o, n)), n.to_string());
        }
    }

    #[test]
    fn values_of_every_kind() {
        let value = json!({
            "a": null, "b": true, "c": false, "d": -5, "e": 18446744073709551615u64,
            "f": 0.1, "g": 1e300, "h": -0.0, "i": [1, "x", {"z": []}], "j": {}, "k": "\"\n"
        });
        assert_eq!(text(|o| push_json(o, &value)), value.to_string());
    }

    proptest! {
        #[test]
        fn any_string_escapes_as_serde_json_does(s in any::<String>()) {
            prop_assert_eq!(text(|o| push_str(o, &s)), Json::from(s.clone()).to_string());
        }

        #[test]
        fn text_dense_with_escapes_escapes_as_serde_json_does(
            s in "[a-z\"\\\\\u{0}-\u{1f}é😀 ]{0,40}"
        ) {
            prop_assert_eq!(text(|o| push_str(o, &s)), Json::from(s.clone()).to_string());
        }

        #[test]
        fn any_integer_writes_as_display_does(n in any::<u64>(), i in any::<i64>()) {
            prop_assert_eq!(text(|o| push_u64(o, n)), n.to_string());
            prop_assert_eq!(text(|o| push_u64(o, n % 100_000)), (n % 100_000).to_string());
            prop_assert_eq!(text(|o| push_i64(o, i)), i.to_string());
        }

        #[test]
        fn any_float_writes_as_serde_json_does(f in any::<f64>()) {
            let value = serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number);
            prop_assert_eq!(text(|o| push_json(o, &value)), value.to_string());
        }
    }
}
