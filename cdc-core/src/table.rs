//! Tables and their layouts (schema versions) as the dictionary describes them.
//!
//! A [`TableLayout`] is one schema version of a table: its columns with the dictionary's type,
//! length, precision, scale and nullability, its key columns, and the SCN it is valid from. The
//! decoder converts each row with the version valid at the row's SCN.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::position::Scn;

/// A table: container name (in a CDB), owner and name, as stored in the dictionary
/// (case preserved; Oracle upper-cases unquoted identifiers).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TableId {
    pub pdb: Option<String>,
    pub owner: String,
    pub table: String,
}

impl TableId {
    pub fn new(owner: impl Into<String>, table: impl Into<String>) -> TableId {
        TableId {
            pdb: None,
            owner: owner.into(),
            table: table.into(),
        }
    }

    pub fn in_pdb(mut self, pdb: impl Into<String>) -> TableId {
        self.pdb = Some(pdb.into());
        self
    }

    /// The form SQL_REDO uses: `"OWNER"."TABLE"`.
    pub fn quoted(&self) -> String {
        format!(
            "{}.{}",
            quote_identifier(&self.owner),
            quote_identifier(&self.table)
        )
    }

    /// The name table patterns match: `PDB.OWNER.TABLE` in a CDB, `OWNER.TABLE` otherwise.
    pub fn pattern_name(&self) -> String {
        self.to_string()
    }
}

/// `PDB.OWNER.TABLE` or `OWNER.TABLE`, unquoted.
impl fmt::Display for TableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(pdb) = &self.pdb {
            write!(f, "{pdb}.")?;
        }
        write!(f, "{}.{}", self.owner, self.table)
    }
}

/// Quotes an Oracle identifier the way LogMiner prints it. Oracle identifiers cannot contain a
/// double quote, but a dictionary name that did would be doubled rather than break the text.
pub fn quote_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The dictionary's DATA_TYPE, without its parameters (those are on [`ColumnDef`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ColumnType {
    Number,
    Float,
    BinaryFloat,
    BinaryDouble,
    Char,
    Varchar2,
    NChar,
    NVarchar2,
    Long,
    Date,
    /// TIMESTAMP(p); the fractional precision is the column's `scale`, as in ALL_TAB_COLUMNS.
    Timestamp,
    TimestampTz,
    TimestampLtz,
    IntervalYm,
    IntervalDs,
    Raw,
    LongRaw,
    Clob,
    NClob,
    Blob,
    RowId,
    URowId,
    XmlType,
    Json,
    Boolean,
    Vector,
    /// A type the connector does not convert; its rows are reported, never guessed at.
    Other(String),
}

impl ColumnType {
    /// Reads ALL_TAB_COLUMNS.DATA_TYPE, e.g. `TIMESTAMP(6) WITH TIME ZONE`, `INTERVAL DAY(2) TO
    /// SECOND(6)`, `VARCHAR2`.
    pub fn from_dictionary(data_type: &str) -> ColumnType {
        let upper = data_type.trim().to_ascii_uppercase();
        // strip every parenthesised parameter: the dictionary's own columns carry them
        let mut bare = String::with_capacity(upper.len());
        let mut depth = 0u32;
        for c in upper.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ if depth == 0 => bare.push(c),
                _ => {}
            }
        }
        let bare = bare.split_whitespace().collect::<Vec<_>>().join(" ");
        match bare.as_str() {
            "NUMBER" | "INTEGER" | "INT" | "SMALLINT" | "DECIMAL" | "NUMERIC" => ColumnType::Number,
            "FLOAT" | "REAL" | "DOUBLE PRECISION" => ColumnType::Float,
            "BINARY_FLOAT" => ColumnType::BinaryFloat,
            "BINARY_DOUBLE" => ColumnType::BinaryDouble,
            "CHAR" | "CHARACTER" => ColumnType::Char,
            "VARCHAR2" | "VARCHAR" => ColumnType::Varchar2,
            "NCHAR" => ColumnType::NChar,
            "NVARCHAR2" => ColumnType::NVarchar2,
            "LONG" => ColumnType::Long,
            "DATE" => ColumnType::Date,
            "TIMESTAMP" => ColumnType::Timestamp,
            "TIMESTAMP WITH TIME ZONE" => ColumnType::TimestampTz,
            "TIMESTAMP WITH LOCAL TIME ZONE" => ColumnType::TimestampLtz,
            "INTERVAL YEAR TO MONTH" => ColumnType::IntervalYm,
            "INTERVAL DAY TO SECOND" => ColumnType::IntervalDs,
            "RAW" => ColumnType::Raw,
            "LONG RAW" => ColumnType::LongRaw,
            "CLOB" => ColumnType::Clob,
            "NCLOB" => ColumnType::NClob,
            "BLOB" => ColumnType::Blob,
            "ROWID" => ColumnType::RowId,
            "UROWID" => ColumnType::URowId,
            "XMLTYPE" | "SYS.XMLTYPE" => ColumnType::XmlType,
            "JSON" => ColumnType::Json,
            "BOOLEAN" => ColumnType::Boolean,
            "VECTOR" => ColumnType::Vector,
            _ => ColumnType::Other(data_type.trim().to_owned()),
        }
    }

    /// The dictionary spelling, without parameters.
    pub fn dictionary_name(&self) -> &str {
        match self {
            ColumnType::Number => "NUMBER",
            ColumnType::Float => "FLOAT",
            ColumnType::BinaryFloat => "BINARY_FLOAT",
            ColumnType::BinaryDouble => "BINARY_DOUBLE",
            ColumnType::Char => "CHAR",
            ColumnType::Varchar2 => "VARCHAR2",
            ColumnType::NChar => "NCHAR",
            ColumnType::NVarchar2 => "NVARCHAR2",
            ColumnType::Long => "LONG",
            ColumnType::Date => "DATE",
            ColumnType::Timestamp => "TIMESTAMP",
            ColumnType::TimestampTz => "TIMESTAMP WITH TIME ZONE",
            ColumnType::TimestampLtz => "TIMESTAMP WITH LOCAL TIME ZONE",
            ColumnType::IntervalYm => "INTERVAL YEAR TO MONTH",
            ColumnType::IntervalDs => "INTERVAL DAY TO SECOND",
            ColumnType::Raw => "RAW",
            ColumnType::LongRaw => "LONG RAW",
            ColumnType::Clob => "CLOB",
            ColumnType::NClob => "NCLOB",
            ColumnType::Blob => "BLOB",
            ColumnType::RowId => "ROWID",
            ColumnType::URowId => "UROWID",
            ColumnType::XmlType => "XMLTYPE",
            ColumnType::Json => "JSON",
            ColumnType::Boolean => "BOOLEAN",
            ColumnType::Vector => "VECTOR",
            ColumnType::Other(name) => name,
        }
    }

    /// LOB-like columns never appear in a WHERE clause and arrive through LOB rows.
    pub fn is_lob(&self) -> bool {
        matches!(
            self,
            ColumnType::Clob | ColumnType::NClob | ColumnType::Blob | ColumnType::XmlType
        )
    }
}

/// One column of a schema version, as ALL_TAB_COLUMNS describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    /// COLUMN_ID: 1-based position in the table.
    pub position: u16,
    #[serde(rename = "type")]
    pub data_type: ColumnType,
    /// DATA_LENGTH in bytes (CHAR_LENGTH for character types when known).
    pub length: u32,
    /// DATA_PRECISION (NUMBER, FLOAT, interval leading precision).
    pub precision: Option<u16>,
    /// DATA_SCALE (NUMBER scale; fractional seconds precision for timestamps and intervals).
    pub scale: Option<i16>,
    pub nullable: bool,
}

impl ColumnDef {
    pub fn new(name: impl Into<String>, position: u16, data_type: ColumnType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            position,
            data_type,
            length: 0,
            precision: None,
            scale: None,
            nullable: true,
        }
    }

    /// A column as a type is written in DDL and the dictionary (`NUMBER(12,2)`,
    /// `VARCHAR2(30)`, `TIMESTAMP(6) WITH TIME ZONE`, `INTERVAL DAY(2) TO SECOND(6)`): its
    /// type, and the length, precision and scale the dictionary would give it. An unknown
    /// type is [`ColumnType::Other`].
    pub fn from_type_text(
        name: impl Into<String>,
        position: u16,
        text: &str,
        nullable: bool,
    ) -> ColumnDef {
        let text = text.trim().to_ascii_uppercase();
        let ty = ColumnType::from_dictionary(&text);
        let params: Vec<Vec<i64>> = text
            .split('(')
            .skip(1)
            .filter_map(|p| p.split(')').next())
            .map(|p| {
                p.split(',')
                    .filter_map(|n| n.split_whitespace().next()?.parse().ok())
                    .collect()
            })
            .collect();
        let first = params.first().cloned().unwrap_or_default();
        let p0 = first.first().copied();
        let p1 = first.get(1).copied();
        let mut col = ColumnDef::new(name, position, ty.clone());
        col.nullable = nullable;
        let narrow = |v: i64| u16::try_from(v).unwrap_or(u16::MAX);
        match ty {
            ColumnType::Number | ColumnType::Float => {
                col.length = 22;
                col.precision = p0.map(narrow);
                col.scale = match (p0, p1) {
                    (Some(_), Some(s)) => Some(i16::try_from(s).unwrap_or(0)),
                    (Some(_), None) => Some(0),
                    _ => None,
                };
            }
            ColumnType::Char | ColumnType::NChar => {
                col.length = u32::try_from(p0.unwrap_or(1)).unwrap_or(1)
            }
            ColumnType::Varchar2 | ColumnType::NVarchar2 | ColumnType::Raw => {
                col.length = u32::try_from(p0.unwrap_or(4000)).unwrap_or(4000)
            }
            ColumnType::Timestamp | ColumnType::TimestampTz | ColumnType::TimestampLtz => {
                col.length = if ty == ColumnType::TimestampTz {
                    13
                } else {
                    11
                };
                col.scale = Some(i16::try_from(p0.unwrap_or(6)).unwrap_or(6));
            }
            ColumnType::IntervalYm => {
                col.length = 5;
                col.precision = Some(narrow(p0.unwrap_or(2)));
                col.scale = Some(0);
            }
            ColumnType::IntervalDs => {
                col.length = 11;
                col.precision = Some(narrow(p0.unwrap_or(2)));
                col.scale = Some(
                    i16::try_from(params.get(1).and_then(|p| p.first()).copied().unwrap_or(6))
                        .unwrap_or(6),
                );
            }
            ColumnType::Date => col.length = 7,
            ColumnType::BinaryDouble => col.length = 8,
            ColumnType::BinaryFloat => col.length = 4,
            _ => col.length = 4000,
        }
        col
    }

    pub fn with_length(mut self, length: u32) -> ColumnDef {
        self.length = length;
        self
    }

    pub fn with_precision(mut self, precision: Option<u16>, scale: Option<i16>) -> ColumnDef {
        self.precision = precision;
        self.scale = scale;
        self
    }

    pub fn not_null(mut self) -> ColumnDef {
        self.nullable = false;
        self
    }
}

/// Where the record key of a table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// `cdc.key.columns`
    Configured,
    PrimaryKey,
    /// A unique index whose columns are all NOT NULL.
    UniqueIndex,
    RowId,
    None,
}

/// A unique index of a table as the dictionary lists it (ALL_INDEXES.UNIQUENESS = 'UNIQUE'),
/// its columns in index order. An index over an expression lists a hidden column name
/// (`SYS_NC00005$`) that is not among the table's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueIndex {
    pub name: String,
    pub columns: Vec<String>,
}

/// The key columns of a schema version and where they come from: the primary key; without one,
/// the unique index whose columns are all NOT NULL columns of the table, the one with the
/// lowest name when several qualify (GoldenGate's rule, so both products key a table alike);
/// otherwise no key (`cdc.key.missing` decides). An index with a nullable column cannot
/// identify a row (two NULLs do not collide), nor can one over an expression.
pub fn choose_key(
    columns: &[ColumnDef],
    primary_key: Vec<String>,
    unique_indexes: &[UniqueIndex],
) -> (Vec<String>, KeySource) {
    if !primary_key.is_empty() {
        return (primary_key, KeySource::PrimaryKey);
    }
    let usable = |index: &&UniqueIndex| {
        !index.columns.is_empty()
            && index
                .columns
                .iter()
                .all(|name| columns.iter().any(|c| &c.name == name && !c.nullable))
    };
    match unique_indexes
        .iter()
        .filter(usable)
        .min_by(|a, b| a.name.cmp(&b.name))
    {
        Some(index) => (index.columns.clone(), KeySource::UniqueIndex),
        None => (Vec::new(), KeySource::None),
    }
}

/// The supplemental logging in force for a table: the database's (or PDB's) plus the table's
/// own log groups. ALL COLUMNS logging gives every update a full before image; PRIMARY KEY
/// logging gives the key columns only (partial before images, with no marker in the row).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SupplementalLogging {
    pub all_columns: bool,
    pub primary_key: bool,
}

/// One schema version of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableLayout {
    pub table: TableId,
    /// Increments with every layout change the connector applies.
    pub version: u32,
    pub valid_from: Scn,
    /// In COLUMN_ID order.
    pub columns: Vec<ColumnDef>,
    /// Names of the key columns, in key order.
    pub key: Vec<String>,
    pub key_source: KeySource,
    #[serde(default)]
    pub supplemental: SupplementalLogging,
    /// The table's segment columns in SEGMENT_COLUMN_ID order, from 1: for each, the index into
    /// `columns` of the column it stores, or `None` for one the layout does not show (a hidden
    /// column, or one SET UNUSED and not yet dropped). The generic `"COL n"` names of a row
    /// older than a later DDL count these. Empty when the dictionary gave no segment order:
    /// segment column n is then the column with COLUMN_ID n.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segment: Vec<Option<u16>>,
}

/// What segment column n of a layout stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentSlot {
    /// The column at this index of `columns`.
    Column(usize),
    /// A column the layout does not show (hidden, or unused): its value is no part of a change.
    Hidden,
    /// No segment column has this number in the layout.
    Beyond,
}

impl TableLayout {
    /// What segment column `n` (1-based, as in `"COL n"`) stores.
    #[inline]
    pub fn segment_column(&self, n: u16) -> SegmentSlot {
        if n == 0 {
            return SegmentSlot::Beyond;
        }
        if self.segment.is_empty() {
            return match self.columns.iter().position(|c| c.position == n) {
                Some(at) => SegmentSlot::Column(at),
                None => SegmentSlot::Beyond,
            };
        }
        match self.segment.get(usize::from(n) - 1) {
            Some(Some(at)) if usize::from(*at) < self.columns.len() => {
                SegmentSlot::Column(usize::from(*at))
            }
            Some(_) => SegmentSlot::Hidden,
            None => SegmentSlot::Beyond,
        }
    }

    /// The index (into `columns`) of a column by its exact dictionary name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    pub fn column(&self, name: &str) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.name == name)
    }

    pub fn is_key_column(&self, name: &str) -> bool {
        self.key.iter().any(|k| k == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_columns_count_hidden_ones_and_default_to_column_ids() {
        let mut layout = TableLayout {
            table: TableId::new("APP", "T"),
            version: 1,
            valid_from: Scn(1),
            columns: vec![
                ColumnDef::new("A", 1, ColumnType::Number),
                ColumnDef::new("C", 2, ColumnType::Varchar2),
            ],
            key: Vec::new(),
            key_source: KeySource::None,
            supplemental: SupplementalLogging::default(),
            segment: Vec::new(),
        };
        assert_eq!(layout.segment_column(1), SegmentSlot::Column(0));
        assert_eq!(layout.segment_column(2), SegmentSlot::Column(1));
        assert_eq!(layout.segment_column(3), SegmentSlot::Beyond);
        assert_eq!(layout.segment_column(0), SegmentSlot::Beyond);
        // B was SET UNUSED: it keeps segment column 2, C is the third
        layout.segment = vec![Some(0), None, Some(1)];
        assert_eq!(layout.segment_column(1), SegmentSlot::Column(0));
        assert_eq!(layout.segment_column(2), SegmentSlot::Hidden);
        assert_eq!(layout.segment_column(3), SegmentSlot::Column(1));
        assert_eq!(layout.segment_column(4), SegmentSlot::Beyond);
        // an older layout without the field still reads
        let json = serde_json::to_value(&layout).unwrap();
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("segment");
        let read: TableLayout = serde_json::from_value(old).unwrap();
        assert!(read.segment.is_empty());
        assert_eq!(serde_json::from_value::<TableLayout>(json).unwrap(), layout);
    }

    #[test]
    fn quoting_and_names() {
        let t = TableId::new("APP", "Order Lines");
        assert_eq!(t.quoted(), r#""APP"."Order Lines""#);
        assert_eq!(t.to_string(), "APP.Order Lines");
        assert_eq!(
            t.clone().in_pdb("FREEPDB1").pattern_name(),
            "FREEPDB1.APP.Order Lines"
        );
        assert_eq!(quote_identifier(r#"a"b"#), r#""a""b""#);
    }

    #[test]
    fn dictionary_types() {
        for (text, ty) in [
            ("NUMBER", ColumnType::Number),
            ("VARCHAR2", ColumnType::Varchar2),
            ("TIMESTAMP(6)", ColumnType::Timestamp),
            ("TIMESTAMP(9) WITH TIME ZONE", ColumnType::TimestampTz),
            (
                "TIMESTAMP(6) WITH LOCAL TIME ZONE",
                ColumnType::TimestampLtz,
            ),
            ("INTERVAL YEAR(2) TO MONTH", ColumnType::IntervalYm),
            ("INTERVAL DAY(2) TO SECOND(6)", ColumnType::IntervalDs),
            ("LONG RAW", ColumnType::LongRaw),
            ("binary_double", ColumnType::BinaryDouble),
            ("SDO_GEOMETRY", ColumnType::Other("SDO_GEOMETRY".into())),
        ] {
            assert_eq!(ColumnType::from_dictionary(text), ty, "{text}");
        }
        assert!(ColumnType::Clob.is_lob());
        assert!(!ColumnType::Raw.is_lob());
    }

    #[test]
    fn key_is_the_primary_key_then_the_lowest_named_unique_index_on_not_null_columns() {
        let columns = vec![
            ColumnDef::new("ID", 1, ColumnType::Number).not_null(),
            ColumnDef::new("CODE", 2, ColumnType::Varchar2).not_null(),
            ColumnDef::new("REGION", 3, ColumnType::Varchar2).not_null(),
            ColumnDef::new("EMAIL", 4, ColumnType::Varchar2),
        ];
        let index = |name: &str, cols: &[&str]| UniqueIndex {
            name: name.into(),
            columns: cols.iter().map(|c| c.to_string()).collect(),
        };
        let indexes = vec![
            index("UK_Z_CODE", &["CODE", "REGION"]),
            // a nullable column: two NULL rows would not collide
            index("UK_A_EMAIL", &["EMAIL"]),
            // over an expression: its hidden column is not a column of the table
            index("UK_B_UPPER", &["SYS_NC00005$"]),
            index("UK_M_CODE", &["REGION", "CODE"]),
        ];
        assert_eq!(
            choose_key(&columns, vec!["ID".into()], &indexes),
            (vec!["ID".to_string()], KeySource::PrimaryKey)
        );
        assert_eq!(
            choose_key(&columns, Vec::new(), &indexes),
            (
                vec!["REGION".to_string(), "CODE".to_string()],
                KeySource::UniqueIndex
            )
        );
        assert_eq!(
            choose_key(&columns, Vec::new(), &indexes[1..3]),
            (Vec::new(), KeySource::None)
        );
        assert_eq!(
            choose_key(&columns, Vec::new(), &[]),
            (Vec::new(), KeySource::None)
        );
    }

    #[test]
    fn layout_lookup() {
        let layout = TableLayout {
            table: TableId::new("APP", "T"),
            version: 1,
            valid_from: Scn(10),
            columns: vec![
                ColumnDef::new("ID", 1, ColumnType::Number).not_null(),
                ColumnDef::new("NAME", 2, ColumnType::Varchar2).with_length(40),
            ],
            key: vec!["ID".into()],
            key_source: KeySource::PrimaryKey,
            supplemental: Default::default(),
            segment: Vec::new(),
        };
        assert_eq!(layout.column_index("NAME"), Some(1));
        assert_eq!(layout.column_index("name"), None);
        assert!(layout.is_key_column("ID"));
        assert!(!layout.is_key_column("NAME"));
    }
}
