//! Kafka Connect schemas and the JSON that Connect's `JsonConverter` writes for them.
//!
//! With `schemas.enable=true` a record is `{"schema": <schema>, "payload": <value>}`; without,
//! the payload alone. A schema's JSON lists, in this order: `type`, `fields` (structs) or
//! `keys`/`values` (maps), `optional`, `name`, `version`, `doc`, `parameters`, `default`, and
//! for a struct field `field` last, as the converter does, so the text matches what a
//! Debezium connector behind a Connect worker produces.

use serde_json::{Map, Value as Json};

use crate::record::json;

/// A Connect schema type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaType {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    Bytes,
    Struct,
    Map,
    Array,
}

impl SchemaType {
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::Int8 => "int8",
            SchemaType::Int16 => "int16",
            SchemaType::Int32 => "int32",
            SchemaType::Int64 => "int64",
            SchemaType::Float32 => "float",
            SchemaType::Float64 => "double",
            SchemaType::Boolean => "boolean",
            SchemaType::String => "string",
            SchemaType::Bytes => "bytes",
            SchemaType::Struct => "struct",
            SchemaType::Map => "map",
            SchemaType::Array => "array",
        }
    }
}

/// A Connect schema (the parts this connector uses).
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub kind: SchemaType,
    pub optional: bool,
    pub name: Option<String>,
    pub version: Option<i32>,
    pub doc: Option<String>,
    pub parameters: Vec<(String, String)>,
    pub default: Option<Json>,
    /// Struct fields in order.
    pub fields: Vec<Field>,
    /// Map key and value schemas.
    pub map: Option<Box<(Schema, Schema)>>,
    /// Array element schema.
    pub items: Option<Box<Schema>>,
}

/// A named field of a struct schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub schema: Schema,
}

impl Schema {
    /// A schema of a primitive type.
    pub fn of(kind: SchemaType) -> Schema {
        Schema {
            kind,
            optional: false,
            name: None,
            version: None,
            doc: None,
            parameters: Vec::new(),
            default: None,
            fields: Vec::new(),
            map: None,
            items: None,
        }
    }

    /// A struct schema with its fields.
    pub fn structure(name: impl Into<String>, fields: Vec<Field>) -> Schema {
        let mut schema = Schema::of(SchemaType::Struct);
        schema.name = Some(name.into());
        schema.fields = fields;
        schema
    }

    /// A map schema.
    pub fn map(keys: Schema, values: Schema) -> Schema {
        let mut schema = Schema::of(SchemaType::Map);
        schema.map = Some(Box::new((keys, values)));
        schema
    }

    /// An array schema.
    pub fn array(items: Schema) -> Schema {
        let mut schema = Schema::of(SchemaType::Array);
        schema.items = Some(Box::new(items));
        schema
    }

    #[must_use]
    pub fn optional(mut self) -> Schema {
        self.optional = true;
        self
    }

    #[must_use]
    pub fn named(mut self, name: &str, version: Option<i32>) -> Schema {
        self.name = Some(name.to_owned());
        self.version = version;
        self
    }

    #[must_use]
    pub fn with_parameter(mut self, key: &str, value: impl Into<String>) -> Schema {
        self.parameters.push((key.to_owned(), value.into()));
        self
    }

    #[must_use]
    pub fn with_doc(mut self, doc: &str) -> Schema {
        self.doc = Some(doc.to_owned());
        self
    }

    #[must_use]
    pub fn with_default(mut self, default: Json) -> Schema {
        self.default = Some(default);
        self
    }

    pub fn field(name: impl Into<String>, schema: Schema) -> Field {
        Field {
            name: name.into(),
            schema,
        }
    }

    /// The schema as `JsonConverter` writes it.
    pub fn to_json(&self) -> Json {
        Json::Object(self.to_json_map())
    }

    fn to_json_map(&self) -> Map<String, Json> {
        let mut map = Map::new();
        map.insert("type".into(), Json::from(self.kind.as_str()));
        if self.kind == SchemaType::Struct {
            let fields = self
                .fields
                .iter()
                .map(|f| {
                    let mut m = f.schema.to_json_map();
                    m.insert("field".into(), Json::from(f.name.as_str()));
                    Json::Object(m)
                })
                .collect();
            map.insert("fields".into(), Json::Array(fields));
        }
        if let Some(kv) = &self.map {
            map.insert("keys".into(), kv.0.to_json());
            map.insert("values".into(), kv.1.to_json());
        }
        if let Some(items) = &self.items {
            map.insert("items".into(), items.to_json());
        }
        map.insert("optional".into(), Json::Bool(self.optional));
        if let Some(name) = &self.name {
            map.insert("name".into(), Json::from(name.as_str()));
        }
        if let Some(version) = self.version {
            map.insert("version".into(), Json::from(version));
        }
        if let Some(doc) = &self.doc {
            map.insert("doc".into(), Json::from(doc.as_str()));
        }
        if !self.parameters.is_empty() {
            let params = self
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
                .collect();
            map.insert("parameters".into(), Json::Object(params));
        }
        if let Some(default) = &self.default {
            map.insert("default".into(), default.clone());
        }
        map
    }
}

/// A schema prepared for records: its JSON text, written once per table version and spliced
/// into every record that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedSchema {
    pub schema: Schema,
    json: String,
}

impl PreparedSchema {
    pub fn new(schema: Schema) -> PreparedSchema {
        let json = schema.to_json().to_string();
        PreparedSchema { schema, json }
    }

    pub fn json(&self) -> &str {
        &self.json
    }
}

/// The bytes of one record key or value: `{"schema":…,"payload":…}` when `with_schema`, the
/// payload alone otherwise.
pub fn envelope(schema: &PreparedSchema, payload: &Json, with_schema: bool) -> Vec<u8> {
    let mut text = Vec::with_capacity(64);
    json::push_json(&mut text, payload);
    envelope_text(schema, text, with_schema)
}

/// [`envelope`] of a payload already written as JSON text.
pub fn envelope_text(schema: &PreparedSchema, payload: Vec<u8>, with_schema: bool) -> Vec<u8> {
    if !with_schema {
        return payload;
    }
    let mut out = Vec::with_capacity(schema.json.len() + payload.len() + 24);
    out.extend_from_slice(b"{\"schema\":");
    out.extend_from_slice(schema.json.as_bytes());
    out.extend_from_slice(b",\"payload\":");
    out.extend_from_slice(&payload);
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converter_field_order() {
        let decimal = Schema::of(SchemaType::Bytes)
            .optional()
            .named("org.apache.kafka.connect.data.Decimal", Some(1))
            .with_parameter("scale", "2");
        let s =
            Schema::structure("p.APP.T.Value", vec![Schema::field("PRICE", decimal)]).optional();
        assert_eq!(
            s.to_json().to_string(),
            r#"{"type":"struct","fields":[{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"PRICE"}],"optional":true,"name":"p.APP.T.Value"}"#
        );
        let m = Schema::map(
            Schema::of(SchemaType::String),
            Schema::of(SchemaType::String),
        );
        assert_eq!(
            m.to_json().to_string(),
            r#"{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"string","optional":false},"optional":false}"#
        );
        let a = Schema::array(Schema::of(SchemaType::String)).optional();
        assert_eq!(
            a.to_json().to_string(),
            r#"{"type":"array","items":{"type":"string","optional":false},"optional":true}"#
        );
        let prepared = PreparedSchema::new(Schema::of(SchemaType::Int32));
        assert_eq!(
            String::from_utf8(envelope(&prepared, &Json::from(5), true)).unwrap(),
            r#"{"schema":{"type":"int32","optional":false},"payload":5}"#
        );
        assert_eq!(envelope(&prepared, &Json::from(5), false), b"5");
    }
}
