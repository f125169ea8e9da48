//! Java `.properties` text, read the way `java.util.Properties.load` reads it.
//!
//! Connect users hand us files written for the Java connector, so the same text must give the
//! same keys and values: `#`/`!` comments, `key=value`, `key: value` and `key value`,
//! backslash line continuation, and the `\t \n \r \f \\ \uXXXX` escapes. Two departures,
//! both errors where Java would guess: an empty key and a malformed `\u` escape.

use super::error::ParseError;

/// One `key=value` read from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PropertyLine {
    pub key: String,
    pub value: String,
    /// 1-based line where the logical line starts.
    pub line: usize,
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Splits on `\n`, `\r\n` or `\r`, as Java does.
fn natural_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\n', '\r']) {
            Some(end) => {
                lines.push(&rest[..end]);
                let skip = if rest[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = &rest[end + skip..];
            }
            None => {
                lines.push(rest);
                rest = "";
            }
        }
    }
    lines
}

/// An odd number of trailing backslashes continues the line; an even number is escaped ones.
fn continues(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Reads every entry; later duplicates are returned too (the caller decides).
pub(crate) fn parse_properties(text: &str) -> Result<Vec<PropertyLine>, ParseError> {
    let lines = natural_lines(text);
    let mut entries = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let start_line = index + 1;
        let first = lines[index].trim_start_matches(is_blank);
        index += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = first.to_owned();
        while continues(&logical) {
            logical.pop();
            match lines.get(index) {
                Some(next) => {
                    logical.push_str(next.trim_start_matches(is_blank));
                    index += 1;
                }
                None => break,
            }
        }
        entries.push(split_entry(&logical, start_line)?);
    }
    Ok(entries)
}

/// Splits one logical line into key and value and unescapes both.
fn split_entry(logical: &str, line: usize) -> Result<PropertyLine, ParseError> {
    let mut key_end = logical.len();
    let mut escaped = false;
    for (at, c) in logical.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_blank(c) {
            key_end = at;
            break;
        }
    }
    let raw_key = &logical[..key_end];
    let mut rest = &logical[key_end..];
    // After the key: blanks, then at most one `=` or `:`, then blanks.
    let mut separator_seen = false;
    while let Some(c) = rest.chars().next() {
        if is_blank(c) {
            rest = &rest[c.len_utf8()..];
        } else if !separator_seen && (c == '=' || c == ':') {
            separator_seen = true;
            rest = &rest[1..];
        } else {
            break;
        }
    }
    let key = unescape(raw_key, line)?;
    if key.is_empty() {
        return Err(ParseError::at(line, "no key before the value"));
    }
    let value = unescape(rest, line)?;
    Ok(PropertyLine { key, value, line })
}

fn unescape(text: &str, line: usize) -> Result<String, ParseError> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    // A high surrogate from `\uD8xx` waiting for its low half.
    let mut pending_high: Option<u16> = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            if pending_high.is_some() {
                return Err(lone_surrogate(line));
            }
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            // A trailing lone backslash at the end of the file: Java drops it.
            break;
        };
        if escape != 'u' {
            if pending_high.is_some() {
                return Err(lone_surrogate(line));
            }
            out.push(match escape {
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                'f' => '\x0c',
                other => other,
            });
            continue;
        }
        let digits: String = chars.by_ref().take(4).collect();
        let unit = match (digits.len(), u16::from_str_radix(&digits, 16)) {
            (4, Ok(unit)) if digits.chars().all(|d| d.is_ascii_hexdigit()) => unit,
            _ => {
                return Err(ParseError::at(
                    line,
                    format!("malformed \\uXXXX escape: \\u{digits} (four hex digits needed)"),
                ));
            }
        };
        match (pending_high.take(), unit) {
            (None, 0xD800..=0xDBFF) => pending_high = Some(unit),
            (Some(high), 0xDC00..=0xDFFF) => {
                let code =
                    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                out.push(char::from_u32(code).ok_or_else(|| lone_surrogate(line))?);
            }
            (Some(_), _) | (None, 0xDC00..=0xDFFF) => return Err(lone_surrogate(line)),
            (None, _) => {
                out.push(char::from_u32(u32::from(unit)).ok_or_else(|| lone_surrogate(line))?)
            }
        }
    }
    if pending_high.is_some() {
        return Err(lone_surrogate(line));
    }
    Ok(out)
}

fn lone_surrogate(line: usize) -> ParseError {
    ParseError::at(line, "\\u escape is half of a UTF-16 surrogate pair")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse_properties(text)
            .unwrap()
            .into_iter()
            .map(|entry| (entry.key, entry.value))
            .collect()
    }

    #[test]
    fn natural_line_endings() {
        assert_eq!(natural_lines("a\nb\r\nc\rd"), vec!["a", "b", "c", "d"]);
        assert_eq!(natural_lines("a\n"), vec!["a"]);
    }

    #[test]
    fn continuation_keeps_escaped_backslashes() {
        assert_eq!(
            pairs("k=a\\\\\nb=c"),
            vec![("k".into(), "a\\".into()), ("b".into(), "c".into())]
        );
        assert_eq!(pairs("k=a\\\n   b"), vec![("k".into(), "ab".into())]);
    }
}
