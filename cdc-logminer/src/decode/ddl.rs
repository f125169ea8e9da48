//! DDL rows: the text is read only far enough to classify the statement and name the table it
//! acts on; the layout itself always comes from the dictionary.
//!
//! ```text
//!  CREATE [GLOBAL TEMPORARY|…] TABLE t …  [AS SELECT]  → Create (may_hold_rows with AS SELECT)
//!  DROP TABLE t                                        → Drop
//!  RENAME a TO b | ALTER TABLE a RENAME TO b           → Rename (renamed_to = b)
//!  ALTER TABLE t ADD|MODIFY|DROP [COLUMN] …, SET UNUSED,
//!        RENAME COLUMN, constraints, supplemental log  → AlterColumns (layout or key may change)
//!  TRUNCATE TABLE t                                    → Truncate
//!  ALTER TABLE t ADD|DROP|SPLIT|MERGE|EXCHANGE|MOVE|
//!        TRUNCATE|COALESCE|RENAME|MODIFY PARTITION …   → PartitionMaintenance
//!  FLASHBACK TABLE t TO BEFORE DROP [RENAME TO b]      → Create (may_hold_rows)
//!  index, comment, grant, statistics, storage, other objects, anything unknown → Other(…)
//! ```
//!
//! Unquoted names are upper-cased as Oracle does; quoted names are kept as written. The owner is
//! `None` when the statement does not name one (it is the row's SEG_OWNER / the session schema).

/// What a DDL statement does to a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DdlKind {
    Create,
    Drop,
    Rename,
    /// Columns, constraints or supplemental logging changed: the layout or key may differ.
    AlterColumns,
    Truncate,
    PartitionMaintenance,
    Other(OtherDdl),
}

/// The DDL that changes no table layout, and DDL not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OtherDdl {
    Index,
    Comment,
    Grant,
    Statistics,
    /// Storage, logging, compression, row movement, LOB storage, triggers, …
    Storage,
    /// DDL on an object that is not a table (view, sequence, user, procedure, …).
    NotATable,
    /// Text this classifier does not understand: for a captured table the engine stops
    /// (CDC-6002).
    Unrecognised,
}

/// A table a DDL statement names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DdlTable {
    pub owner: Option<String>,
    pub name: String,
}

/// The classification of one DDL statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdlInfo {
    pub kind: DdlKind,
    /// The table acted on (for an index or comment, the table it is on).
    pub table: Option<DdlTable>,
    /// The new name of a renamed table.
    pub renamed_to: Option<DdlTable>,
    /// The table may already hold rows when it appears (CREATE … AS SELECT, FLASHBACK … BEFORE
    /// DROP), so it needs a snapshot rather than capture from its first row.
    pub may_hold_rows: bool,
}

impl DdlInfo {
    fn of(kind: DdlKind, table: Option<DdlTable>) -> DdlInfo {
        DdlInfo {
            kind,
            table,
            renamed_to: None,
            may_hold_rows: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    Quoted(&'a str),
    Punct(u8),
    Str,
    End,
}

#[derive(Debug, Clone)]
struct Lexer<'a> {
    s: &'a str,
    pos: usize,
}

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'#' || b >= 0x80
}

impl<'a> Lexer<'a> {
    fn next(&mut self) -> Tok<'a> {
        let b = self.s.as_bytes();
        loop {
            while b.get(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
                self.pos += 1;
            }
            if b.get(self.pos) == Some(&b'/') && b.get(self.pos + 1) == Some(&b'*') {
                self.pos = match self.s[self.pos + 2..].find("*/") {
                    Some(end) => self.pos + 2 + end + 2,
                    None => self.s.len(),
                };
                continue;
            }
            if b.get(self.pos) == Some(&b'-') && b.get(self.pos + 1) == Some(&b'-') {
                self.pos = match self.s[self.pos..].find('\n') {
                    Some(end) => self.pos + end + 1,
                    None => self.s.len(),
                };
                continue;
            }
            break;
        }
        let Some(&c) = b.get(self.pos) else {
            return Tok::End;
        };
        match c {
            b'"' => {
                let start = self.pos + 1;
                let mut p = start;
                loop {
                    match self.s[p..].find('"') {
                        None => {
                            self.pos = self.s.len();
                            return Tok::Quoted(&self.s[start..]);
                        }
                        Some(at) if b.get(p + at + 1) == Some(&b'"') => p += at + 2,
                        Some(at) => {
                            self.pos = p + at + 1;
                            return Tok::Quoted(&self.s[start..p + at]);
                        }
                    }
                }
            }
            b'\'' => {
                let mut p = self.pos + 1;
                loop {
                    match self.s[p..].find('\'') {
                        None => {
                            self.pos = self.s.len();
                            return Tok::Str;
                        }
                        Some(at) if b.get(p + at + 1) == Some(&b'\'') => p += at + 2,
                        Some(at) => {
                            self.pos = p + at + 1;
                            return Tok::Str;
                        }
                    }
                }
            }
            _ if word_byte(c) => {
                let start = self.pos;
                while b.get(self.pos).is_some_and(|&c| word_byte(c)) {
                    self.pos += 1;
                }
                Tok::Word(&self.s[start..self.pos])
            }
            _ => {
                // step over a whole UTF-8 character (only ASCII punctuation matters here)
                let len = self.s[self.pos..].chars().next().map_or(1, char::len_utf8);
                self.pos += len;
                Tok::Punct(c)
            }
        }
    }

    fn peek(&self) -> Tok<'a> {
        self.clone().next()
    }

    fn is_word(&self, tok: Tok<'_>, kw: &str) -> bool {
        matches!(tok, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    /// Consumes the next token when it is the keyword `kw`.
    fn eat(&mut self, kw: &str) -> bool {
        let tok = self.peek();
        if self.is_word(tok, kw) {
            self.next();
            true
        } else {
            false
        }
    }

    fn eat_punct(&mut self, p: u8) -> bool {
        if self.peek() == Tok::Punct(p) {
            self.next();
            true
        } else {
            false
        }
    }

    fn next_lower(&mut self) -> Option<String> {
        match self.next() {
            Tok::Word(w) => Some(w.to_ascii_lowercase()),
            _ => None,
        }
    }

    /// A name part: quoted as written, unquoted upper-cased.
    fn name_part(&mut self) -> Option<String> {
        match self.next() {
            Tok::Quoted(q) => Some(q.replace("\"\"", "\"")),
            Tok::Word(w) => Some(w.to_uppercase()),
            _ => None,
        }
    }

    /// `[owner.]name`, skipping `IF [NOT] EXISTS` before it.
    fn table(&mut self) -> Option<DdlTable> {
        if self.eat("if") {
            self.eat("not");
            self.eat("exists");
        }
        let first = self.name_part()?;
        if self.eat_punct(b'.') {
            let name = self.name_part()?;
            Some(DdlTable {
                owner: Some(first),
                name,
            })
        } else {
            Some(DdlTable {
                owner: None,
                name: first,
            })
        }
    }
}

const TABLE_MODIFIERS: [&str; 9] = [
    "global",
    "private",
    "temporary",
    "sharded",
    "duplicated",
    "blockchain",
    "immutable",
    "json",
    "collection",
];
const INDEX_MODIFIERS: [&str; 5] = ["unique", "bitmap", "multivalue", "vector", "search"];
const STORAGE_WORDS: [&str; 31] = [
    "shrink",
    "allocate",
    "deallocate",
    "pctfree",
    "pctused",
    "initrans",
    "maxtrans",
    "storage",
    "logging",
    "nologging",
    "compress",
    "nocompress",
    "parallel",
    "noparallel",
    "cache",
    "nocache",
    "read",
    "row",
    "column",
    "inmemory",
    "no",
    "flashback",
    "monitoring",
    "nomonitoring",
    "ilm",
    "upgrade",
    "result_cache",
    "tablespace",
    "lob",
    "memoptimize",
    "annotations",
];

/// Classifies the text of a DDL row.
pub fn classify_ddl(sql: &str) -> DdlInfo {
    let mut lx = Lexer { s: sql, pos: 0 };
    let Some(first) = lx.next_lower() else {
        return DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), None);
    };
    match first.as_str() {
        "create" => create(&mut lx),
        "drop" => {
            if lx.eat("table") {
                DdlInfo::of(DdlKind::Drop, lx.table())
            } else if lx.eat("index") {
                DdlInfo::of(DdlKind::Other(OtherDdl::Index), None)
            } else {
                DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None)
            }
        }
        "truncate" => {
            if lx.eat("table") {
                DdlInfo::of(DdlKind::Truncate, lx.table())
            } else {
                DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None)
            }
        }
        "rename" => {
            let from = lx.table();
            if !lx.eat("to") {
                return DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), from);
            }
            let to = lx.table();
            DdlInfo {
                renamed_to: to,
                ..DdlInfo::of(DdlKind::Rename, from)
            }
        }
        "alter" => {
            if lx.eat("table") {
                alter_table(&mut lx)
            } else if lx.eat("index") {
                DdlInfo::of(DdlKind::Other(OtherDdl::Index), None)
            } else {
                DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None)
            }
        }
        "comment" => {
            if !lx.eat("on") {
                return DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), None);
            }
            let on_column = lx.eat("column");
            if !on_column && !lx.eat("table") {
                return DdlInfo::of(DdlKind::Other(OtherDdl::Comment), None);
            }
            // t | o.t | t.c | o.t.c
            let mut parts = Vec::with_capacity(3);
            while let Some(p) = lx.name_part() {
                parts.push(p);
                if parts.len() == 3 || !lx.eat_punct(b'.') {
                    break;
                }
            }
            if on_column {
                parts.pop();
            }
            let table = match parts.len() {
                1 => parts.pop().map(|name| DdlTable { owner: None, name }),
                2 => {
                    let name = parts.pop();
                    let owner = parts.pop();
                    name.map(|name| DdlTable { owner, name })
                }
                _ => None,
            };
            DdlInfo::of(DdlKind::Other(OtherDdl::Comment), table)
        }
        "grant" | "revoke" => DdlInfo::of(DdlKind::Other(OtherDdl::Grant), None),
        "analyze" => {
            let table = if lx.eat("table") { lx.table() } else { None };
            DdlInfo::of(DdlKind::Other(OtherDdl::Statistics), table)
        }
        "flashback" => {
            if !lx.eat("table") {
                return DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None);
            }
            let table = lx.table();
            if lx.eat("to") && lx.eat("before") && lx.eat("drop") {
                let renamed = if lx.eat("rename") && lx.eat("to") {
                    lx.table()
                } else {
                    None
                };
                let table = match (renamed, table) {
                    (Some(mut r), Some(t)) => {
                        r.owner = r.owner.or(t.owner);
                        Some(r)
                    }
                    (r, t) => r.or(t),
                };
                DdlInfo {
                    may_hold_rows: true,
                    ..DdlInfo::of(DdlKind::Create, table)
                }
            } else {
                DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), table)
            }
        }
        "audit" | "noaudit" | "associate" | "disassociate" | "purge" => {
            DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None)
        }
        _ => DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), None),
    }
}

fn create(lx: &mut Lexer<'_>) -> DdlInfo {
    if lx.eat("or") {
        lx.eat("replace");
    }
    loop {
        let Some(word) = lx.next_lower() else {
            return DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), None);
        };
        match word.as_str() {
            "table" => {
                let table = lx.table();
                let may_hold_rows = as_select(lx);
                return DdlInfo {
                    may_hold_rows,
                    ..DdlInfo::of(DdlKind::Create, table)
                };
            }
            "index" => {
                // [owner.]index ON [owner.]table
                lx.table();
                let table = if lx.eat("on") { lx.table() } else { None };
                return DdlInfo::of(DdlKind::Other(OtherDdl::Index), table);
            }
            w if TABLE_MODIFIERS.contains(&w) || INDEX_MODIFIERS.contains(&w) => continue,
            _ => return DdlInfo::of(DdlKind::Other(OtherDdl::NotATable), None),
        }
    }
}

/// `AS SELECT …` / `AS WITH …` / `AS (SELECT …)` at parenthesis depth 0.
fn as_select(lx: &mut Lexer<'_>) -> bool {
    let mut depth = 0i32;
    loop {
        match lx.next() {
            Tok::End => return false,
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth -= 1,
            Tok::Word(w) if depth == 0 && w.eq_ignore_ascii_case("as") => {
                let mut next = lx.peek();
                let mut probe = lx.clone();
                while next == Tok::Punct(b'(') {
                    probe.next();
                    next = probe.peek();
                }
                if lx.is_word(next, "select") || lx.is_word(next, "with") {
                    return true;
                }
            }
            _ => {}
        }
    }
}

fn alter_table(lx: &mut Lexer<'_>) -> DdlInfo {
    let table = lx.table();
    let Some(action) = lx.next_lower() else {
        return DdlInfo::of(DdlKind::Other(OtherDdl::Unrecognised), table);
    };
    let next = lx.peek();
    let next_is = |words: &[&str]| words.iter().any(|w| lx.is_word(next, w));
    let partition = ["partition", "subpartition", "partitions", "subpartitions"];
    let kind = match action.as_str() {
        "add" if next_is(&partition) => DdlKind::PartitionMaintenance,
        "add" => DdlKind::AlterColumns,
        "modify" if next_is(&["partition", "subpartition", "default"]) => {
            DdlKind::PartitionMaintenance
        }
        "modify" if next_is(&["lob", "nested", "varray", "opaque"]) => {
            DdlKind::Other(OtherDdl::Storage)
        }
        "modify" => DdlKind::AlterColumns,
        "drop" if next_is(&partition) => DdlKind::PartitionMaintenance,
        "drop" => DdlKind::AlterColumns,
        "set" if next_is(&["unused"]) => DdlKind::AlterColumns,
        "set" if next_is(&["interval", "subpartition", "partitioning", "store"]) => {
            DdlKind::PartitionMaintenance
        }
        "set" => DdlKind::Other(OtherDdl::Storage),
        "rename" if next_is(&["to"]) => {
            lx.next();
            let mut to = lx.table();
            if let (Some(to), Some(from)) = (to.as_mut(), table.as_ref()) {
                // ALTER TABLE o.a RENAME TO b keeps the table in schema o
                if to.owner.is_none() {
                    to.owner.clone_from(&from.owner);
                }
            }
            return DdlInfo {
                renamed_to: to,
                ..DdlInfo::of(DdlKind::Rename, table)
            };
        }
        "rename" if next_is(&["column", "constraint"]) => DdlKind::AlterColumns,
        "rename" if next_is(&partition) => DdlKind::PartitionMaintenance,
        "split" | "merge" | "exchange" | "coalesce" => DdlKind::PartitionMaintenance,
        "truncate" | "move" if next_is(&partition) => DdlKind::PartitionMaintenance,
        "move" => DdlKind::Other(OtherDdl::Storage),
        "enable" | "disable" if next_is(&["row", "table", "all"]) => {
            DdlKind::Other(OtherDdl::Storage)
        }
        "enable" | "disable" => DdlKind::AlterColumns,
        w if STORAGE_WORDS.contains(&w) => DdlKind::Other(OtherDdl::Storage),
        _ => DdlKind::Other(OtherDdl::Unrecognised),
    };
    DdlInfo::of(kind, table)
}

/// What a DDL statement does to a table's columns, as its text says: what the engine checks
/// the layout it reads from the dictionary against, to know whether that layout is the one
/// the statement made (the dictionary knows only its newest, and a later DDL may already be
/// in it). The text only ever checks a layout; it never makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnChange {
    /// A column added at the end (`ADD`, or a column of `CREATE TABLE`), with its type as
    /// written (`NUMBER(12,2)`, `TIMESTAMP(6) WITH TIME ZONE`).
    Add { name: String, data_type: String },
    /// `DROP COLUMN`: the column leaves the table and its segment.
    Drop { name: String },
    /// `SET UNUSED`: the column is hidden, its segment column stays.
    SetUnused { name: String },
    /// `DROP UNUSED COLUMNS`: the hidden columns leave the segment.
    DropUnused,
    /// `MODIFY`: the column keeps its place; its type, when the clause gives one.
    Modify {
        name: String,
        data_type: Option<String>,
    },
    /// `RENAME COLUMN from TO to`.
    Rename { from: String, to: String },
}

/// The column changes of a `CREATE TABLE` with a column list or an `ALTER TABLE`, in order
/// (an empty list for a statement that changes no column: a constraint, supplemental
/// logging). `None` for any other statement, or text this reader does not follow.
pub fn column_changes(sql: &str) -> Option<Vec<ColumnChange>> {
    let mut lx = Lexer { s: sql, pos: 0 };
    match lx.next_lower()?.as_str() {
        "create" => {
            loop {
                let word = lx.next_lower()?;
                if word == "table" {
                    break;
                }
                if !TABLE_MODIFIERS.contains(&word.as_str()) && word != "or" && word != "replace" {
                    return None;
                }
            }
            lx.table()?;
            if !lx.eat_punct(b'(') {
                return None;
            }
            let mut changes = Vec::new();
            for def in definitions(&mut lx)? {
                if let Some(change) = def.as_added() {
                    changes.push(change);
                }
            }
            // CREATE TABLE … AS SELECT: the columns come from the query
            if as_select(&mut lx) {
                return None;
            }
            Some(changes)
        }
        "alter" => {
            if !lx.eat("table") {
                return None;
            }
            lx.table()?;
            alter_columns(&mut lx)
        }
        _ => None,
    }
}

/// Words that end a column's type in its definition.
const AFTER_TYPE: &[&str] = &[
    "default",
    "not",
    "null",
    "constraint",
    "primary",
    "unique",
    "check",
    "references",
    "encrypt",
    "decrypt",
    "invisible",
    "visible",
    "generated",
    "collate",
    "sort",
    "as",
    "enable",
    "disable",
    "using",
];

/// Words that open a constraint or logging clause instead of a column.
const NOT_A_COLUMN: &[&str] = &[
    "constraint",
    "primary",
    "unique",
    "check",
    "foreign",
    "supplemental",
    "period",
    "scope",
    "ref",
    "partition",
    "subpartition",
];

/// One item of a parenthesised list of definitions: its words, with `(…)` groups as text.
struct Definition {
    tokens: Vec<String>,
    /// The first token was quoted (a name, never a keyword).
    quoted: bool,
}

impl Definition {
    fn name(&self) -> Option<&str> {
        self.tokens.first().map(String::as_str)
    }

    fn is_column(&self) -> bool {
        self.quoted
            || self
                .name()
                .is_some_and(|n| !NOT_A_COLUMN.contains(&n.to_ascii_lowercase().as_str()))
    }

    /// The type as written: the tokens after the name up to the first word that follows a
    /// type.
    fn data_type(&self) -> Option<String> {
        let mut out = String::new();
        for token in self.tokens.iter().skip(1) {
            if AFTER_TYPE.contains(&token.to_ascii_lowercase().as_str()) {
                break;
            }
            if token.starts_with('(') {
                out.push_str(token);
            } else {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(token);
            }
        }
        (!out.is_empty()).then_some(out)
    }

    fn as_added(&self) -> Option<ColumnChange> {
        if !self.is_column() {
            return None;
        }
        Some(ColumnChange::Add {
            name: self.name()?.to_owned(),
            data_type: self.data_type()?,
        })
    }
}

/// The items of a `(…)` list whose `(` was read, to its `)`.
fn definitions(lx: &mut Lexer<'_>) -> Option<Vec<Definition>> {
    let mut out = Vec::new();
    let mut current = Definition {
        tokens: Vec::new(),
        quoted: false,
    };
    loop {
        match lx.next() {
            Tok::End => return None,
            Tok::Punct(b')') => {
                if !current.tokens.is_empty() {
                    out.push(current);
                }
                return Some(out);
            }
            Tok::Punct(b',') => {
                out.push(std::mem::replace(
                    &mut current,
                    Definition {
                        tokens: Vec::new(),
                        quoted: false,
                    },
                ));
            }
            Tok::Punct(b'(') => current.tokens.push(group(lx)?),
            Tok::Quoted(q) => {
                current.quoted |= current.tokens.is_empty();
                current.tokens.push(q.replace("\"\"", "\""));
            }
            Tok::Word(w) if current.tokens.is_empty() => current.tokens.push(w.to_uppercase()),
            Tok::Word(w) => current.tokens.push(w.to_owned()),
            Tok::Str => current.tokens.push("'…'".to_owned()),
            Tok::Punct(_) => {}
        }
    }
}

/// A `(…)` group whose `(` was read, as its text (`(12,2)`), nested groups included.
fn group(lx: &mut Lexer<'_>) -> Option<String> {
    let mut out = String::from("(");
    loop {
        match lx.next() {
            Tok::End => return None,
            Tok::Punct(b')') => {
                out.push(')');
                return Some(out);
            }
            Tok::Punct(b'(') => out.push_str(&group(lx)?),
            Tok::Punct(p) => out.push(char::from(p)),
            Tok::Word(w) => {
                if out.ends_with(|c: char| c.is_ascii_alphanumeric()) {
                    out.push(' ');
                }
                out.push_str(w);
            }
            Tok::Quoted(q) => out.push_str(q),
            Tok::Str => out.push_str("''"),
        }
    }
}

/// The column changes of `ALTER TABLE t …` after the table.
fn alter_columns(lx: &mut Lexer<'_>) -> Option<Vec<ColumnChange>> {
    let names = |lx: &mut Lexer<'_>| -> Option<Vec<String>> {
        if lx.eat_punct(b'(') {
            definitions(lx)?
                .into_iter()
                .map(|d| d.name().map(str::to_owned))
                .collect()
        } else {
            Some(vec![lx.name_part()?])
        }
    };
    let action = lx.next_lower()?;
    // partition maintenance (ADD, MODIFY, DROP … PARTITION) changes no column
    if ["partition", "subpartition"]
        .iter()
        .any(|w| lx.is_word(lx.peek(), w))
    {
        return Some(Vec::new());
    }
    let changes = match action.as_str() {
        "add" => {
            let defs = if lx.eat_punct(b'(') {
                definitions(lx)?
            } else {
                let mut single = Vec::new();
                let mut def = Definition {
                    tokens: Vec::new(),
                    quoted: matches!(lx.peek(), Tok::Quoted(_)),
                };
                loop {
                    match lx.next() {
                        Tok::End => break,
                        Tok::Punct(b'(') => def.tokens.push(group(lx)?),
                        Tok::Quoted(q) => def.tokens.push(q.replace("\"\"", "\"")),
                        Tok::Word(w) if def.tokens.is_empty() => def.tokens.push(w.to_uppercase()),
                        Tok::Word(w) => def.tokens.push(w.to_owned()),
                        _ => {}
                    }
                }
                single.push(def);
                single
            };
            defs.iter().filter_map(Definition::as_added).collect()
        }
        "modify" => {
            if lx.is_word(lx.peek(), "constraint") {
                return Some(Vec::new());
            }
            let defs = if lx.eat_punct(b'(') {
                definitions(lx)?
            } else {
                let mut def = Definition {
                    tokens: vec![lx.name_part()?],
                    quoted: true,
                };
                loop {
                    match lx.next() {
                        Tok::End => break,
                        Tok::Punct(b'(') => def.tokens.push(group(lx)?),
                        Tok::Word(w) => def.tokens.push(w.to_owned()),
                        _ => {}
                    }
                }
                vec![def]
            };
            defs.iter()
                .filter(|d| d.is_column())
                .map(|d| {
                    Some(ColumnChange::Modify {
                        name: d.name()?.to_owned(),
                        data_type: d.data_type(),
                    })
                })
                .collect::<Option<Vec<_>>>()?
        }
        "drop" => {
            if lx.eat("unused") {
                if lx.eat("columns") || lx.eat("column") {
                    vec![ColumnChange::DropUnused]
                } else {
                    return None;
                }
            } else if lx.eat("column") || lx.peek() == Tok::Punct(b'(') {
                names(lx)?
                    .into_iter()
                    .map(|name| ColumnChange::Drop { name })
                    .collect()
            } else if ["constraint", "primary", "unique", "supplemental"]
                .iter()
                .any(|w| lx.is_word(lx.peek(), w))
            {
                Vec::new()
            } else {
                return None;
            }
        }
        "set" => {
            if !lx.eat("unused") {
                return None;
            }
            lx.eat("column");
            names(lx)?
                .into_iter()
                .map(|name| ColumnChange::SetUnused { name })
                .collect()
        }
        "rename" => {
            if lx.eat("constraint") {
                return Some(Vec::new());
            }
            if !lx.eat("column") {
                return None;
            }
            let from = lx.name_part()?;
            if !lx.eat("to") {
                return None;
            }
            vec![ColumnChange::Rename {
                from,
                to: lx.name_part()?,
            }]
        }
        "enable" | "disable" => Vec::new(),
        _ => return None,
    };
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(owner: Option<&str>, name: &str) -> Option<DdlTable> {
        Some(DdlTable {
            owner: owner.map(str::to_owned),
            name: name.to_owned(),
        })
    }

    #[test]
    fn classifies() {
        let c = classify_ddl("create table app.orders (id number primary key)");
        assert_eq!(
            (c.kind, c.table, c.may_hold_rows),
            (DdlKind::Create, t(Some("APP"), "ORDERS"), false)
        );
        let c = classify_ddl(r#"CREATE GLOBAL TEMPORARY TABLE "app"."My T" AS SELECT * FROM x"#);
        assert_eq!(
            (c.kind, c.table, c.may_hold_rows),
            (DdlKind::Create, t(Some("app"), "My T"), true)
        );
        assert_eq!(classify_ddl("drop table t purge").kind, DdlKind::Drop);
        let c = classify_ddl("alter table app.t rename to u;");
        assert_eq!(
            (c.kind, c.renamed_to),
            (DdlKind::Rename, t(Some("APP"), "U"))
        );
        let c = classify_ddl("rename t to u");
        assert_eq!(
            (c.kind, c.table, c.renamed_to),
            (DdlKind::Rename, t(None, "T"), t(None, "U"))
        );
        for (sql, kind) in [
            ("alter table t add (c number)", DdlKind::AlterColumns),
            ("alter table t add c number", DdlKind::AlterColumns),
            (
                "ALTER TABLE t ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS",
                DdlKind::AlterColumns,
            ),
            ("alter table t drop column c", DdlKind::AlterColumns),
            (
                "alter table t modify (c varchar2(20))",
                DdlKind::AlterColumns,
            ),
            ("alter table t set unused column c", DdlKind::AlterColumns),
            ("alter table t rename column a to b", DdlKind::AlterColumns),
            (
                "alter table t add constraint pk primary key (id)",
                DdlKind::AlterColumns,
            ),
            ("truncate table t", DdlKind::Truncate),
            (
                "alter table t add partition p2 values less than (10)",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t drop partition p1",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t split partition p1 at (5) into (partition a, partition b)",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t exchange partition p1 with table x",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t truncate partition p1",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t merge partitions p1, p2 into partition p3",
                DdlKind::PartitionMaintenance,
            ),
            (
                "alter table t move partition p1 tablespace users",
                DdlKind::PartitionMaintenance,
            ),
            ("alter table t move", DdlKind::Other(OtherDdl::Storage)),
            (
                "alter table t enable row movement",
                DdlKind::Other(OtherDdl::Storage),
            ),
            (
                "create unique index i on app.t(c)",
                DdlKind::Other(OtherDdl::Index),
            ),
            (
                "comment on column app.t.c is 'x'",
                DdlKind::Other(OtherDdl::Comment),
            ),
            ("grant select on t to u", DdlKind::Other(OtherDdl::Grant)),
            (
                "create or replace view v as select 1 from dual",
                DdlKind::Other(OtherDdl::NotATable),
            ),
            (
                "alter table t frobnicate",
                DdlKind::Other(OtherDdl::Unrecognised),
            ),
            ("", DdlKind::Other(OtherDdl::Unrecognised)),
            ("/* c */ -- x\n truncate table t", DdlKind::Truncate),
        ] {
            assert_eq!(classify_ddl(sql).kind, kind, "{sql}");
        }
        assert_eq!(
            classify_ddl("create index i on app.t(c)").table,
            t(Some("APP"), "T")
        );
        assert_eq!(
            classify_ddl("comment on column app.t.c is 'x'").table,
            t(Some("APP"), "T")
        );
        let f = classify_ddl("flashback table t to before drop rename to u");
        assert_eq!(
            (f.kind, f.table, f.may_hold_rows),
            (DdlKind::Create, t(None, "U"), true)
        );
    }

    #[test]
    fn column_changes_of_alters_and_creates() {
        let add = |name: &str, ty: &str| ColumnChange::Add {
            name: name.into(),
            data_type: ty.into(),
        };
        for (sql, changes) in [
            (
                r#"ALTER TABLE "APP"."T" ADD ("EXTRA_1" NUMBER(12,2))"#,
                Some(vec![add("EXTRA_1", "NUMBER(12,2)")]),
            ),
            (
                "alter table t add c timestamp(6) with time zone default systimestamp not null",
                Some(vec![add("C", "timestamp(6) with time zone")]),
            ),
            (
                "alter table t add (a number, constraint pk primary key (a), b varchar2(30 byte))",
                Some(vec![add("A", "number"), add("B", "varchar2(30 byte)")]),
            ),
            (
                r#"ALTER TABLE "APP"."T" DROP COLUMN "GONE""#,
                Some(vec![ColumnChange::Drop {
                    name: "GONE".into(),
                }]),
            ),
            (
                "alter table t drop (a, \"b\")",
                Some(vec![
                    ColumnChange::Drop { name: "A".into() },
                    ColumnChange::Drop { name: "b".into() },
                ]),
            ),
            (
                "ALTER TABLE T SET UNUSED (D)",
                Some(vec![ColumnChange::SetUnused { name: "D".into() }]),
            ),
            (
                "alter table t set unused column d cascade constraints",
                Some(vec![ColumnChange::SetUnused { name: "D".into() }]),
            ),
            (
                "ALTER TABLE T DROP UNUSED COLUMNS",
                Some(vec![ColumnChange::DropUnused]),
            ),
            (
                r#"ALTER TABLE "APP"."T" MODIFY ("V" VARCHAR2(80))"#,
                Some(vec![ColumnChange::Modify {
                    name: "V".into(),
                    data_type: Some("VARCHAR2(80)".into()),
                }]),
            ),
            (
                "alter table t modify v not null",
                Some(vec![ColumnChange::Modify {
                    name: "V".into(),
                    data_type: None,
                }]),
            ),
            (
                "alter table t rename column a to b",
                Some(vec![ColumnChange::Rename {
                    from: "A".into(),
                    to: "B".into(),
                }]),
            ),
            ("alter table t add constraint uk unique (a)", Some(vec![])),
            (
                r#"ALTER TABLE "APP"."ORDERS" ADD PARTITION P3 VALUES LESS THAN (300)"#,
                Some(vec![]),
            ),
            (
                "alter table t modify partition p1 add values ('X')",
                Some(vec![]),
            ),
            ("alter table t drop partition p1", Some(vec![])),
            (
                "alter table t add (a number, partition_key number)",
                Some(vec![add("A", "number"), add("PARTITION_KEY", "number")]),
            ),
            (
                "alter table t add supplemental log data (all) columns",
                Some(vec![]),
            ),
            ("alter table t drop primary key", Some(vec![])),
            ("alter table t enable row movement", Some(vec![])),
            (
                r#"CREATE TABLE "APP"."N" ("ID" NUMBER(10) NOT NULL, "V" VARCHAR2(50), PRIMARY KEY ("ID"))"#,
                Some(vec![add("ID", "NUMBER(10)"), add("V", "VARCHAR2(50)")]),
            ),
            ("create table n as select * from t", None),
            ("create table n (a, b) as select x, y from t", None),
            ("alter table t move", None),
            ("alter table t add (a number", None),
            ("drop table t", None),
        ] {
            assert_eq!(column_changes(sql), changes, "{sql}");
        }
    }
}
