//! Kafka Connect JSON: the REST body `{"name": …, "config": {…}}` or a flat `{"k": "v"}`.
//!
//! Values may be strings, numbers or booleans (their text is kept), or `null` (the key is
//! treated as not given). Anything else inside the config object is rejected while parsing,
//! so the error carries serde_json's line and column.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::error::ParseError;

/// One `key: value` of the config object, in document order.
pub(crate) type JsonEntry = (String, Option<String>);

/// A scalar config value as text; `None` for JSON null.
struct Scalar(Option<String>);

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number, boolean or null")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar(Some(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar(Some(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar(Some(v.to_string())))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar(Some(v.to_string())))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar(Some(v.to_string())))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar(Some(v.to_string())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar(None))
    }
}

/// The config object: scalar values only, order and duplicates kept.
struct ConfigObject(Vec<JsonEntry>);

impl<'de> de::Deserialize<'de> for ConfigObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ConfigObject, D::Error> {
        deserializer.deserialize_map(ConfigObjectVisitor)
    }
}

struct ConfigObjectVisitor;

impl<'de> Visitor<'de> for ConfigObjectVisitor {
    type Value = ConfigObject;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of configuration keys")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConfigObject, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let Scalar(value) = map.next_value().map_err(|error| {
                de::Error::custom(format_args!(
                    "value of {key:?}: {}",
                    strip_position(&error.to_string())
                ))
            })?;
            entries.push((key, value));
        }
        Ok(ConfigObject(entries))
    }
}

/// A top-level value: scalar, the nested config object, or something to ignore (`tasks`).
enum TopValue {
    Scalar(Option<String>),
    Object(Vec<JsonEntry>),
    Other,
}

impl<'de> de::Deserialize<'de> for TopValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TopValue, D::Error> {
        deserializer.deserialize_any(TopValueVisitor)
    }
}

struct TopValueVisitor;

impl<'de> Visitor<'de> for TopValueVisitor {
    type Value = TopValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<TopValue, E> {
        ScalarVisitor
            .visit_str(v)
            .map(|Scalar(s)| TopValue::Scalar(s))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<TopValue, E> {
        ScalarVisitor
            .visit_bool(v)
            .map(|Scalar(s)| TopValue::Scalar(s))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<TopValue, E> {
        ScalarVisitor
            .visit_i64(v)
            .map(|Scalar(s)| TopValue::Scalar(s))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<TopValue, E> {
        ScalarVisitor
            .visit_u64(v)
            .map(|Scalar(s)| TopValue::Scalar(s))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<TopValue, E> {
        ScalarVisitor
            .visit_f64(v)
            .map(|Scalar(s)| TopValue::Scalar(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<TopValue, E> {
        Ok(TopValue::Scalar(None))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<TopValue, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TopValue::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TopValue, A::Error> {
        ConfigObjectVisitor
            .visit_map(map)
            .map(|ConfigObject(entries)| TopValue::Object(entries))
    }
}

struct Document(Vec<(String, TopValue)>);

impl<'de> de::Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Document, D::Error> {
        struct DocumentVisitor;
        impl<'de> Visitor<'de> for DocumentVisitor {
            type Value = Document;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a JSON object: {\"name\": …, \"config\": {…}} or {\"key\": \"value\", …}",
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<TopValue>()?));
                }
                Ok(Document(entries))
            }
        }
        deserializer.deserialize_map(DocumentVisitor)
    }
}

/// Reads a Connect JSON document into its config entries (with `name` from the body form).
pub(crate) fn parse_connect_json(text: &str) -> Result<Vec<JsonEntry>, ParseError> {
    let Document(top) = serde_json::from_str(text).map_err(|error| ParseError {
        line: Some(error.line()).filter(|&line| line > 0),
        message: strip_position(&error.to_string()),
    })?;

    let body = top.iter().rev().find_map(|(key, value)| match value {
        TopValue::Object(entries) if key == "config" => Some(entries),
        _ => None,
    });
    let Some(config) = body else {
        // The flat form: every top-level value must be a scalar.
        let mut entries = Vec::with_capacity(top.len());
        for (key, value) in top {
            match value {
                TopValue::Scalar(value) => entries.push((key, value)),
                TopValue::Object(_) | TopValue::Other => {
                    return Err(ParseError {
                        line: line_of_key(text, &key),
                        message: format!(
                            "value of {key:?} must be a string, number, boolean or null"
                        ),
                    });
                }
            }
        }
        return Ok(entries);
    };

    let mut entries = config.clone();
    // The body's `name` names the connector; it must agree with a `name` inside `config`.
    let outer_name = top.iter().find_map(|(key, value)| match value {
        TopValue::Scalar(Some(name)) if key == "name" => Some(name.clone()),
        _ => None,
    });
    if let Some(outer) = outer_name {
        let inner = entries
            .iter()
            .rev()
            .find(|(key, _)| key == "name")
            .and_then(|(_, value)| value.clone());
        match inner {
            Some(inner) if inner != outer => {
                return Err(ParseError {
                    line: line_of_key(text, "name"),
                    message: format!(
                        "the body names the connector {outer:?} but its config says {inner:?}"
                    ),
                });
            }
            Some(_) => {}
            None => entries.insert(0, ("name".to_owned(), Some(outer))),
        }
    }
    Ok(entries)
}

/// serde_json appends " at line L column C"; the line is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// Best effort: the first line holding `"key"` followed by `:`, for errors found after parsing.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let quoted = serde_json::to_string(key).ok()?;
    let mut search_from = 0;
    while let Some(found) = text.get(search_from..)?.find(&quoted) {
        let at = search_from + found;
        let after = text.get(at + quoted.len()..)?;
        if after.trim_start().starts_with(':') {
            return Some(text[..at].matches('\n').count() + 1);
        }
        search_from = at + quoted.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_value_error_has_line() {
        let error =
            parse_connect_json("{\"config\": {\n\"a\": \"b\",\n\"c\": [1]\n}}").unwrap_err();
        assert_eq!(error.line, Some(3), "{error}");
    }

    #[test]
    fn flat_form_object_value_error_names_key_and_line() {
        let error = parse_connect_json("{\"a\": \"b\",\n\"c\": {\"d\": 1}}").unwrap_err();
        assert_eq!(error.line, Some(2), "{error}");
        assert!(error.message.contains("\"c\""), "{error}");
    }
}
