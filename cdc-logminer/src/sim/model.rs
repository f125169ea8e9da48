//! The simulated dictionary: tables with their layout versions, object ids (table, partitions,
//! IOT top index) and rows, and the standard schema the workload uses.

use std::collections::BTreeMap;

use cdc_core::{
    ColumnDef, ColumnType, ObjectId, Scn, SupplementalLogging, TableId, TableLayout, UniqueIndex,
    Value, choose_key,
};
use serde::{Deserialize, Serialize};

use super::SimError;

/// One column of a table spec: `{"name": "ID", "type": "NUMBER(10)", "nullable": false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSpec {
    pub name: String,
    /// The dictionary type with its parameters, e.g. `VARCHAR2(100)`, `NUMBER(12,2)`,
    /// `TIMESTAMP(9) WITH TIME ZONE`, `INTERVAL DAY(5) TO SECOND(6)`.
    #[serde(rename = "type")]
    pub data_type: String,
    #[serde(default = "yes")]
    pub nullable: bool,
}

fn yes() -> bool {
    true
}

/// How a table is stored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Organization {
    #[default]
    Heap,
    /// Index-organized: rows live in the top index `SYS_IOT_TOP_<table object id>`.
    Iot,
    /// Range-partitioned on the first key column (`VALUES LESS THAN`).
    Range { partitions: Vec<PartitionSpec> },
}

/// A range partition: `PARTITION P1 VALUES LESS THAN (1000)`; no bound = MAXVALUE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSpec {
    pub name: String,
    #[serde(default)]
    pub less_than: Option<i64>,
}

/// A table as a scenario declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpec {
    /// The PDB (CDB only); `None` = every PDB (or the database in a non-CDB).
    #[serde(default)]
    pub pdb: Option<String>,
    pub owner: String,
    pub name: String,
    pub columns: Vec<ColumnSpec>,
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// Unique constraints (each with its unique index of the same name).
    #[serde(default)]
    pub unique_indexes: Vec<IndexSpec>,
    #[serde(default)]
    pub organization: Organization,
}

/// A unique constraint and its index, as a scenario declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<String>,
}

/// Reads a dictionary type with parameters into a column definition.
pub fn column_def(spec: &ColumnSpec, position: u16) -> Result<ColumnDef, SimError> {
    let col =
        ColumnDef::from_type_text(spec.name.clone(), position, &spec.data_type, spec.nullable);
    if let ColumnType::Other(name) = &col.data_type {
        return Err(SimError::Scenario(format!(
            "column {}: unknown type {name}",
            spec.name
        )));
    }
    Ok(col)
}

/// A segment DATA_OBJ# names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimPartition {
    pub name: String,
    pub object: ObjectId,
    pub less_than: Option<i64>,
}

/// A table in one container.
#[derive(Debug, Clone)]
pub struct SimTable {
    pub id: TableId,
    /// Every layout version, oldest first; the last is the dictionary's current one.
    pub versions: Vec<std::sync::Arc<TableLayout>>,
    pub object: ObjectId,
    pub organization: Organization,
    /// Range partitions (for `Organization::Range`).
    pub partitions: Vec<SimPartition>,
    /// The IOT top index object (for `Organization::Iot`).
    pub iot_top: Option<ObjectId>,
    /// Rows by ROWID, in the database's current state (uncommitted changes included).
    pub rows: BTreeMap<String, Vec<Value>>,
    pub dropped: bool,
    pub next_row: u32,
}

impl SimTable {
    pub fn layout(&self) -> Option<&TableLayout> {
        self.versions.last().map(|l| l.as_ref())
    }

    /// The current layout, shared (no copy of its columns).
    pub fn shared_layout(&self) -> Option<std::sync::Arc<TableLayout>> {
        self.versions.last().cloned()
    }

    pub fn version(&self) -> usize {
        self.versions.len().saturating_sub(1)
    }

    /// Whether the table has a column LogMiner cannot render (BOOLEAN, JSON, VECTOR): its DML
    /// comes back as UNSUPPORTED rows.
    pub fn unsupported(&self) -> bool {
        self.layout().is_some_and(|l| {
            l.columns.iter().any(|c| {
                matches!(
                    c.data_type,
                    ColumnType::Boolean | ColumnType::Json | ColumnType::Vector
                )
            })
        })
    }

    /// The segment (DATA_OBJ#) a row with these values is written to.
    pub fn segment_for(&self, row: &[Value]) -> Result<ObjectId, SimError> {
        match &self.organization {
            Organization::Heap => Ok(self.object),
            Organization::Iot => Ok(self.iot_top.unwrap_or(self.object)),
            Organization::Range { .. } => {
                let key = self
                    .layout()
                    .and_then(|l| l.key.first().and_then(|k| l.column_index(k)))
                    .and_then(|i| row.get(i));
                let n = match key {
                    Some(Value::Number(d)) => d.unscaled_at(0).map(|v| v as i64),
                    _ => None,
                };
                let n = n.ok_or_else(|| {
                    SimError::Scenario(format!(
                        "{}: the partition key must be an integer NUMBER",
                        self.id
                    ))
                })?;
                self.partitions
                    .iter()
                    .find(|p| p.less_than.is_none_or(|b| n < b))
                    .map(|p| p.object)
                    .ok_or_else(|| {
                        SimError::Ora(
                            cdc_core::ora::OraCode(14400),
                            "ORA-14400: no partition found in table for inserted partition key"
                                .into(),
                        )
                    })
            }
        }
    }

    /// The key columns' values of a row, for finding it again.
    pub fn key_of(&self, row: &[Value]) -> Vec<Value> {
        let Some(layout) = self.layout() else {
            return Vec::new();
        };
        layout
            .key
            .iter()
            .filter_map(|k| layout.column_index(k).and_then(|i| row.get(i).cloned()))
            .collect()
    }
}

/// A table's first layout from its spec.
pub fn layout_from_spec(
    spec: &TableSpec,
    id: TableId,
    valid_from: Scn,
) -> Result<TableLayout, SimError> {
    let mut columns = Vec::with_capacity(spec.columns.len());
    for (i, c) in spec.columns.iter().enumerate() {
        columns.push(column_def(c, (i + 1) as u16)?);
    }
    let constrained = spec
        .primary_key
        .iter()
        .chain(spec.unique_indexes.iter().flat_map(|i| &i.columns));
    for k in constrained {
        if !columns.iter().any(|c| &c.name == k) {
            return Err(SimError::Scenario(format!(
                "{id}: key column {k} is not a column"
            )));
        }
    }
    for c in &mut columns {
        if spec.primary_key.contains(&c.name) {
            c.nullable = false;
        }
    }
    // the dictionary lists the indexes; the key is chosen from them as from a real one's
    let unique: Vec<UniqueIndex> = spec
        .unique_indexes
        .iter()
        .map(|i| UniqueIndex {
            name: i.name.clone(),
            columns: i.columns.clone(),
        })
        .collect();
    let (key, key_source) = choose_key(&columns, spec.primary_key.clone(), &unique);
    // a new table's segment stores its columns in COLUMN_ID order
    let segment = (0..columns.len() as u16).map(Some).collect();
    Ok(TableLayout {
        table: id,
        version: 1,
        valid_from,
        columns,
        key,
        key_source,
        // every UPDATE and DELETE the simulator writes carries a full before image
        supplemental: SupplementalLogging {
            all_columns: true,
            primary_key: false,
        },
        segment,
    })
}

fn col(name: &str, ty: &str) -> ColumnSpec {
    ColumnSpec {
        name: name.to_owned(),
        data_type: ty.to_owned(),
        nullable: true,
    }
}

/// The workload's tables, created in every container: the types of the reference (NUMBER with
/// and without scale, VARCHAR2, CHAR, NVARCHAR2, DATE, TIMESTAMP(6/9), WITH (LOCAL) TIME ZONE,
/// INTERVALs, RAW, BINARY_DOUBLE, BINARY_FLOAT, a CLOB), with and without a primary key, a
/// range-partitioned table, an IOT, and a table of another owner that is not captured.
pub fn standard_tables() -> Vec<TableSpec> {
    vec![
        TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "CUSTOMERS".into(),
            columns: vec![
                col("ID", "NUMBER(10)"),
                col("NAME", "VARCHAR2(100)"),
                col("CODE", "CHAR(8)"),
                col("NICK", "NVARCHAR2(40)"),
                col("BALANCE", "NUMBER(12,2)"),
                col("RATIO", "NUMBER"),
                col("SCORE", "BINARY_DOUBLE"),
                col("WEIGHT", "BINARY_FLOAT"),
                col("BORN", "DATE"),
                col("UPDATED_AT", "TIMESTAMP(6)"),
            ],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Heap,
        },
        TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "EVENTS".into(),
            columns: vec![
                col("EVENT_ID", "NUMBER"),
                col("KIND", "VARCHAR2(20)"),
                col("PAYLOAD", "RAW(16)"),
                col("AT_TS", "TIMESTAMP(9)"),
                col("AT_TZ", "TIMESTAMP(9) WITH TIME ZONE"),
                col("AT_LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
                col("RETENTION", "INTERVAL YEAR(4) TO MONTH"),
                col("DURATION", "INTERVAL DAY(5) TO SECOND(6)"),
                col("NOTE", "VARCHAR2(4000)"),
            ],
            primary_key: vec![],
            unique_indexes: vec![],
            organization: Organization::Heap,
        },
        TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "DOCS".into(),
            columns: vec![
                col("ID", "NUMBER(10)"),
                col("TITLE", "VARCHAR2(200)"),
                col("BODY", "CLOB"),
            ],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Heap,
        },
        TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "ORDERS".into(),
            columns: vec![
                col("ID", "NUMBER(12)"),
                col("CUSTOMER_ID", "NUMBER(10)"),
                col("STATUS", "VARCHAR2(20)"),
                col("TOTAL", "NUMBER(10,2)"),
                col("PLACED", "DATE"),
            ],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Range {
                partitions: vec![
                    PartitionSpec {
                        name: "P1".into(),
                        less_than: Some(100),
                    },
                    PartitionSpec {
                        name: "P2".into(),
                        less_than: Some(200),
                    },
                ],
            },
        },
        TableSpec {
            pdb: None,
            owner: "APP".into(),
            name: "CODES".into(),
            columns: vec![col("CODE", "VARCHAR2(10)"), col("LABEL", "NVARCHAR2(60)")],
            primary_key: vec!["CODE".into()],
            unique_indexes: vec![],
            organization: Organization::Iot,
        },
        TableSpec {
            pdb: None,
            owner: "HR".into(),
            name: "AUDIT_LOG".into(),
            columns: vec![col("ID", "NUMBER(10)"), col("MSG", "VARCHAR2(200)")],
            primary_key: vec!["ID".into()],
            unique_indexes: vec![],
            organization: Organization::Heap,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_with_parameters() {
        let c = |t: &str| column_def(&col("C", t), 1).unwrap();
        let n = c("NUMBER(12,2)");
        assert_eq!((n.precision, n.scale), (Some(12), Some(2)));
        let n = c("NUMBER");
        assert_eq!((n.precision, n.scale), (None, None));
        assert_eq!(c("CHAR(8)").length, 8);
        assert_eq!(c("TIMESTAMP(9) WITH TIME ZONE").scale, Some(9));
        let ds = c("INTERVAL DAY(5) TO SECOND(6)");
        assert_eq!((ds.precision, ds.scale), (Some(5), Some(6)));
        assert_eq!(c("INTERVAL YEAR(4) TO MONTH").precision, Some(4));
        assert!(column_def(&col("C", "SDO_GEOMETRY"), 1).is_err());
    }
}
