//! The SQL of snapshot reads and what their rows become: pure functions, shape-tested here
//! without a database (the reader itself is `snapshot.rs`, feature `oracle`).
//!
//! ```text
//!   session   NLS_SESSION (the mining session's formats) + SNAPSHOT_SESSION (binary sort)
//!             set_container("PDB") before a PDB's table when the session is elsewhere
//!   estimate  TABLE_ESTIMATE: ALL_TABLES.NUM_ROWS, BLOCKS                (:1 owner, :2 name)
//!   read      SELECT <read expr> C1, …, ROWIDTOCHAR(ROWID) CDC$ROWID
//!               FROM "O"."T" AS OF SCN :scn
//!              WHERE <after> AND <through> AND (<condition>)
//!              ORDER BY <key columns | ROWID> FETCH FIRST :limit ROWS ONLY
//!   boundary  SELECT <key read exprs> FROM (SELECT <key>, ROW_NUMBER() OVER (ORDER BY <key>)
//!               CDC$RN FROM "O"."T" AS OF SCN :scn WHERE <after> AND (<condition>))
//!              WHERE MOD(CDC$RN, :every) = 0 AND CDC$RN <= :every * :max ORDER BY CDC$RN
//!
//!   row texts ──literal()──► insert into "S"."T"("C0",…) values (TO_DATE('…', '…'),…)
//!             ──decode::parse_statement──► Literal ──decode::convert(literal, column)──► Value
//! ```
//!
//! Every value a statement takes is a bind variable, each placeholder used once (`:1`, `:2`,
//! … in the order they appear); table and column names come from the dictionary and are
//! quoted. A row's values are selected as text in the formats the mining session writes
//! SQL_REDO in, wrapped in the literal LogMiner writes for the column's type and converted by
//! the decoder's own conversion: a snapshot record and a streamed record of the same row hold
//! the same values.
//!
//! What each column type is selected as:
//!
//! | type | selected as | literal converted |
//! |---|---|---|
//! | NUMBER, FLOAT | `TO_CHAR(c, 'TM9')` | `'…'` |
//! | BINARY_FLOAT, BINARY_DOUBLE | `TO_CHAR(c)` (`1.5E+000`, `Inf`, `Nan`) | `'…'` |
//! | CHAR, VARCHAR2, NCHAR, NVARCHAR2, LONG | `c` (text, padding kept) | `'…'` |
//! | DATE | `TO_CHAR(c, 'SYYYY-MM-DD HH24:MI:SS')` | `TO_DATE('…', 'SYYYY-MM-DD HH24:MI:SS')` |
//! | TIMESTAMP | `TO_CHAR(c, 'SYYYY-MM-DD HH24:MI:SS.FF9')` | `TO_TIMESTAMP('…')` |
//! | TIMESTAMP WITH TIME ZONE | `TO_CHAR(c, '… .FF9 TZH:TZM')` | `TO_TIMESTAMP_TZ('…')` |
//! | TIMESTAMP WITH LOCAL TIME ZONE | `TO_CHAR(c, '… .FF9')` in the session zone (UTC) | `TO_TIMESTAMP_TZ('…')` |
//! | INTERVAL YEAR TO MONTH, DAY TO SECOND | `TO_CHAR(c)` | `TO_YMINTERVAL('…')`, `TO_DSINTERVAL('…')` |
//! | RAW | `RAWTOHEX(c)` | `HEXTORAW('…')` |
//! | LONG RAW | `c` as bytes (no function takes a LONG RAW), hex-encoded | `HEXTORAW('…')` |
//! | ROWID, UROWID | `ROWIDTOCHAR(c)`, `CAST(c AS VARCHAR2(4000))` | `'…'` |
//! | CLOB, NCLOB, BLOB, XMLTYPE | whether it is NULL | NULL, else unavailable |
//! | JSON, BOOLEAN, VECTOR, other types | whether it is NULL | NULL, else unsupported |
//!
//! LOB and XMLTYPE contents are not read: the stream does not assemble LOB values from their
//! LOB_WRITE rows yet and never carries XMLTYPE content, so a non-NULL one is published as
//! unavailable, as the stream publishes a LOB value that is not in the DML row.
//!
//! A LONG or LONG RAW column may not stand in a subquery's select list (ORA-00997), and Oracle
//! runs a row-limiting clause as a subquery around the query; so a read that selects one has
//! no `FETCH FIRST`, and the reader stops at the limit itself.

use std::fmt::Write as _;

use cdc_core::table::quote_identifier;
use cdc_core::{ColumnDef, ColumnType, OracleDateTime, Scn, TableId, TableLayout, TimeZone, Value};

use super::sql::{Bind, Statement};
use crate::decode::{convert, parse_statement};
use crate::source::{SnapshotBound, SnapshotOrder, SnapshotQuery, SourceError};

/// Set on a snapshot session after the mining session's NLS formats (`sql::NLS_SESSION`).
/// Chunks are ordered by `ORDER BY` (which sorts by NLS_SORT) and bounded by `>`/`<=`
/// (which compare by NLS_COMP): both binary, so a chunk's bound and the next chunk's order
/// agree whatever the client's NLS_LANG, and a key index (binary) can serve the order.
pub const SNAPSHOT_SESSION: [&str; 2] = [
    "ALTER SESSION SET NLS_SORT = BINARY",
    "ALTER SESSION SET NLS_COMP = BINARY",
];

/// The optimizer statistics a plan of chunks starts from. Binds: `:1` OWNER, `:2` TABLE_NAME.
/// Run in the table's container (ALL_TABLES shows the current one).
pub const TABLE_ESTIMATE: &str =
    "SELECT NUM_ROWS, BLOCKS FROM ALL_TABLES WHERE OWNER = :1 AND TABLE_NAME = :2";

/// The date format the mining session writes DATE values in (`NLS_DATE_FORMAT`).
const DATE_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS";
/// `NLS_TIMESTAMP_FORMAT` of the mining session.
const TIMESTAMP_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS.FF9";
/// `NLS_TIMESTAMP_TZ_FORMAT` of the mining session.
const TIMESTAMP_TZ_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM";
/// A TIMESTAMP WITH TIME ZONE bound whose zone is a region name.
const TIMESTAMP_TZR_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS.FF9 TZR";

/// The alias of the ROWID in a read's select list.
const ROWID_ALIAS: &str = "CDC$ROWID";
/// The alias of the row number in a boundary query.
const ROW_NUMBER_ALIAS: &str = "CDC$RN";
/// The alias of the ROWID inside a boundary query in ROWID order.
const INNER_ROWID_ALIAS: &str = "CDC$RID";

/// Switches a snapshot session into a container. A common user at the CDB root cannot query a
/// PDB's tables (its privileges apply in the current container only); `CONTAINERS()` reads
/// across PDBs but takes no flashback clause, so the session moves into the PDB. Needs the
/// SET CONTAINER privilege (granted commonly, or in that PDB). A PDB name is an identifier
/// from `V$CONTAINERS`, quoted as one (it cannot be a bind).
pub fn set_container(container: &str) -> String {
    format!(
        "ALTER SESSION SET CONTAINER = {}",
        quote_identifier(container)
    )
}

/// The container a session must switch to before reading `table`, if any: the table's PDB,
/// or for a table without one (a non-CDB, or the CDB root) the container the session opened
/// in. `current` is where the session is now, `home` where it opened (`None` in a non-CDB,
/// which has no containers).
pub fn container_switch<'a>(
    current: Option<&str>,
    home: Option<&'a str>,
    table: &'a TableId,
) -> Option<&'a str> {
    let wanted = table.pdb.as_deref().or(home)?;
    (current != Some(wanted)).then_some(wanted)
}

/// Why a snapshot statement could not be built or a row not read. No variant quotes a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotSqlError {
    #[error("SCN {0} is beyond what Oracle takes as a bind (a signed 64-bit number)")]
    ScnOutOfRange(Scn),
    #[error("column index {index} of a snapshot read is not a column of {table}")]
    UnknownColumn { table: TableId, index: u16 },
    #[error("key column {column} is not a column of {table}")]
    UnknownKeyColumn { table: TableId, column: String },
    #[error("{table} is read in key order, but the key names no column")]
    EmptyKey { table: TableId },
    #[error("a {bound} bound cannot bound a read of {table} in {order} order")]
    BoundOrder {
        table: TableId,
        bound: &'static str,
        order: &'static str,
    },
    #[error("a bound of {table} has {values} values for its {columns} key columns")]
    BoundArity {
        table: TableId,
        values: usize,
        columns: usize,
    },
    #[error(
        "key column {column} of {table} is NULL in a chunk bound: rows are compared by their key, and NULL compares with nothing"
    )]
    NullKey { table: TableId, column: String },
    #[error("key column {column} of {table} holds a value no chunk bound can be written for")]
    KeyType { table: TableId, column: String },
    #[error("snapshot chunks of {table} cannot end every 0 rows")]
    ZeroChunk { table: TableId },
    #[error("a value of {table} column {column} did not convert: {reason}")]
    Convert {
        table: TableId,
        column: String,
        reason: &'static str,
    },
    #[error("a row of {table} did not read as literals: {reason}")]
    Literals { table: TableId, reason: String },
}

impl From<SnapshotSqlError> for SourceError {
    fn from(e: SnapshotSqlError) -> SourceError {
        match e {
            // a value the decoder refuses, as a mined row's would be: a type conversion
            SnapshotSqlError::Convert { .. } | SnapshotSqlError::Literals { .. } => {
                SourceError::Driver {
                    message: e.to_string(),
                }
            }
            _ => SourceError::Invalid {
                message: e.to_string(),
            },
        }
    }
}

/// What a selected column's text becomes: the literal LogMiner writes for its type, or (for a
/// value not read) what a non-NULL one is published as.
#[derive(Debug, Clone, PartialEq)]
pub enum TextForm {
    /// `'…'`: numbers, binary floats, text, ROWIDs.
    Quoted,
    /// `TO_DATE('…', 'SYYYY-MM-DD HH24:MI:SS')`.
    ToDate,
    /// `TO_TIMESTAMP('…')`.
    ToTimestamp,
    /// `TO_TIMESTAMP_TZ('…')`, with a zone (WITH TIME ZONE) or without (WITH LOCAL TIME ZONE).
    ToTimestampTz,
    /// `TO_YMINTERVAL('…')`.
    ToYmInterval,
    /// `TO_DSINTERVAL('…')`.
    ToDsInterval,
    /// `HEXTORAW('…')` of the hex digits `RAWTOHEX` gives.
    HexToRaw,
    /// `HEXTORAW('…')` of the bytes of a LONG RAW, fetched as bytes and hex-encoded by the
    /// reader.
    LongRaw,
    /// Only whether the value is NULL is selected; a non-NULL one is this value.
    Presence(Value),
}

/// One item of a select list: a layout column, the expression that selects it as text, and
/// what that text becomes.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnRead {
    /// Index into the layout's columns.
    pub column: u16,
    pub expr: String,
    pub form: TextForm,
}

impl ColumnRead {
    /// Whether the reader fetches the value as bytes (LONG RAW) rather than as text.
    pub fn fetches_bytes(&self) -> bool {
        self.form == TextForm::LongRaw
    }
}

/// The expression selecting `column` (a quoted column name, or an inline view's column) of
/// type `ty` as text, and what that text becomes.
pub fn column_read(column: &str, ty: &ColumnType) -> (String, TextForm) {
    let presence = |value: Value| {
        (
            format!("CASE WHEN {column} IS NULL THEN NULL ELSE 'x' END"),
            TextForm::Presence(value),
        )
    };
    match ty {
        ColumnType::Number | ColumnType::Float => {
            (format!("TO_CHAR({column}, 'TM9')"), TextForm::Quoted)
        }
        ColumnType::BinaryFloat | ColumnType::BinaryDouble => {
            (format!("TO_CHAR({column})"), TextForm::Quoted)
        }
        ColumnType::Char
        | ColumnType::Varchar2
        | ColumnType::NChar
        | ColumnType::NVarchar2
        | ColumnType::Long => (column.to_owned(), TextForm::Quoted),
        ColumnType::Date => (
            format!("TO_CHAR({column}, '{DATE_FORMAT}')"),
            TextForm::ToDate,
        ),
        ColumnType::Timestamp => (
            format!("TO_CHAR({column}, '{TIMESTAMP_FORMAT}')"),
            TextForm::ToTimestamp,
        ),
        ColumnType::TimestampTz => (
            format!("TO_CHAR({column}, '{TIMESTAMP_TZ_FORMAT}')"),
            TextForm::ToTimestampTz,
        ),
        // rendered in the session's time zone, which the engine sets to UTC: the form of a
        // LOCAL TIME ZONE literal in SQL_REDO
        ColumnType::TimestampLtz => (
            format!("TO_CHAR({column}, '{TIMESTAMP_FORMAT}')"),
            TextForm::ToTimestampTz,
        ),
        ColumnType::IntervalYm => (format!("TO_CHAR({column})"), TextForm::ToYmInterval),
        ColumnType::IntervalDs => (format!("TO_CHAR({column})"), TextForm::ToDsInterval),
        ColumnType::Raw => (format!("RAWTOHEX({column})"), TextForm::HexToRaw),
        ColumnType::LongRaw => (column.to_owned(), TextForm::LongRaw),
        ColumnType::RowId => (format!("ROWIDTOCHAR({column})"), TextForm::Quoted),
        ColumnType::URowId => (
            format!("CAST({column} AS VARCHAR2(4000))"),
            TextForm::Quoted,
        ),
        ColumnType::Clob | ColumnType::NClob | ColumnType::Blob | ColumnType::XmlType => {
            presence(Value::Unavailable)
        }
        ColumnType::Json | ColumnType::Boolean | ColumnType::Vector | ColumnType::Other(_) => {
            presence(Value::Unsupported)
        }
    }
}

/// `text` between single quotes, each quote inside doubled: a SQL string literal.
fn write_quoted(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('\'');
    for (i, part) in text.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.push_str(part);
    }
    out.push('\'');
}

/// Writes the literal of a selected text in `form` (nothing for [`TextForm::Presence`], which
/// is no literal).
fn write_literal(out: &mut String, form: &TextForm, text: &str) {
    let (open, close) = match form {
        TextForm::Quoted => ("", ""),
        TextForm::ToDate => ("TO_DATE(", ", 'SYYYY-MM-DD HH24:MI:SS')"),
        TextForm::ToTimestamp => ("TO_TIMESTAMP(", ")"),
        TextForm::ToTimestampTz => ("TO_TIMESTAMP_TZ(", ")"),
        TextForm::ToYmInterval => ("TO_YMINTERVAL(", ")"),
        TextForm::ToDsInterval => ("TO_DSINTERVAL(", ")"),
        TextForm::HexToRaw | TextForm::LongRaw => ("HEXTORAW(", ")"),
        TextForm::Presence(_) => return,
    };
    out.push_str(open);
    write_quoted(out, text);
    out.push_str(close);
}

/// Lower-case hex digits of `bytes` (what `HEXTORAW` reads back).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// The values of one fetched row: `texts[i]` is what `reads[i]` selected (`None` for NULL;
/// a LONG RAW's bytes already [`hex`]-encoded). The texts are written as the literals
/// SQL_REDO holds for their types, read by the decoder's parser and converted by its
/// conversion, so each value is the one a streamed change of the row would carry.
pub fn convert_row(
    table: &TableId,
    layout: &TableLayout,
    reads: &[ColumnRead],
    texts: &[Option<String>],
) -> Result<Vec<Value>, SnapshotSqlError> {
    let mut values = vec![Value::Null; reads.len()];
    // the literals of one row in one statement, parsed once: `"C<i>"` names `reads[i]`
    let mut sql = String::from("insert into \"S\".\"T\"(");
    let mut literals = String::new();
    let mut literal_of: Vec<usize> = Vec::new();
    for (i, (read, text)) in reads.iter().zip(texts).enumerate() {
        match (text, &read.form) {
            (None, _) => {}
            (Some(_), TextForm::Presence(value)) => values[i] = value.clone(),
            (Some(text), form) => {
                if !literal_of.is_empty() {
                    sql.push(',');
                    literals.push(',');
                }
                let _ = write!(sql, "\"C{i}\"");
                write_literal(&mut literals, form, text);
                literal_of.push(i);
            }
        }
    }
    if literal_of.is_empty() {
        return Ok(values);
    }
    sql.push_str(") values (");
    sql.push_str(&literals);
    sql.push(')');
    let literals_error = |reason: String| SnapshotSqlError::Literals {
        table: table.clone(),
        reason,
    };
    let statement = parse_statement(&sql).map_err(|e| literals_error(e.to_string()))?;
    let items = statement.assignments();
    if items.len() != literal_of.len() {
        return Err(literals_error(format!(
            "{} literals read for {} values",
            items.len(),
            literal_of.len()
        )));
    }
    for (item, &i) in items.iter().zip(&literal_of) {
        let def = column_def(table, layout, reads[i].column)?;
        values[i] = convert(&item.value, def).map_err(|e| SnapshotSqlError::Convert {
            table: table.clone(),
            column: def.name.clone(),
            reason: e.reason(),
        })?;
    }
    Ok(values)
}

fn column_def<'a>(
    table: &TableId,
    layout: &'a TableLayout,
    index: u16,
) -> Result<&'a ColumnDef, SnapshotSqlError> {
    layout
        .columns
        .get(usize::from(index))
        .ok_or_else(|| SnapshotSqlError::UnknownColumn {
            table: table.clone(),
            index,
        })
}

/// A statement being written: each bind gets the next placeholder.
struct Builder {
    text: String,
    binds: Vec<Bind>,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            text: String::with_capacity(256),
            binds: Vec::new(),
        }
    }

    /// Appends the next placeholder, bound to `bind`.
    fn bind(&mut self, bind: Bind) {
        self.binds.push(bind);
        let _ = write!(self.text, ":{}", self.binds.len());
    }

    /// Appends `open`, the next placeholder bound to `text`, and `close`.
    fn bind_wrapped(&mut self, wrapped: &BoundValue) {
        self.text.push_str(wrapped.open);
        self.bind(Bind::Text(wrapped.text.clone()));
        self.text.push_str(&wrapped.close);
    }

    fn finish(self) -> Statement {
        Statement {
            text: self.text,
            binds: self.binds,
        }
    }
}

fn scn_bind(scn: Scn) -> Result<Bind, SnapshotSqlError> {
    i64::try_from(scn.get())
        .map(Bind::Int)
        .map_err(|_| SnapshotSqlError::ScnOutOfRange(scn))
}

/// A count as a bind; counts beyond a signed 64-bit number mean "all" and are capped.
fn count_bind(n: u64) -> Bind {
    Bind::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A key value as a bind: its text, and the SQL around the placeholder that makes it the
/// column's type again (so it compares as the column does, not as text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundValue {
    pub open: &'static str,
    pub text: String,
    pub close: String,
}

/// `SYYYY-MM-DD HH24:MI:SS`: a blank or `-` before a four-digit year, as TO_CHAR writes it.
fn write_datetime(out: &mut String, t: &OracleDateTime) {
    let sign = if t.year < 0 { '-' } else { ' ' };
    let _ = write!(
        out,
        "{sign}{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        i32::from(t.year).unsigned_abs(),
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second
    );
}

fn datetime_text(t: &OracleDateTime, fraction: bool) -> String {
    let mut out = String::with_capacity(30);
    write_datetime(&mut out, t);
    if fraction {
        let _ = write!(out, ".{:09}", t.nanos);
    }
    out
}

/// Text Oracle's `TO_BINARY_*` reads back to the same value: the shortest decimal that
/// round-trips, and Oracle's names of the special values.
fn float_text(v: f64, shortest: String) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "INF" } else { "-INF" }.to_owned()
    } else {
        shortest
    }
}

/// The bind of one key value in a column of type `ty`; `None` for a value no bound can be
/// written for (NULL, a LOB, an unavailable or unsupported value).
pub fn bound_value(ty: &ColumnType, value: &Value) -> Option<BoundValue> {
    let plain = |open: &'static str, text: String, close: &str| {
        Some(BoundValue {
            open,
            text,
            close: close.to_owned(),
        })
    };
    match value {
        Value::Number(d) => plain("TO_NUMBER(", d.to_string(), ")"),
        Value::BinaryFloat(f) => plain(
            "TO_BINARY_FLOAT(",
            float_text(f64::from(*f), format!("{f:E}")),
            ")",
        ),
        Value::BinaryDouble(f) => plain("TO_BINARY_DOUBLE(", float_text(*f, format!("{f:E}")), ")"),
        // NCHAR text goes as UNISTR escapes: a bind is sent in the database character set,
        // which need not hold every national character
        Value::Text(s) if matches!(ty, ColumnType::NChar | ColumnType::NVarchar2) => {
            plain("UNISTR(", unistr_escape(s), ")")
        }
        Value::Text(s) if matches!(ty, ColumnType::Char | ColumnType::Varchar2) => {
            plain("", s.clone(), "")
        }
        Value::Raw(b) => plain("HEXTORAW(", hex(b), ")"),
        Value::Date(t) => plain(
            "TO_DATE(",
            datetime_text(t, false),
            &format!(", '{DATE_FORMAT}')"),
        ),
        Value::Timestamp(t) => plain(
            "TO_TIMESTAMP(",
            datetime_text(t, true),
            &format!(", '{TIMESTAMP_FORMAT}')"),
        ),
        Value::TimestampTz(t, zone) => {
            let format = match zone {
                TimeZone::Offset(_) => TIMESTAMP_TZ_FORMAT,
                TimeZone::Region(_) => TIMESTAMP_TZR_FORMAT,
            };
            plain(
                "TO_TIMESTAMP_TZ(",
                format!("{} {zone}", datetime_text(t, true)),
                &format!(", '{format}')"),
            )
        }
        // the value is UTC (the decoder reads LOCAL TIME ZONE literals as UTC): made a UTC
        // TIMESTAMP WITH TIME ZONE, it compares right whatever the session's zone
        Value::TimestampLtz(t) => plain(
            "FROM_TZ(TO_TIMESTAMP(",
            datetime_text(t, true),
            &format!(", '{TIMESTAMP_FORMAT}'), '+00:00')"),
        ),
        Value::IntervalYm(months) => {
            let sign = if *months < 0 { '-' } else { '+' };
            let m = months.unsigned_abs();
            plain(
                "TO_YMINTERVAL(",
                format!("{sign}{}-{:02}", m / 12, m % 12),
                ")",
            )
        }
        Value::IntervalDs(nanos) => {
            let n = nanos.get();
            let sign = if n < 0 { '-' } else { '+' };
            let n = n.unsigned_abs();
            let secs = n / 1_000_000_000;
            plain(
                "TO_DSINTERVAL(",
                format!(
                    "{sign}{} {:02}:{:02}:{:02}.{:09}",
                    secs / 86_400,
                    secs / 3600 % 24,
                    secs / 60 % 60,
                    secs % 60,
                    n % 1_000_000_000
                ),
                ")",
            )
        }
        Value::RowId(r) if *ty == ColumnType::RowId => plain("CHARTOROWID(", r.clone(), ")"),
        // a logical UROWID (of an index-organized table) is no ROWID: compared as the column
        // converts the text
        Value::RowId(r) => plain("", r.clone(), ""),
        Value::Null
        | Value::Text(_)
        | Value::EmptyLob
        | Value::Unavailable
        | Value::Unsupported => None,
    }
}

/// `UNISTR`'s argument for `text`: printable ASCII as is (a backslash doubled), every other
/// character as `\XXXX` UTF-16 units. All ASCII, so no character set on the way loses any.
pub fn unistr_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\{unit:04X}");
                }
            }
        }
    }
    out
}

/// The key of a read in key order: each key column's layout index and quoted name.
struct Key<'a> {
    columns: Vec<(u16, &'a ColumnDef, String)>,
}

fn resolve_key<'a>(
    table: &TableId,
    layout: &'a TableLayout,
    names: &[String],
) -> Result<Key<'a>, SnapshotSqlError> {
    if names.is_empty() {
        return Err(SnapshotSqlError::EmptyKey {
            table: table.clone(),
        });
    }
    let columns = names
        .iter()
        .map(|name| {
            layout
                .columns
                .iter()
                .enumerate()
                .find(|(_, c)| &c.name == name)
                .and_then(|(i, c)| Some((u16::try_from(i).ok()?, c, quote_identifier(name))))
                .ok_or_else(|| SnapshotSqlError::UnknownKeyColumn {
                    table: table.clone(),
                    column: name.clone(),
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(Key { columns })
}

/// Which side of a chunk a bound closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Rows strictly after the bound.
    After,
    /// Rows up to and including the bound.
    Through,
}

/// Appends the predicate of a bound: for a key, the row-value comparison written out,
/// `(K1 > :1 OR (K1 = :2 AND K2 > :3))` after and `(K1 < :1 OR (K1 = :2 AND K2 <= :3))`
/// through, with the leading column's range first (`K1 >= :n AND …`) so the optimizer can
/// start an index range scan there; for a ROWID, `ROWID > CHARTOROWID(:n)`.
fn write_bound(
    b: &mut Builder,
    table: &TableId,
    key: Option<&Key<'_>>,
    bound: &SnapshotBound,
    side: Side,
) -> Result<(), SnapshotSqlError> {
    let (strict, last, leading) = match side {
        Side::After => (" > ", " > ", " >= "),
        Side::Through => (" < ", " <= ", " <= "),
    };
    match (key, bound) {
        (None, SnapshotBound::RowId(row_id)) => {
            b.text.push_str(match side {
                Side::After => "ROWID > CHARTOROWID(",
                Side::Through => "ROWID <= CHARTOROWID(",
            });
            b.bind(Bind::Text(row_id.clone()));
            b.text.push(')');
            Ok(())
        }
        (Some(key), SnapshotBound::Key(values)) => {
            if values.len() != key.columns.len() {
                return Err(SnapshotSqlError::BoundArity {
                    table: table.clone(),
                    values: values.len(),
                    columns: key.columns.len(),
                });
            }
            let bound: Vec<BoundValue> = key
                .columns
                .iter()
                .zip(values)
                .map(|((_, def, _), value)| match value {
                    Value::Null => Err(SnapshotSqlError::NullKey {
                        table: table.clone(),
                        column: def.name.clone(),
                    }),
                    value => bound_value(&def.data_type, value).ok_or_else(|| {
                        SnapshotSqlError::KeyType {
                            table: table.clone(),
                            column: def.name.clone(),
                        }
                    }),
                })
                .collect::<Result<_, _>>()?;
            let n = key.columns.len();
            if n == 1 {
                b.text.push_str(&key.columns[0].2);
                b.text.push_str(last);
                b.bind_wrapped(&bound[0]);
                return Ok(());
            }
            b.text.push('(');
            b.text.push_str(&key.columns[0].2);
            b.text.push_str(leading);
            b.bind_wrapped(&bound[0]);
            b.text.push_str(" AND ");
            for (i, ((_, _, name), value)) in key.columns.iter().zip(&bound).enumerate() {
                if i + 1 == n {
                    b.text.push_str(name);
                    b.text.push_str(last);
                    b.bind_wrapped(value);
                } else {
                    b.text.push('(');
                    b.text.push_str(name);
                    b.text.push_str(strict);
                    b.bind_wrapped(value);
                    b.text.push_str(" OR (");
                    b.text.push_str(name);
                    b.text.push_str(" = ");
                    b.bind_wrapped(value);
                    b.text.push_str(" AND ");
                }
            }
            // each column but the last opened `(` and `(`
            for _ in 0..2 * (n - 1) {
                b.text.push(')');
            }
            b.text.push(')');
            Ok(())
        }
        (Some(_), SnapshotBound::RowId(_)) => Err(SnapshotSqlError::BoundOrder {
            table: table.clone(),
            bound: "ROWID",
            order: "key",
        }),
        (None, SnapshotBound::Key(_)) => Err(SnapshotSqlError::BoundOrder {
            table: table.clone(),
            bound: "key",
            order: "ROWID",
        }),
    }
}

/// Appends ` WHERE a AND b AND (condition)` for whichever of the bounds and the condition
/// the query has (nothing when none).
fn write_where(
    b: &mut Builder,
    query: &SnapshotQuery,
    key: Option<&Key<'_>>,
    through: bool,
) -> Result<(), SnapshotSqlError> {
    let mut first = true;
    let mut and = |b: &mut Builder| {
        b.text.push_str(if first { " WHERE " } else { " AND " });
        first = false;
    };
    if let Some(after) = &query.after {
        and(b);
        write_bound(b, &query.table, key, after, Side::After)?;
    }
    if through && let Some(through) = &query.through {
        and(b);
        write_bound(b, &query.table, key, through, Side::Through)?;
    }
    if let Some(condition) = &query.condition {
        and(b);
        b.text.push('(');
        b.text.push_str(condition);
        b.text.push(')');
    }
    Ok(())
}

fn write_order(b: &mut Builder, key: Option<&Key<'_>>) {
    match key {
        Some(key) => {
            for (i, (_, _, name)) in key.columns.iter().enumerate() {
                b.text.push_str(if i == 0 { "" } else { ", " });
                b.text.push_str(name);
            }
        }
        None => b.text.push_str("ROWID"),
    }
}

/// A chunk read: its statement and how its select list reads back.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadPlan {
    pub statement: Statement,
    /// The select list before the ROWID: the query's columns, in its order, then any key
    /// column it does not select (read for the row's bound only).
    pub reads: Vec<ColumnRead>,
    /// How many of `reads` are the query's columns, i.e. the row's values.
    pub selected: usize,
    /// In key order, each key column's index into `reads`; `None` in ROWID order.
    pub key: Option<Vec<usize>>,
    /// At most this many rows: the statement's `FETCH FIRST`, or, when it has none because a
    /// LONG column is selected, the reader's own stop.
    pub limit: Option<u64>,
}

/// The chunk read of `query`.
pub fn read_statement(query: &SnapshotQuery) -> Result<ReadPlan, SnapshotSqlError> {
    let table = &query.table;
    let layout = &*query.layout;
    let mut reads = Vec::with_capacity(query.columns.len() + 1);
    for &index in &query.columns {
        let def = column_def(table, layout, index)?;
        let (expr, form) = column_read(&quote_identifier(&def.name), &def.data_type);
        reads.push(ColumnRead {
            column: index,
            expr,
            form,
        });
    }
    let selected = reads.len();
    let key = match &query.order {
        SnapshotOrder::Key(names) => Some(resolve_key(table, layout, names)?),
        SnapshotOrder::RowId => None,
    };
    let key_reads = key.as_ref().map(|key| {
        key.columns
            .iter()
            .map(|(index, def, name)| {
                if let Some(at) = reads.iter().position(|r| r.column == *index) {
                    return at;
                }
                let (expr, form) = column_read(name, &def.data_type);
                reads.push(ColumnRead {
                    column: *index,
                    expr,
                    form,
                });
                reads.len() - 1
            })
            .collect::<Vec<_>>()
    });
    let has_long = reads.iter().any(|r| {
        let ty = layout
            .columns
            .get(usize::from(r.column))
            .map(|c| &c.data_type);
        matches!(ty, Some(ColumnType::Long | ColumnType::LongRaw))
    });
    let mut b = Builder::new();
    b.text.push_str("SELECT ");
    // every item aliased: a row-limiting clause refuses two select items of one name
    // (ORA-00918), and the aliases cannot collide with one another
    for (i, read) in reads.iter().enumerate() {
        let _ = write!(b.text, "{} C{}, ", read.expr, i + 1);
    }
    let _ = write!(
        b.text,
        "ROWIDTOCHAR(ROWID) {ROWID_ALIAS} FROM {} AS OF SCN ",
        table.quoted()
    );
    b.bind(scn_bind(query.scn)?);
    write_where(&mut b, query, key.as_ref(), true)?;
    b.text.push_str(" ORDER BY ");
    write_order(&mut b, key.as_ref());
    if let Some(limit) = query.limit
        && !has_long
    {
        b.text.push_str(" FETCH FIRST ");
        b.bind(count_bind(limit));
        b.text.push_str(" ROWS ONLY");
    }
    Ok(ReadPlan {
        statement: b.finish(),
        reads,
        selected,
        key: key_reads,
        limit: query.limit,
    })
}

/// A boundary query: its statement and, in key order, how its key columns read back (in
/// ROWID order it selects the ROWID's text alone).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryPlan {
    pub statement: Statement,
    /// The key columns' reads, in key order; `None` in ROWID order.
    pub key: Option<Vec<ColumnRead>>,
}

/// Where chunks of `every` rows of `query`'s table end, from `query.after`: the bound of every
/// `every`-th row, at most `max` of them.
pub fn boundaries_statement(
    query: &SnapshotQuery,
    every: u64,
    max: usize,
) -> Result<BoundaryPlan, SnapshotSqlError> {
    let table = &query.table;
    if every == 0 {
        return Err(SnapshotSqlError::ZeroChunk {
            table: table.clone(),
        });
    }
    let key = match &query.order {
        SnapshotOrder::Key(names) => Some(resolve_key(table, &query.layout, names)?),
        SnapshotOrder::RowId => None,
    };
    let mut b = Builder::new();
    let reads = key.as_ref().map(|key| {
        key.columns
            .iter()
            .map(|(index, def, name)| {
                let (expr, form) = column_read(name, &def.data_type);
                ColumnRead {
                    column: *index,
                    expr,
                    form,
                }
            })
            .collect::<Vec<_>>()
    });
    b.text.push_str("SELECT ");
    match (&key, &reads) {
        (Some(key), Some(reads)) => {
            for (i, read) in reads.iter().enumerate() {
                let _ = write!(
                    b.text,
                    "{}{} C{}",
                    if i == 0 { "" } else { ", " },
                    read.expr,
                    i + 1
                );
            }
            b.text.push_str(" FROM (SELECT ");
            for (_, _, name) in &key.columns {
                b.text.push_str(name);
                b.text.push_str(", ");
            }
        }
        _ => {
            let _ = write!(
                b.text,
                "ROWIDTOCHAR({INNER_ROWID_ALIAS}) {ROWID_ALIAS} FROM (SELECT ROWID {INNER_ROWID_ALIAS}, "
            );
        }
    }
    b.text.push_str("ROW_NUMBER() OVER (ORDER BY ");
    write_order(&mut b, key.as_ref());
    let _ = write!(
        b.text,
        ") {ROW_NUMBER_ALIAS} FROM {} AS OF SCN ",
        table.quoted()
    );
    b.bind(scn_bind(query.scn)?);
    write_where(&mut b, query, key.as_ref(), false)?;
    let _ = write!(b.text, ") WHERE MOD({ROW_NUMBER_ALIAS}, ");
    b.bind(count_bind(every));
    let _ = write!(b.text, ") = 0 AND {ROW_NUMBER_ALIAS} <= ");
    b.bind(count_bind(every));
    b.text.push_str(" * ");
    b.bind(count_bind(u64::try_from(max).unwrap_or(u64::MAX)));
    let _ = write!(b.text, " ORDER BY {ROW_NUMBER_ALIAS}");
    Ok(BoundaryPlan {
        statement: b.finish(),
        key: reads,
    })
}

/// The bound of a row read in key order: the key columns' values.
pub fn key_bound(values: &[Value], key: &[usize]) -> SnapshotBound {
    SnapshotBound::Key(
        key.iter()
            .map(|&i| values.get(i).cloned().unwrap_or(Value::Null))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cdc_core::{Decimal, IntervalNanos, KeySource, SupplementalLogging};

    use super::*;
    use crate::source::oracle::sql::NLS_SESSION;

    fn layout(columns: &[(&str, ColumnType)], key: &[&str]) -> Arc<TableLayout> {
        Arc::new(TableLayout {
            table: TableId::new("APP", "ORDERS"),
            version: 1,
            valid_from: Scn(0),
            columns: columns
                .iter()
                .enumerate()
                .map(|(i, (name, ty))| ColumnDef::new(*name, i as u16 + 1, ty.clone()))
                .collect(),
            key: key.iter().map(|k| (*k).to_owned()).collect(),
            key_source: KeySource::PrimaryKey,
            supplemental: SupplementalLogging::default(),
            segment: Vec::new(),
        })
    }

    fn query(layout: Arc<TableLayout>, order: SnapshotOrder) -> SnapshotQuery {
        SnapshotQuery {
            table: TableId::new("APP", "ORDERS"),
            columns: (0..layout.columns.len() as u16).collect(),
            layout,
            order,
            scn: Scn(5_000_000),
            after: None,
            through: None,
            limit: None,
            condition: None,
            fetch_size: 500,
        }
    }

    fn key_order(names: &[&str]) -> SnapshotOrder {
        SnapshotOrder::Key(names.iter().map(|n| (*n).to_owned()).collect())
    }

    fn number(text: &str) -> Value {
        Value::Number(Decimal::parse(text).unwrap())
    }

    fn count(text: &str, needle: &str) -> usize {
        text.matches(needle).count()
    }

    /// Each placeholder is used once, numbered in the order it appears, one bind each: a
    /// positional bind then fills exactly its own placeholder.
    fn assert_binds_numbered(statement: &Statement) {
        let text = &statement.text;
        let mut placeholders = Vec::new();
        for (at, _) in text.match_indices(':') {
            let digits: String = text[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if !digits.is_empty() {
                placeholders.push(digits.parse::<usize>().unwrap());
            }
        }
        let expected: Vec<usize> = (1..=statement.binds.len()).collect();
        assert_eq!(placeholders, expected, "{text}");
        assert_eq!(count(text, "("), count(text, ")"), "{text}");
    }

    #[test]
    fn a_first_chunk_reads_from_the_start_in_key_order() {
        let l = layout(
            &[("ID", ColumnType::Number), ("NOTE", ColumnType::Varchar2)],
            &["ID"],
        );
        let mut q = query(l, key_order(&["ID"]));
        q.limit = Some(1000);
        let plan = read_statement(&q).unwrap();
        assert_eq!(
            plan.statement.text,
            "SELECT TO_CHAR(\"ID\", 'TM9') C1, \"NOTE\" C2, ROWIDTOCHAR(ROWID) CDC$ROWID \
             FROM \"APP\".\"ORDERS\" AS OF SCN :1 ORDER BY \"ID\" FETCH FIRST :2 ROWS ONLY"
        );
        assert_eq!(
            plan.statement.binds,
            [Bind::Int(5_000_000), Bind::Int(1000)]
        );
        assert_eq!(plan.selected, 2);
        assert_eq!(plan.key, Some(vec![0]));
        assert_eq!(plan.limit, Some(1000));
        assert_binds_numbered(&plan.statement);
    }

    /// A composite key's bounds are the row-value comparison written out, after strictly and
    /// through inclusively, every value a bind; the leading column's range comes first.
    #[test]
    fn composite_key_bounds_are_row_value_comparisons() {
        let l = layout(
            &[
                ("REGION", ColumnType::Varchar2),
                ("ID", ColumnType::Number),
                ("AMOUNT", ColumnType::Number),
            ],
            &["REGION", "ID"],
        );
        let mut q = query(l, key_order(&["REGION", "ID"]));
        q.columns = vec![1, 2];
        q.after = Some(SnapshotBound::Key(vec![
            Value::Text("EU".into()),
            number("41"),
        ]));
        q.through = Some(SnapshotBound::Key(vec![
            Value::Text("US".into()),
            number("7"),
        ]));
        q.condition = Some("AMOUNT > 0".into());
        q.limit = Some(10);
        let plan = read_statement(&q).unwrap();
        let text = &plan.statement.text;
        assert!(
            text.contains(
                " WHERE (\"REGION\" >= :2 AND (\"REGION\" > :3 OR (\"REGION\" = :4 AND \"ID\" > TO_NUMBER(:5))))"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                " AND (\"REGION\" <= :6 AND (\"REGION\" < :7 OR (\"REGION\" = :8 AND \"ID\" <= TO_NUMBER(:9))))"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                " AND (AMOUNT > 0) ORDER BY \"REGION\", \"ID\" FETCH FIRST :10 ROWS ONLY"
            ),
            "{text}"
        );
        assert_eq!(
            plan.statement.binds,
            [
                Bind::Int(5_000_000),
                Bind::Text("EU".into()),
                Bind::Text("EU".into()),
                Bind::Text("EU".into()),
                Bind::Text("41".into()),
                Bind::Text("US".into()),
                Bind::Text("US".into()),
                Bind::Text("US".into()),
                Bind::Text("7".into()),
                Bind::Int(10),
            ]
        );
        // the values are binds, never spliced into the text
        assert!(!text.contains("EU") && !text.contains("'US'"), "{text}");
        // ID and AMOUNT are the row's values; REGION is read for the bound only
        assert_eq!(plan.selected, 2);
        assert_eq!(plan.reads.len(), 3);
        assert_eq!(plan.reads[2].column, 0);
        assert_eq!(plan.key, Some(vec![2, 0]));
        assert_binds_numbered(&plan.statement);
    }

    #[test]
    fn three_key_columns_nest() {
        let l = layout(
            &[
                ("A", ColumnType::Number),
                ("B", ColumnType::Number),
                ("C", ColumnType::Number),
            ],
            &["A", "B", "C"],
        );
        let mut q = query(l, key_order(&["A", "B", "C"]));
        q.after = Some(SnapshotBound::Key(vec![
            number("1"),
            number("2"),
            number("3"),
        ]));
        let plan = read_statement(&q).unwrap();
        assert!(
            plan.statement.text.contains(
                " WHERE (\"A\" >= TO_NUMBER(:2) AND (\"A\" > TO_NUMBER(:3) OR (\"A\" = TO_NUMBER(:4) AND \
                 (\"B\" > TO_NUMBER(:5) OR (\"B\" = TO_NUMBER(:6) AND \"C\" > TO_NUMBER(:7)))))) ORDER BY"
            ),
            "{}",
            plan.statement.text
        );
        assert_eq!(plan.statement.binds.len(), 7);
        assert_binds_numbered(&plan.statement);
    }

    #[test]
    fn a_table_without_a_key_reads_in_rowid_order() {
        let l = layout(&[("NOTE", ColumnType::Varchar2)], &[]);
        let mut q = query(l, SnapshotOrder::RowId);
        q.after = Some(SnapshotBound::RowId("AAASt5AAEAAAACHAAA".into()));
        q.through = Some(SnapshotBound::RowId("AAASt5AAEAAAACHAAZ".into()));
        q.limit = Some(5);
        let plan = read_statement(&q).unwrap();
        assert_eq!(
            plan.statement.text,
            "SELECT \"NOTE\" C1, ROWIDTOCHAR(ROWID) CDC$ROWID FROM \"APP\".\"ORDERS\" AS OF SCN :1 \
             WHERE ROWID > CHARTOROWID(:2) AND ROWID <= CHARTOROWID(:3) ORDER BY ROWID \
             FETCH FIRST :4 ROWS ONLY"
        );
        assert_eq!(plan.key, None);
        assert_eq!(
            plan.statement.binds[1],
            Bind::Text("AAASt5AAEAAAACHAAA".into())
        );
        assert_binds_numbered(&plan.statement);
    }

    /// Names from the dictionary are quoted, a quote inside doubled, lower case kept.
    #[test]
    fn names_are_quoted() {
        let l = layout(&[("we\"ird id", ColumnType::Number)], &["we\"ird id"]);
        let mut q = query(l, key_order(&["we\"ird id"]));
        q.table = TableId::new("app", "Order Lines").in_pdb("PDB1");
        let plan = read_statement(&q).unwrap();
        assert!(
            plan.statement
                .text
                .contains("TO_CHAR(\"we\"\"ird id\", 'TM9') C1"),
            "{}",
            plan.statement.text
        );
        assert!(
            plan.statement
                .text
                .contains(" FROM \"app\".\"Order Lines\" AS OF SCN :1"),
            "{}",
            plan.statement.text
        );
        assert!(plan.statement.text.ends_with("ORDER BY \"we\"\"ird id\""));
    }

    /// A LONG column cannot stand under a row-limiting clause: the limit is the reader's.
    #[test]
    fn a_long_column_moves_the_limit_to_the_reader() {
        for ty in [ColumnType::Long, ColumnType::LongRaw] {
            let l = layout(&[("ID", ColumnType::Number), ("BODY", ty)], &["ID"]);
            let mut q = query(l, key_order(&["ID"]));
            q.limit = Some(50);
            let plan = read_statement(&q).unwrap();
            assert!(!plan.statement.text.contains("FETCH FIRST"));
            assert_eq!(plan.statement.binds.len(), 1);
            assert_eq!(plan.limit, Some(50));
            // without the LONG column the database limits the rows
            q.columns = vec![0];
            let plan = read_statement(&q).unwrap();
            assert!(plan.statement.text.ends_with("FETCH FIRST :2 ROWS ONLY"));
        }
    }

    #[test]
    fn statements_refuse_what_they_cannot_bound() {
        let l = layout(
            &[("ID", ColumnType::Number), ("DOC", ColumnType::Clob)],
            &["ID"],
        );
        let base = query(l, key_order(&["ID"]));
        let err = |q: &SnapshotQuery| read_statement(q).unwrap_err();

        let mut q = base.clone();
        q.after = Some(SnapshotBound::Key(vec![Value::Null]));
        assert!(matches!(err(&q), SnapshotSqlError::NullKey { column, .. } if column == "ID"));

        q.after = Some(SnapshotBound::Key(vec![number("1"), number("2")]));
        assert!(matches!(
            err(&q),
            SnapshotSqlError::BoundArity {
                values: 2,
                columns: 1,
                ..
            }
        ));

        q.after = Some(SnapshotBound::RowId("AAAA".into()));
        assert!(matches!(err(&q), SnapshotSqlError::BoundOrder { .. }));

        q.after = Some(SnapshotBound::Key(vec![Value::Unavailable]));
        assert!(matches!(err(&q), SnapshotSqlError::KeyType { .. }));

        let mut q = base.clone();
        q.order = key_order(&["MISSING"]);
        assert!(matches!(err(&q), SnapshotSqlError::UnknownKeyColumn { .. }));
        q.order = key_order(&[]);
        assert!(matches!(err(&q), SnapshotSqlError::EmptyKey { .. }));

        let mut q = base.clone();
        q.columns = vec![0, 7];
        assert!(matches!(
            err(&q),
            SnapshotSqlError::UnknownColumn { index: 7, .. }
        ));

        let mut q = base.clone();
        q.scn = Scn(u64::MAX);
        assert!(matches!(err(&q), SnapshotSqlError::ScnOutOfRange(_)));

        let mut q = base;
        q.order = SnapshotOrder::RowId;
        q.through = Some(SnapshotBound::Key(vec![number("1")]));
        assert!(matches!(err(&q), SnapshotSqlError::BoundOrder { .. }));
        assert!(matches!(
            boundaries_statement(&q, 0, 10).unwrap_err(),
            SnapshotSqlError::ZeroChunk { .. }
        ));
    }

    /// No error quotes a value, and only the conversion failures read as driver errors.
    #[test]
    fn errors_name_columns_never_values() {
        let l = layout(&[("SECRET", ColumnType::Number)], &["SECRET"]);
        let mut q = query(l, key_order(&["SECRET"]));
        q.after = Some(SnapshotBound::Key(vec![Value::Text("hunter2".into())]));
        let e = read_statement(&q).unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(matches!(SourceError::from(e), SourceError::Invalid { .. }));
        let reads = [ColumnRead {
            column: 0,
            expr: String::new(),
            form: TextForm::Quoted,
        }];
        let e = convert_row(&q.table, &q.layout, &reads, &[Some("hunter2".into())]).unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(e.to_string().contains("SECRET"), "{e}");
        assert!(matches!(SourceError::from(e), SourceError::Driver { .. }));
    }

    #[test]
    fn boundaries_in_key_order() {
        let l = layout(
            &[
                ("REGION", ColumnType::Char),
                ("AT", ColumnType::Date),
                ("NOTE", ColumnType::Varchar2),
            ],
            &["REGION", "AT"],
        );
        let mut q = query(l, key_order(&["REGION", "AT"]));
        q.condition = Some("NOTE IS NOT NULL".into());
        q.through = Some(SnapshotBound::Key(vec![
            Value::Text("ZZ".into()),
            Value::Null,
        ]));
        q.limit = Some(3);
        let plan = boundaries_statement(&q, 10_000, 64).unwrap();
        assert_eq!(
            plan.statement.text,
            "SELECT \"REGION\" C1, TO_CHAR(\"AT\", 'SYYYY-MM-DD HH24:MI:SS') C2 FROM \
             (SELECT \"REGION\", \"AT\", ROW_NUMBER() OVER (ORDER BY \"REGION\", \"AT\") CDC$RN \
             FROM \"APP\".\"ORDERS\" AS OF SCN :1 WHERE (NOTE IS NOT NULL)) \
             WHERE MOD(CDC$RN, :2) = 0 AND CDC$RN <= :3 * :4 ORDER BY CDC$RN"
        );
        // `through` and `limit` are not the boundary query's
        assert_eq!(
            plan.statement.binds,
            [
                Bind::Int(5_000_000),
                Bind::Int(10_000),
                Bind::Int(10_000),
                Bind::Int(64)
            ]
        );
        let key = plan.key.unwrap();
        assert_eq!(key.len(), 2);
        assert_eq!(key[1].form, TextForm::ToDate);
        assert_binds_numbered(&plan.statement);

        // from a bound: the after predicate in the inner query
        q.after = Some(SnapshotBound::Key(vec![
            Value::Text("EU".into()),
            Value::Date(OracleDateTime::new(2026, 2, 28, 13, 45, 59, 0).unwrap()),
        ]));
        let plan = boundaries_statement(&q, 100, 8).unwrap();
        assert!(
            plan.statement.text.contains(
                "AS OF SCN :1 WHERE (\"REGION\" >= :2 AND (\"REGION\" > :3 OR (\"REGION\" = :4 AND \
                 \"AT\" > TO_DATE(:5, 'SYYYY-MM-DD HH24:MI:SS')))) AND (NOTE IS NOT NULL))"
            ),
            "{}",
            plan.statement.text
        );
        assert_eq!(
            plan.statement.binds[4],
            Bind::Text(" 2026-02-28 13:45:59".into())
        );
        assert_binds_numbered(&plan.statement);
    }

    #[test]
    fn boundaries_in_rowid_order() {
        let l = layout(&[("NOTE", ColumnType::Varchar2)], &[]);
        let mut q = query(l, SnapshotOrder::RowId);
        q.after = Some(SnapshotBound::RowId("AAASt5AAEAAAACHAAA".into()));
        let plan = boundaries_statement(&q, 500, usize::MAX).unwrap();
        assert_eq!(
            plan.statement.text,
            "SELECT ROWIDTOCHAR(CDC$RID) CDC$ROWID FROM (SELECT ROWID CDC$RID, \
             ROW_NUMBER() OVER (ORDER BY ROWID) CDC$RN FROM \"APP\".\"ORDERS\" AS OF SCN :1 \
             WHERE ROWID > CHARTOROWID(:2)) WHERE MOD(CDC$RN, :3) = 0 AND CDC$RN <= :4 * :5 \
             ORDER BY CDC$RN"
        );
        assert_eq!(plan.key, None);
        assert_eq!(plan.statement.binds[4], Bind::Int(i64::MAX));
        assert_binds_numbered(&plan.statement);
    }

    /// The session the reader prepares: the mining session's formats (which the select
    /// expressions' formats repeat), then binary sorting and comparison.
    #[test]
    fn session_statements() {
        assert_eq!(SNAPSHOT_SESSION[0], "ALTER SESSION SET NLS_SORT = BINARY");
        assert_eq!(SNAPSHOT_SESSION[1], "ALTER SESSION SET NLS_COMP = BINARY");
        for (format, parameter) in [
            (DATE_FORMAT, "NLS_DATE_FORMAT"),
            (TIMESTAMP_FORMAT, "NLS_TIMESTAMP_FORMAT"),
            (TIMESTAMP_TZ_FORMAT, "NLS_TIMESTAMP_TZ_FORMAT"),
        ] {
            let set = format!("ALTER SESSION SET {parameter} = '{format}'");
            assert!(NLS_SESSION.contains(&set.as_str()), "{set}");
        }
        assert!(NLS_SESSION.contains(&"ALTER SESSION SET TIME_ZONE = '+00:00'"));
        assert_eq!(
            set_container("FREEPDB1"),
            "ALTER SESSION SET CONTAINER = \"FREEPDB1\""
        );
        assert!(TABLE_ESTIMATE.contains("NUM_ROWS, BLOCKS FROM ALL_TABLES"));
        assert!(TABLE_ESTIMATE.contains("OWNER = :1 AND TABLE_NAME = :2"));
    }

    /// A session at the root moves into a table's PDB, back to the root for a table without
    /// one, and stays where it is otherwise; a non-CDB never moves.
    #[test]
    fn container_switches() {
        let in_pdb = TableId::new("APP", "T").in_pdb("PDB1");
        let in_other = TableId::new("APP", "T").in_pdb("PDB2");
        let root_table = TableId::new("C##APP", "T");
        let root = Some("CDB$ROOT");
        assert_eq!(container_switch(root, root, &in_pdb), Some("PDB1"));
        assert_eq!(container_switch(Some("PDB1"), root, &in_pdb), None);
        assert_eq!(
            container_switch(Some("PDB1"), root, &in_other),
            Some("PDB2")
        );
        assert_eq!(
            container_switch(Some("PDB1"), root, &root_table),
            Some("CDB$ROOT")
        );
        assert_eq!(container_switch(root, root, &root_table), None);
        // connected to the PDB itself
        assert_eq!(container_switch(Some("PDB1"), Some("PDB1"), &in_pdb), None);
        // a non-CDB
        assert_eq!(container_switch(None, None, &root_table), None);
    }

    fn converted(ty: ColumnType, text: Option<&str>) -> Result<Value, SnapshotSqlError> {
        let l = layout(&[("C", ty.clone())], &[]);
        let (expr, form) = column_read("\"C\"", &ty);
        let reads = [ColumnRead {
            column: 0,
            expr,
            form,
        }];
        convert_row(
            &TableId::new("APP", "ORDERS"),
            &l,
            &reads,
            &[text.map(str::to_owned)],
        )
        .map(|mut v| v.remove(0))
    }

    fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
        OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap()
    }

    /// Every column type: what it is selected as, and what the database's text of it
    /// becomes (the texts are what TO_CHAR and the driver give under the session's formats).
    #[test]
    fn every_column_type_reads_back() {
        use ColumnType as T;
        let cases: Vec<(ColumnType, &str, Option<&str>, Value)> = vec![
            (
                T::Number,
                "TO_CHAR(\"C\", 'TM9')",
                Some("-42.5"),
                number("-42.5"),
            ),
            (
                T::Number,
                "TO_CHAR(\"C\", 'TM9')",
                Some(".5"),
                number("0.5"),
            ),
            (
                T::Number,
                "TO_CHAR(\"C\", 'TM9')",
                Some("-.25"),
                number("-0.25"),
            ),
            (
                T::Number,
                "TO_CHAR(\"C\", 'TM9')",
                Some("1.0E+125"),
                number("1E125"),
            ),
            (
                T::Float,
                "TO_CHAR(\"C\", 'TM9')",
                Some("3.14159"),
                number("3.14159"),
            ),
            (
                T::BinaryFloat,
                "TO_CHAR(\"C\")",
                Some("1.50000005E+010"),
                Value::BinaryFloat(1.5e10),
            ),
            (
                T::BinaryFloat,
                "TO_CHAR(\"C\")",
                Some("-Inf"),
                Value::BinaryFloat(f32::NEG_INFINITY),
            ),
            (
                T::BinaryDouble,
                "TO_CHAR(\"C\")",
                Some("1.0000000000000001E-001"),
                Value::BinaryDouble(0.1),
            ),
            (
                T::BinaryDouble,
                "TO_CHAR(\"C\")",
                Some("Inf"),
                Value::BinaryDouble(f64::INFINITY),
            ),
            (T::Char, "\"C\"", Some("ab   "), Value::Text("ab   ".into())),
            (
                T::Varchar2,
                "\"C\"",
                Some("it's || /* JSON */ \"q\""),
                Value::Text("it's || /* JSON */ \"q\"".into()),
            ),
            (
                T::Varchar2,
                "\"C\"",
                Some("two\nlines\\"),
                Value::Text("two\nlines\\".into()),
            ),
            (
                T::NChar,
                "\"C\"",
                Some("nchár "),
                Value::Text("nchár ".into()),
            ),
            (
                T::NVarchar2,
                "\"C\"",
                Some("😀 ''"),
                Value::Text("😀 ''".into()),
            ),
            (
                T::Long,
                "\"C\"",
                Some("long text"),
                Value::Text("long text".into()),
            ),
            (
                T::Date,
                "TO_CHAR(\"C\", 'SYYYY-MM-DD HH24:MI:SS')",
                Some(" 2026-02-28 13:45:59"),
                Value::Date(dt(2026, 2, 28, 13, 45, 59, 0)),
            ),
            (
                T::Date,
                "TO_CHAR(\"C\", 'SYYYY-MM-DD HH24:MI:SS')",
                Some("-0044-03-15 12:00:00"),
                Value::Date(dt(-44, 3, 15, 12, 0, 0, 0)),
            ),
            (
                T::Timestamp,
                "TO_CHAR(\"C\", 'SYYYY-MM-DD HH24:MI:SS.FF9')",
                Some(" 2026-03-29 01:30:00.123456000"),
                Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 123_456_000)),
            ),
            (
                T::TimestampTz,
                "TO_CHAR(\"C\", 'SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM')",
                Some(" 2026-03-29 01:30:00.000000001 +05:30"),
                Value::TimestampTz(dt(2026, 3, 29, 1, 30, 0, 1), TimeZone::Offset(330)),
            ),
            (
                T::TimestampLtz,
                "TO_CHAR(\"C\", 'SYYYY-MM-DD HH24:MI:SS.FF9')",
                Some(" 2026-03-29 01:30:00.000000000"),
                Value::TimestampLtz(dt(2026, 3, 29, 1, 30, 0, 0)),
            ),
            (
                T::IntervalYm,
                "TO_CHAR(\"C\")",
                Some("+12-03"),
                Value::IntervalYm(147),
            ),
            (
                T::IntervalYm,
                "TO_CHAR(\"C\")",
                Some("-000000001-11"),
                Value::IntervalYm(-23),
            ),
            (
                T::IntervalDs,
                "TO_CHAR(\"C\")",
                Some("+05 04:03:02.123456"),
                Value::IntervalDs(IntervalNanos::new(
                    ((5 * 86_400 + 4 * 3600 + 3 * 60 + 2) as i128) * 1_000_000_000 + 123_456_000,
                )),
            ),
            (
                T::Raw,
                "RAWTOHEX(\"C\")",
                Some("DEADBEEF00"),
                Value::Raw(vec![0xde, 0xad, 0xbe, 0xef, 0]),
            ),
            (T::LongRaw, "\"C\"", Some("00ff"), Value::Raw(vec![0, 0xff])),
            (
                T::RowId,
                "ROWIDTOCHAR(\"C\")",
                Some("AAASt5AAEAAAACHAAA"),
                Value::RowId("AAASt5AAEAAAACHAAA".into()),
            ),
            (
                T::URowId,
                "CAST(\"C\" AS VARCHAR2(4000))",
                Some("*BAEAAIkCwQL+"),
                Value::RowId("*BAEAAIkCwQL+".into()),
            ),
        ];
        for (ty, expr, text, want) in cases {
            assert_eq!(column_read("\"C\"", &ty).0, expr, "{ty:?}");
            assert_eq!(
                converted(ty.clone(), text).unwrap(),
                want,
                "{ty:?} {text:?}"
            );
            assert_eq!(converted(ty.clone(), None).unwrap(), Value::Null, "{ty:?}");
        }
        let nan = converted(T::BinaryDouble, Some("Nan")).unwrap();
        assert!(matches!(nan, Value::BinaryDouble(v) if v.is_nan()));
        assert!(column_read("\"C\"", &T::LongRaw).1 == TextForm::LongRaw);
    }

    /// LOBs and XMLTYPE are published as unavailable and JSON, BOOLEAN, VECTOR and other
    /// types as unsupported, as the stream publishes them; only whether they are NULL is read.
    #[test]
    fn values_not_read_are_what_the_stream_publishes() {
        use ColumnType as T;
        for (ty, want) in [
            (T::Clob, Value::Unavailable),
            (T::NClob, Value::Unavailable),
            (T::Blob, Value::Unavailable),
            (T::XmlType, Value::Unavailable),
            (T::Json, Value::Unsupported),
            (T::Boolean, Value::Unsupported),
            (T::Vector, Value::Unsupported),
            (T::Other("SDO_GEOMETRY".into()), Value::Unsupported),
        ] {
            let (expr, form) = column_read("\"C\"", &ty);
            assert_eq!(
                expr, "CASE WHEN \"C\" IS NULL THEN NULL ELSE 'x' END",
                "{ty:?}"
            );
            assert_eq!(form, TextForm::Presence(want.clone()), "{ty:?}");
            assert_eq!(converted(ty.clone(), Some("x")).unwrap(), want, "{ty:?}");
            assert_eq!(converted(ty.clone(), None).unwrap(), Value::Null, "{ty:?}");
        }
        // the decoder itself gives the same for a non-LOB type's value
        for ty in [
            T::XmlType,
            T::Json,
            T::Boolean,
            T::Vector,
            T::Other("X".into()),
        ] {
            let TextForm::Presence(want) = column_read("\"C\"", &ty).1 else {
                panic!("{ty:?}");
            };
            let statement = parse_statement("insert into \"S\".\"T\"(\"C\") values ('x')").unwrap();
            let decoded = convert(
                &statement.assignments()[0].value,
                &ColumnDef::new("C", 1, ty.clone()),
            );
            assert_eq!(decoded, Ok(want), "{ty:?}");
        }
    }

    /// A text the decoder refuses fails the row as a mined one would, naming the column.
    #[test]
    fn texts_the_decoder_refuses_fail_the_row() {
        let e = converted(ColumnType::Number, Some("1.2.3")).unwrap_err();
        assert!(matches!(e, SnapshotSqlError::Convert { ref column, .. } if column == "C"));
        let e = converted(ColumnType::Date, Some(" 2026-02-30 00:00:00")).unwrap_err();
        assert!(matches!(e, SnapshotSqlError::Convert { .. }), "{e}");
        let e = converted(ColumnType::Raw, Some("abc")).unwrap_err();
        assert!(matches!(e, SnapshotSqlError::Convert { .. }), "{e}");
        // a LONG whose value is LogMiner's placeholder reads as the stream reads it
        assert_eq!(
            converted(ColumnType::Long, Some("LONG DATA")).unwrap(),
            Value::Unavailable
        );
    }

    /// A row of several columns: each value at its place, NULLs and values not read among
    /// them.
    #[test]
    fn a_row_converts_in_select_order() {
        let l = layout(
            &[
                ("ID", ColumnType::Number),
                ("DOC", ColumnType::Clob),
                ("NAME", ColumnType::NVarchar2),
                ("AT", ColumnType::Timestamp),
            ],
            &["ID"],
        );
        let q = query(l, key_order(&["ID"]));
        let plan = read_statement(&q).unwrap();
        let texts = [
            Some("7".to_owned()),
            Some("x".to_owned()),
            None,
            Some(" 2026-01-01 00:00:00.500000000".to_owned()),
        ];
        let values = convert_row(&q.table, &q.layout, &plan.reads, &texts).unwrap();
        assert_eq!(
            values,
            [
                number("7"),
                Value::Unavailable,
                Value::Null,
                Value::Timestamp(dt(2026, 1, 1, 0, 0, 0, 500_000_000)),
            ]
        );
        assert_eq!(
            key_bound(&values, plan.key.as_deref().unwrap()),
            SnapshotBound::Key(vec![number("7")])
        );
        // nothing to parse: only NULLs and values not read
        let values = convert_row(
            &q.table,
            &q.layout,
            &plan.reads,
            &[None, Some("x".into()), None, None],
        )
        .unwrap();
        assert_eq!(
            values,
            [Value::Null, Value::Unavailable, Value::Null, Value::Null]
        );
    }

    /// A key value is bound as the text of the form it was read in, with the conversion
    /// back to its type around the placeholder: read back by the decoder, the text gives the
    /// value again.
    #[test]
    fn key_values_bind_back_as_their_type() {
        use ColumnType as T;
        let cases: Vec<(ColumnType, Value, &str, &str, &str)> = vec![
            (T::Number, number("-0.25"), "TO_NUMBER(", "-0.25", ")"),
            (
                T::Number,
                number("1E30"),
                "TO_NUMBER(",
                "1000000000000000000000000000000",
                ")",
            ),
            (T::Varchar2, Value::Text("O'Hara".into()), "", "O'Hara", ""),
            (T::Char, Value::Text("ab  ".into()), "", "ab  ", ""),
            (
                T::NVarchar2,
                Value::Text("é\\😀".into()),
                "UNISTR(",
                "\\00E9\\\\\\D83D\\DE00",
                ")",
            ),
            (
                T::Raw,
                Value::Raw(vec![0xde, 0xad]),
                "HEXTORAW(",
                "dead",
                ")",
            ),
            (
                T::Date,
                Value::Date(dt(-44, 3, 15, 12, 0, 0, 0)),
                "TO_DATE(",
                "-0044-03-15 12:00:00",
                ", 'SYYYY-MM-DD HH24:MI:SS')",
            ),
            (
                T::Timestamp,
                Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 5)),
                "TO_TIMESTAMP(",
                " 2026-03-29 01:30:00.000000005",
                ", 'SYYYY-MM-DD HH24:MI:SS.FF9')",
            ),
            (
                T::TimestampTz,
                Value::TimestampTz(dt(2026, 3, 29, 1, 30, 0, 0), TimeZone::Offset(-330)),
                "TO_TIMESTAMP_TZ(",
                " 2026-03-29 01:30:00.000000000 -05:30",
                ", 'SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM')",
            ),
            (
                T::TimestampTz,
                Value::TimestampTz(
                    dt(2026, 3, 29, 1, 30, 0, 0),
                    TimeZone::Region("Europe/Paris".into()),
                ),
                "TO_TIMESTAMP_TZ(",
                " 2026-03-29 01:30:00.000000000 Europe/Paris",
                ", 'SYYYY-MM-DD HH24:MI:SS.FF9 TZR')",
            ),
            (
                T::TimestampLtz,
                Value::TimestampLtz(dt(2026, 3, 29, 1, 30, 0, 0)),
                "FROM_TZ(TO_TIMESTAMP(",
                " 2026-03-29 01:30:00.000000000",
                ", 'SYYYY-MM-DD HH24:MI:SS.FF9'), '+00:00')",
            ),
            (
                T::IntervalYm,
                Value::IntervalYm(-23),
                "TO_YMINTERVAL(",
                "-1-11",
                ")",
            ),
            (
                T::IntervalDs,
                Value::IntervalDs(IntervalNanos::new(-(90_061_000_000_001))),
                "TO_DSINTERVAL(",
                "-1 01:01:01.000000001",
                ")",
            ),
            (
                T::BinaryDouble,
                Value::BinaryDouble(0.1),
                "TO_BINARY_DOUBLE(",
                "1E-1",
                ")",
            ),
            (
                T::BinaryDouble,
                Value::BinaryDouble(f64::NEG_INFINITY),
                "TO_BINARY_DOUBLE(",
                "-INF",
                ")",
            ),
            (
                T::BinaryFloat,
                Value::BinaryFloat(1.5e10),
                "TO_BINARY_FLOAT(",
                "1.5E10",
                ")",
            ),
            (
                T::RowId,
                Value::RowId("AAASt5AAEAAAACHAAA".into()),
                "CHARTOROWID(",
                "AAASt5AAEAAAACHAAA",
                ")",
            ),
            (
                T::URowId,
                Value::RowId("*BAEAAIkCwQL+".into()),
                "",
                "*BAEAAIkCwQL+",
                "",
            ),
        ];
        for (ty, value, open, text, close) in cases {
            let bound = bound_value(&ty, &value).unwrap_or_else(|| panic!("{ty:?}"));
            assert_eq!(
                (bound.open, bound.text.as_str(), bound.close.as_str()),
                (open, text, close),
                "{ty:?}"
            );
        }
        // what the decoder reads from a temporal bound's text is the value it was made of
        for (ty, value) in [
            (T::Date, Value::Date(dt(-44, 3, 15, 12, 0, 0, 0))),
            (T::Timestamp, Value::Timestamp(dt(2026, 3, 29, 1, 30, 0, 5))),
            (
                T::TimestampTz,
                Value::TimestampTz(dt(2026, 3, 29, 1, 30, 0, 0), TimeZone::Offset(-330)),
            ),
            (
                T::TimestampLtz,
                Value::TimestampLtz(dt(2026, 3, 29, 1, 30, 0, 0)),
            ),
            (T::IntervalYm, Value::IntervalYm(-23)),
            (
                T::IntervalDs,
                Value::IntervalDs(IntervalNanos::new(-(90_061_000_000_001))),
            ),
            (T::Number, number("-0.25")),
            (T::Raw, Value::Raw(vec![0xde, 0xad])),
        ] {
            let bound = bound_value(&ty, &value).unwrap();
            assert_eq!(
                converted(ty.clone(), Some(&bound.text)),
                Ok(value),
                "{ty:?}"
            );
        }
        for value in [
            Value::Null,
            Value::EmptyLob,
            Value::Unavailable,
            Value::Unsupported,
        ] {
            assert_eq!(bound_value(&T::Number, &value), None);
        }
        // text for a column that is not text is no bound
        assert_eq!(bound_value(&T::Clob, &Value::Text("x".into())), None);
    }

    #[test]
    fn hex_is_what_hextoraw_reads() {
        assert_eq!(hex(&[0x00, 0x0f, 0xf0, 0xff]), "000ff0ff");
        assert_eq!(hex(&[]), "");
    }
}
