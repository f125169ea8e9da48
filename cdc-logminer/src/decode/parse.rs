//! First layer: a zero-copy parser of LogMiner's DML SQL_REDO.
//!
//! It names the statement's table, its columns and their literals, and nothing more: every
//! name and literal is a `&str` slice of the row's SQL_REDO, and no type is applied here (that
//! is [`super::convert`]'s job, with the column types of the schema version).
//!
//! ```text
//!  insert into ["O".]"T"("A","B") values ('x''y',NULL);
//!  update ["O".]"T" [a] set [a.]"A" = v, … [where "K" = w and "E" IS NULL and ROWID = 'r'];
//!  delete from ["O".]"T" [where …];            (no owner: the row's SEG_OWNER is the owner)
//!         │                          │
//!         ▼                          ▼
//!   Statement { kind, owner, table, assignments: [Item], conditions: [Item], row_id }
//!   Item { column: Ident, value: Literal }      Literal = Quoted | Null | Number | Bind
//!                                                         | Function{name,args} | Concat
//!                                                         | Json(value) | Unsupported
//! ```
//!
//! Grammar accepted (keywords in any case, any whitespace or `/* … */` comment between tokens,
//! an optional trailing `;`):
//!
//! ```text
//!  expr  := atom ( '||' atom )*
//!  atom  := 'text' (with '' for a quote) | NULL | number | :bind | Unsupported Type
//!         | name '(' [ expr ( ',' expr )* ] ')'          -- TO_DATE, UNISTR, HEXTORAW, …
//!         | '/* JSON */' expr                            -- OSON: the marker is kept
//! ```
//!
//! The `/* JSON */` comment is the one comment that is not whitespace: LogMiner writes it in
//! front of a JSON value as its type hint.
//!
//! Nested function calls are limited to [`MAX_DEPTH`] levels so that no input can exhaust the
//! stack; every scan moves forward, so parsing is linear in the length of the statement (a
//! function's or a concatenation's parts are re-read when iterated, at most once per level).

use std::borrow::Cow;
use std::fmt;

/// How deep function calls may nest inside one value (`XMLType(UNISTR(…))` is two).
pub const MAX_DEPTH: u32 = 16;

#[cfg(test)]
thread_local! {
    /// Tests turn the one-pass fast paths off to compare them with the general parser (and the
    /// one-pass decoder with the general path).
    pub(crate) static GENERAL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the one-pass fast paths for the common shapes (and the one-pass decoder) are used
/// (always, outside tests).
#[inline(always)]
pub(super) fn fast_paths() -> bool {
    #[cfg(test)]
    {
        !GENERAL_ONLY.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// Which DML statement SQL_REDO holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementKind {
    Insert,
    Update,
    Delete,
}

impl StatementKind {
    /// The keyword as LogMiner writes it.
    pub fn keyword(self) -> &'static str {
        match self {
            StatementKind::Insert => "insert",
            StatementKind::Update => "update",
            StatementKind::Delete => "delete",
        }
    }
}

/// Why a statement does not parse: the byte offset where parsing stopped and what was expected
/// there. It never quotes the statement, so it is safe to log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub expected: &'static str,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SQL_REDO does not parse at byte {}: expected {}",
            self.offset, self.expected
        )
    }
}

impl std::error::Error for SyntaxError {}

/// An identifier as written: the text between its double quotes (or the bare word), borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ident<'a> {
    raw: &'a str,
    quoted: bool,
    doubled: bool,
}

impl<'a> Ident<'a> {
    /// The text as written, without the surrounding quotes (a `""` inside is still doubled).
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// The name: the quoted text with `""` collapsed (borrowed unless a quote was doubled).
    #[inline]
    pub fn name(&self) -> Cow<'a, str> {
        if self.doubled {
            Cow::Owned(self.raw.replace("\"\"", "\""))
        } else {
            Cow::Borrowed(self.raw)
        }
    }
}

/// The text of a quoted literal, borrowed; `''` is still doubled in [`QuotedText::raw`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedText<'a> {
    raw: &'a str,
    doubled: bool,
}

impl<'a> QuotedText<'a> {
    /// The text between the quotes, as written.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether a `''` occurs inside.
    pub fn has_doubled_quote(&self) -> bool {
        self.doubled
    }

    /// The literal's value: `''` collapsed, padding kept. Borrowed unless a quote was doubled.
    #[inline]
    pub fn text(&self) -> Cow<'a, str> {
        if self.doubled {
            let mut out = String::with_capacity(self.raw.len());
            self.push_to(&mut out);
            Cow::Owned(out)
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// Appends the value to `out` without an intermediate allocation.
    pub fn push_to(&self, out: &mut String) {
        if !self.doubled {
            out.push_str(self.raw);
            return;
        }
        // every quote inside the raw text is the first of a `''` pair (the parser ended the
        // literal at the first lone one), so a one-byte search finds each pair
        let mut rest = self.raw;
        while let Some(at) = find_byte(rest.as_bytes(), 0, b'\'') {
            out.push_str(&rest[..=at]);
            rest = rest.get(at + 2..).unwrap_or("");
        }
        out.push_str(rest);
    }
}

/// A function call in a value position: `TO_DATE('…', '…')`, `UNISTR('…')`, `EMPTY_CLOB()`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Function<'a> {
    name: &'a str,
    /// The text between the parentheses; validated when the statement was parsed.
    args: &'a str,
}

impl<'a> Function<'a> {
    /// The function's name as written (`TO_DATE`, `HEXTORAW`, …).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Whether the name is `name`, ignoring ASCII case.
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        // LogMiner writes the names in upper case: an exact match is the common answer
        self.name.len() == name.len()
            && (self.name.as_bytes() == name.as_bytes() || self.name.eq_ignore_ascii_case(name))
    }

    /// The arguments when they are one or two plain quoted literals separated by a comma and
    /// blanks (`TO_DATE('…', '…')`, `UNISTR('…')`, `HEXTORAW('…')`): read straight from the
    /// text instead of re-running the parser. `None` for any other argument list (the caller
    /// then iterates [`Function::args`], which gives the same literals).
    #[inline]
    pub(crate) fn quoted_args(&self) -> Option<(QuotedText<'a>, Option<QuotedText<'a>>)> {
        if !fast_paths() {
            return None;
        }
        let b = self.args.as_bytes();
        let (first, mut i) = scan_quoted(self.args, 0)?;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        if i == b.len() {
            return Some((first, None));
        }
        if b[i] != b',' {
            return None;
        }
        i += 1;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        let (second, end) = scan_quoted(self.args, i)?;
        (end == b.len()).then_some((first, Some(second)))
    }

    /// The arguments, in order.
    pub fn args(&self) -> ExprList<'a> {
        ExprList {
            cursor: Cursor::new(self.args),
            first: true,
        }
    }

    /// The single argument, when there is exactly one.
    pub fn only_arg(&self) -> Option<Literal<'a>> {
        match self.quoted_args() {
            Some((arg, None)) => return Some(Literal::Quoted(arg)),
            Some((_, Some(_))) => return None,
            None => {}
        }
        let mut args = self.args();
        let first = args.next()?;
        args.next().is_none().then_some(first)
    }
}

impl fmt::Debug for Function<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("args", &self.args().collect::<Vec<_>>())
            .finish()
    }
}

/// `a || b || …`: the parts in order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Concat<'a> {
    /// The whole expression; validated when the statement was parsed.
    span: &'a str,
}

impl<'a> Concat<'a> {
    pub fn parts(&self) -> ConcatParts<'a> {
        ConcatParts {
            cursor: Cursor::new(self.span),
            first: true,
        }
    }
}

impl fmt::Debug for Concat<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Concat")
            .field(&self.parts().collect::<Vec<_>>())
            .finish()
    }
}

/// A value LogMiner marks as JSON (OSON) with a `/* JSON */` comment in front of it
/// (`/* JSON */ EMPTY_BLOB()`, `/* JSON */ HEXTORAW('ff4a5a…')`): the marker is the value's
/// type hint, so it is kept rather than skipped as a comment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct JsonValue<'a> {
    /// The value after the marker; validated when the statement was parsed.
    span: &'a str,
}

impl<'a> JsonValue<'a> {
    /// The marked value.
    pub fn value(&self) -> Literal<'a> {
        // validated at parse time with the real depth; the bound here only has to be as large
        Cursor::new(self.span).expr(0).unwrap_or(Literal::Null)
    }
}

impl fmt::Debug for JsonValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonValue").field(&self.value()).finish()
    }
}

/// The comment LogMiner writes in front of a JSON value: `/* JSON */` (any blanks inside, any
/// case). It is a type hint, not whitespace.
const JSON_MARKER: &str = "JSON";

/// Whether `b` starts with the JSON marker comment; its length when it does.
fn json_marker(b: &[u8]) -> Option<usize> {
    let inner = b.strip_prefix(b"/*")?;
    let end = inner.windows(2).position(|w| w == b"*/")?;
    inner[..end]
        .trim_ascii()
        .eq_ignore_ascii_case(JSON_MARKER.as_bytes())
        .then_some(2 + end + 2)
}

/// A value as SQL_REDO writes it, before any type is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal<'a> {
    /// `'text'`; numbers are quoted too (`'-42.5'`).
    Quoted(QuotedText<'a>),
    /// `NULL`, or `"C" IS NULL` in a WHERE clause.
    Null,
    /// An unquoted number: its text as written.
    Number(&'a str),
    /// A bind placeholder such as `:1` (`XMLType(:1)` of XML stored as CLOB).
    Bind(&'a str),
    Function(Function<'a>),
    Concat(Concat<'a>),
    /// A value with the `/* JSON */` marker in front of it.
    Json(JsonValue<'a>),
    /// LogMiner's bare `Unsupported Type` token.
    Unsupported,
}

/// One `column = value` (or `column IS NULL`) of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    pub column: Ident<'a>,
    pub value: Literal<'a>,
}

/// A parsed DML statement; everything in it borrows the SQL_REDO text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement<'a> {
    pub kind: StatementKind,
    /// `None` when the statement names its table without an owner (`insert into "T"…`): the
    /// owner is then the row's SEG_OWNER.
    pub owner: Option<Ident<'a>>,
    pub table: Ident<'a>,
    /// Insert: the column/value pairs; update: the SET items, then the WHERE items.
    items: Vec<Item<'a>>,
    /// Where the WHERE items start in `items`.
    split: usize,
    /// The value of a `ROWID = '…'` predicate.
    pub row_id: Option<&'a str>,
}

impl<'a> Statement<'a> {
    /// The values an insert writes or the SET items of an update (none for a delete).
    pub fn assignments(&self) -> &[Item<'a>] {
        &self.items[..self.split]
    }

    /// The WHERE items of an update or delete other than `ROWID` (none for an insert).
    pub fn conditions(&self) -> &[Item<'a>] {
        &self.items[self.split..]
    }

    /// Every item, assignments first.
    pub fn items(&self) -> &[Item<'a>] {
        &self.items
    }

    /// The item vector, emptied, to parse the next statement into with
    /// [`parse_statement_reusing`] (its allocation is kept).
    pub(crate) fn into_buffer<'b>(self) -> Vec<Item<'b>> {
        recycle(self.items)
    }
}

/// An emptied vector of items of any lifetime, on the allocation of `items`: the items borrow
/// nothing once removed, and collecting in place keeps the buffer.
pub(crate) fn recycle<'b>(mut items: Vec<Item<'_>>) -> Vec<Item<'b>> {
    items.clear();
    items.into_iter().map(|_| unreachable_item()).collect()
}

/// Never called: `recycle` maps an empty iterator.
#[cold]
fn unreachable_item<'b>() -> Item<'b> {
    Item {
        column: Ident {
            raw: "",
            quoted: false,
            doubled: false,
        },
        value: Literal::Null,
    }
}

/// Parses one DML statement of SQL_REDO (already reassembled from its CSF pieces).
pub fn parse_statement(sql: &str) -> Result<Statement<'_>, SyntaxError> {
    parse_statement_reusing(sql, Vec::new())
}

/// [`parse_statement`] into `buffer`, an empty vector whose allocation is reused (a decode
/// thread parses every row into the same one).
pub(crate) fn parse_statement_reusing<'a>(
    sql: &'a str,
    mut buffer: Vec<Item<'a>>,
) -> Result<Statement<'a>, SyntaxError> {
    buffer.clear();
    if buffer.capacity() == 0 {
        buffer.reserve(estimate_items(sql));
    }
    let mut c = Cursor::new(sql);
    c.ws()?;
    let start = c.pos;
    let word = c.bare_word();
    let kind = if word.eq_ignore_ascii_case("insert") {
        StatementKind::Insert
    } else if word.eq_ignore_ascii_case("update") {
        StatementKind::Update
    } else if word.eq_ignore_ascii_case("delete") {
        StatementKind::Delete
    } else {
        return Err(SyntaxError {
            offset: start,
            expected: "insert, update or delete",
        });
    };
    c.ws()?;
    let statement = match kind {
        StatementKind::Insert => {
            c.expect_keyword("into")?;
            let (owner, table) = c.table_name()?;
            c.alias()?;
            insert_body(&mut c, owner, table, buffer)?
        }
        StatementKind::Update => {
            let (owner, table) = c.table_name()?;
            let alias = c.alias()?;
            c.expect_keyword("set")?;
            let mut items = buffer;
            loop {
                if let Some(item) = c.simple_item(false) {
                    items.push(item);
                    c.ws()?;
                    if !c.eat(b',') {
                        break;
                    }
                    c.ws()?;
                    continue;
                }
                let column = c.column_ref(alias)?;
                c.ws()?;
                c.expect_byte(b'=', "'='")?;
                c.ws()?;
                let value = c.value()?;
                items.push(Item { column, value });
                c.ws()?;
                if !c.eat(b',') {
                    break;
                }
                c.ws()?;
            }
            let split = items.len();
            let row_id = where_clause(&mut c, alias, &mut items)?;
            Statement {
                kind,
                owner,
                table,
                items,
                split,
                row_id,
            }
        }
        StatementKind::Delete => {
            c.expect_keyword("from")?;
            let (owner, table) = c.table_name()?;
            let alias = c.alias()?;
            let mut items = buffer;
            let row_id = where_clause(&mut c, alias, &mut items)?;
            Statement {
                kind,
                owner,
                table,
                items,
                split: 0,
                row_id,
            }
        }
    };
    c.ws()?;
    if c.eat(b';') {
        c.ws()?;
    }
    if !c.at_end() {
        return Err(c.error("the end of the statement"));
    }
    Ok(statement)
}

/// A cheap estimate of a statement's items, so a new item vector is allocated once and no
/// larger than needed: every item names its column in double quotes (the table's name takes
/// two pairs). Counting one byte vectorises; an under-estimate only means the vector grows.
fn estimate_items(sql: &str) -> usize {
    // per 32-byte block, in a form the compiler vectorises
    let quotes: usize = sql
        .as_bytes()
        .chunks(32)
        .map(|block| block.iter().map(|&b| u8::from(b == b'"')).sum::<u8>() as usize)
        .sum();
    (quotes / 2).saturating_sub(2).max(4)
}

fn insert_body<'a>(
    c: &mut Cursor<'a>,
    owner: Option<Ident<'a>>,
    table: Ident<'a>,
    mut items: Vec<Item<'a>>,
) -> Result<Statement<'a>, SyntaxError> {
    c.expect_byte(b'(', "'(' before the column list")?;
    c.ws()?;
    // The column names are read once, into the items with a placeholder value that the value
    // list then fills in.
    if !c.eat(b')') {
        loop {
            let column = c.column_ref(None)?;
            items.push(Item {
                column,
                value: Literal::Null,
            });
            c.ws()?;
            if c.eat(b')') {
                break;
            }
            c.expect_byte(b',', "',' or ')' in the column list")?;
            c.ws()?;
        }
    }
    c.ws()?;
    c.expect_keyword("values")?;
    c.expect_byte(b'(', "'(' before the value list")?;
    c.ws()?;
    let count = items.len();
    if count == 0 {
        c.expect_byte(b')', "')' after an empty value list")?;
    } else {
        for (index, item) in items.iter_mut().enumerate() {
            item.value = c.value()?;
            c.ws()?;
            if index + 1 < count {
                if c.peek() == Some(b')') {
                    return Err(c.error("as many values as columns"));
                }
                c.expect_byte(b',', "',' between values")?;
                c.ws()?;
            } else if c.peek() == Some(b',') {
                return Err(c.error("as many values as columns"));
            }
        }
        c.expect_byte(b')', "')' after the value list")?;
    }
    let split = items.len();
    Ok(Statement {
        kind: StatementKind::Insert,
        owner,
        table,
        items,
        split,
        row_id: None,
    })
}

/// Reads an optional `where c = v and c IS NULL and ROWID = '…'` into `items`; returns the
/// ROWID predicate's value.
fn where_clause<'a>(
    c: &mut Cursor<'a>,
    alias: Option<&'a str>,
    items: &mut Vec<Item<'a>>,
) -> Result<Option<&'a str>, SyntaxError> {
    c.ws()?;
    if !c.keyword("where") {
        return Ok(None);
    }
    let mut row_id = None;
    loop {
        c.ws()?;
        if let Some(item) = c.simple_item(true) {
            items.push(item);
            // ` and ` as LogMiner writes it, or any other blanks and case
            if fast_paths()
                && c.bytes()
                    .get(c.pos..)
                    .is_some_and(|rest| rest.starts_with(b" and "))
            {
                c.pos += 4;
                continue;
            }
            c.ws()?;
            if !c.keyword("and") {
                break;
            }
            continue;
        }
        let save = c.pos;
        let word = c.bare_word();
        if word.eq_ignore_ascii_case("rowid") && !c.next_is(b'.') {
            c.ws()?;
            c.expect_byte(b'=', "'=' after ROWID")?;
            c.ws()?;
            match c.atom(0)? {
                Literal::Quoted(text) => row_id = Some(text.raw()),
                _ => return Err(c.error("a quoted ROWID")),
            }
        } else {
            c.pos = save;
            let column = c.column_ref(alias)?;
            c.ws()?;
            if c.eat(b'=') {
                c.ws()?;
                let value = c.value()?;
                items.push(Item { column, value });
            } else if c.keyword("is") {
                c.ws()?;
                c.expect_keyword("null")?;
                items.push(Item {
                    column,
                    value: Literal::Null,
                });
            } else {
                return Err(c.error("'=' or IS NULL"));
            }
        }
        c.ws()?;
        if !c.keyword("and") {
            break;
        }
    }
    Ok(row_id)
}

/// The value (`expr`) at byte `at` of `sql` and the offset after it, read as the statement
/// parser reads it; `None` when none parses there.
pub(super) fn value_at(sql: &str, at: usize) -> Option<(Literal<'_>, usize)> {
    let mut c = Cursor { s: sql, pos: at };
    let value = c.value().ok()?;
    Some((value, c.pos))
}

/// Iterator over a function's arguments.
#[derive(Debug, Clone)]
pub struct ExprList<'a> {
    cursor: Cursor<'a>,
    first: bool,
}

impl<'a> Iterator for ExprList<'a> {
    type Item = Literal<'a>;

    fn next(&mut self) -> Option<Literal<'a>> {
        let c = &mut self.cursor;
        c.ws().ok()?;
        if c.at_end() {
            return None;
        }
        if !self.first {
            if !c.eat(b',') {
                return None;
            }
            c.ws().ok()?;
        }
        self.first = false;
        // validated at parse time with the real depth; the bound here only has to be as large
        c.expr(0).ok()
    }
}

/// Iterator over the parts of a `||` concatenation.
#[derive(Debug, Clone)]
pub struct ConcatParts<'a> {
    cursor: Cursor<'a>,
    first: bool,
}

impl<'a> Iterator for ConcatParts<'a> {
    type Item = Literal<'a>;

    fn next(&mut self) -> Option<Literal<'a>> {
        let c = &mut self.cursor;
        c.ws().ok()?;
        if c.at_end() {
            return None;
        }
        if !self.first {
            if !c.eat_str("||") {
                return None;
            }
            c.ws().ok()?;
        }
        self.first = false;
        c.atom(0).ok()
    }
}

/// A quoted literal starting at `at` (which must hold the opening quote): the literal and the
/// offset after its closing quote. `None` when `at` holds no quote or the quote is not closed.
#[inline]
pub(super) fn scan_quoted(s: &str, at: usize) -> Option<(QuotedText<'_>, usize)> {
    let b = s.as_bytes();
    if b.get(at) != Some(&b'\'') {
        return None;
    }
    let start = at + 1;
    let mut pos = start;
    let mut doubled = false;
    loop {
        let close = find_byte(b, pos, b'\'')?;
        if b.get(close + 1) == Some(&b'\'') {
            doubled = true;
            pos = close + 2;
        } else {
            return Some((
                QuotedText {
                    raw: s.get(start..close)?,
                    doubled,
                },
                close + 1,
            ));
        }
    }
}

/// The offset of the next `needle` at or after `from`: eight bytes at a time (a word-wide
/// "has a zero byte" test), then byte by byte. Literals and names are short, so this beats a
/// vectorised search's set-up cost.
#[inline]
pub(super) fn find_byte(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pattern = LO.wrapping_mul(u64::from(needle));
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let x = u64::from_le_bytes(word) ^ pattern;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes
        .get(i..)?
        .iter()
        .position(|&b| b == needle)
        .map(|at| i + at)
}

#[derive(Debug, Clone)]
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

/// Bytes of a bare word: ASCII letters and digits, `_`, `$`, `#`, and every byte of a
/// non-ASCII character. A table, because this test runs for every byte of every name.
static WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'#' || c >= 0x80;
        b += 1;
    }
    table
};

#[inline]
pub(super) fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[usize::from(b)]
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s, pos: 0 }
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    #[inline]
    fn next_is(&self, b: u8) -> bool {
        self.peek() == Some(b)
    }

    #[inline]
    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn error(&self, expected: &'static str) -> SyntaxError {
        SyntaxError {
            offset: self.pos,
            expected,
        }
    }

    #[inline]
    fn eat(&mut self, b: u8) -> bool {
        if self.next_is(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        if self.bytes()[self.pos.min(self.s.len())..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect_byte(&mut self, b: u8, expected: &'static str) -> Result<(), SyntaxError> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// Skips whitespace and `/* … */` comments (`/* JSON */ EMPTY_BLOB()`).
    #[inline]
    fn ws(&mut self) -> Result<(), SyntaxError> {
        match self.peek() {
            // the common case, one blank before the next token
            Some(b' ') => {
                self.pos += 1;
                match self.peek() {
                    Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | b'/') => self.ws_slow(),
                    _ => Ok(()),
                }
            }
            Some(b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | b'/') => self.ws_slow(),
            _ => Ok(()),
        }
    }

    fn ws_slow(&mut self) -> Result<(), SyntaxError> {
        let bytes = self.bytes();
        loop {
            while let Some(&b) = bytes.get(self.pos) {
                if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            if bytes.get(self.pos) == Some(&b'/') && bytes.get(self.pos + 1) == Some(&b'*') {
                if bytes.get(self.pos..).and_then(json_marker).is_some() {
                    // a type hint, read with the value it marks
                    return Ok(());
                }
                match self.s[self.pos + 2..].find("*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => return Err(self.error("the end of a comment")),
                }
            } else {
                return Ok(());
            }
        }
    }

    /// A bare word (letters, digits, `_`, `$`, `#`, non-ASCII); empty when none starts here.
    #[inline]
    fn bare_word(&mut self) -> &'a str {
        let start = self.pos;
        let bytes = self.bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if is_word_byte(b) {
                self.pos += 1;
            } else {
                break;
            }
        }
        &self.s[start..self.pos]
    }

    /// Consumes `kw` (any case) when it is the next whole word.
    #[inline]
    fn keyword(&mut self, kw: &str) -> bool {
        let end = self.pos + kw.len();
        match self.bytes().get(self.pos..end) {
            Some(word)
                if word.eq_ignore_ascii_case(kw.as_bytes())
                    && !self.bytes().get(end).is_some_and(|&b| is_word_byte(b)) =>
            {
                self.pos = end;
                true
            }
            _ => false,
        }
    }

    fn expect_keyword(&mut self, kw: &'static str) -> Result<(), SyntaxError> {
        if self.keyword(kw) {
            self.ws()
        } else {
            Err(self.error(kw))
        }
    }

    /// `"name"` (with `""` for a quote inside) or a bare word.
    fn ident(&mut self) -> Result<Ident<'a>, SyntaxError> {
        if self.eat(b'"') {
            let start = self.pos;
            let mut doubled = false;
            loop {
                match find_byte(self.bytes(), self.pos, b'"') {
                    None => {
                        self.pos = start;
                        return Err(self.error("a closing '\"'"));
                    }
                    Some(at) => {
                        self.pos = at + 1;
                        if self.next_is(b'"') {
                            doubled = true;
                            self.pos += 1;
                        } else {
                            return Ok(Ident {
                                raw: &self.s[start..self.pos - 1],
                                quoted: true,
                                doubled,
                            });
                        }
                    }
                }
            }
        }
        let word = self.bare_word();
        if word.is_empty() {
            return Err(self.error("an identifier"));
        }
        Ok(Ident {
            raw: word,
            quoted: false,
            doubled: false,
        })
    }

    /// `"OWNER"."TABLE"`, or `"TABLE"` alone (the owner is then the row's SEG_OWNER).
    fn table_name(&mut self) -> Result<(Option<Ident<'a>>, Ident<'a>), SyntaxError> {
        let first = self.ident()?;
        if !self.eat(b'.') {
            return Ok((None, first));
        }
        let table = self.ident()?;
        Ok((Some(first), table))
    }

    /// An alias after the table name (`update "O"."T" a set a."C" = …`).
    fn alias(&mut self) -> Result<Option<&'a str>, SyntaxError> {
        self.ws()?;
        let save = self.pos;
        let word = self.bare_word();
        if word.is_empty()
            || ["set", "where", "values"]
                .iter()
                .any(|kw| word.eq_ignore_ascii_case(kw))
        {
            self.pos = save;
            return Ok(None);
        }
        self.ws()?;
        Ok(Some(word))
    }

    /// The item shapes LogMiner writes most, read in one pass: `"C" = v` with `v` one of the
    /// values [`Cursor::simple_value_at`] reads and (in a WHERE clause, `is_null_allowed`)
    /// `"C" IS NULL`, with exactly these blanks and no `""` in the name. Leaves the cursor after the item; `None` (cursor
    /// unmoved) for anything else, which the general path then reads — identically for these
    /// shapes.
    #[inline]
    fn simple_item(&mut self, is_null_allowed: bool) -> Option<Item<'a>> {
        if !fast_paths() {
            return None;
        }
        let b = self.bytes();
        let p = self.pos;
        if b.get(p) != Some(&b'"') {
            return None;
        }
        let close = find_byte(b, p + 1, b'"')?;
        let column = Ident {
            raw: self.s.get(p + 1..close)?,
            quoted: true,
            doubled: false,
        };
        let after = b.get(close + 1..)?;
        if after.starts_with(b" = ") {
            let (value, end) = self.simple_value_at(close + 4)?;
            self.pos = end;
            return Some(Item { column, value });
        }
        if is_null_allowed
            && after.starts_with(b" IS NULL")
            && !after.get(8).is_some_and(|&c| is_word_byte(c))
        {
            self.pos = close + 9;
            return Some(Item {
                column,
                value: Literal::Null,
            });
        }
        None
    }

    /// Whether a value that ends at `end` is whole: no `||` (or a comment that may hide one)
    /// follows it, which would make it part of a concatenation.
    #[inline]
    fn ends_value(&self, end: usize) -> bool {
        let b = self.bytes();
        let mut k = end;
        while b
            .get(k)
            .is_some_and(|&c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            k += 1;
        }
        !matches!(b.get(k), Some(b'|' | b'/'))
    }

    /// A value at `at` in one of the shapes LogMiner writes most, read in one pass: a quoted
    /// literal, `NULL`, or a call with no argument or one or two quoted arguments
    /// (`TO_DATE('…', '…')`, `UNISTR('…')`, `EMPTY_CLOB()`), with no blank inside the
    /// parentheses other than after the comma, and no `||` after it. Returns the literal and
    /// the offset after it; `None` for anything else, which the general path then reads —
    /// identically for these shapes.
    #[inline]
    fn simple_value_at(&self, at: usize) -> Option<(Literal<'a>, usize)> {
        if !fast_paths() {
            return None;
        }
        let b = self.bytes();
        let first = *b.get(at)?;
        if first == b'\'' {
            let (text, end) = scan_quoted(self.s, at)?;
            return self.ends_value(end).then_some((Literal::Quoted(text), end));
        }
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return None;
        }
        let mut i = at + 1;
        while b.get(i).is_some_and(|&c| is_word_byte(c)) {
            i += 1;
        }
        let name = self.s.get(at..i)?;
        if name.eq_ignore_ascii_case("null") {
            return self.ends_value(i).then_some((Literal::Null, i));
        }
        if b.get(i) != Some(&b'(') {
            return None;
        }
        let open = i + 1;
        let close = if b.get(open) == Some(&b')') {
            open
        } else {
            let (_, mut k) = scan_quoted(self.s, open)?;
            if b.get(k) == Some(&b',') {
                k += 1;
                while b.get(k) == Some(&b' ') {
                    k += 1;
                }
                k = scan_quoted(self.s, k)?.1;
            }
            if b.get(k) != Some(&b')') {
                return None;
            }
            k
        };
        let end = close + 1;
        self.ends_value(end).then_some((
            Literal::Function(Function {
                name,
                args: self.s.get(open..close)?,
            }),
            end,
        ))
    }

    /// `expr`, with the common shapes (most values) read in one pass.
    #[inline]
    fn value(&mut self) -> Result<Literal<'a>, SyntaxError> {
        if let Some((literal, end)) = self.simple_value_at(self.pos) {
            self.pos = end;
            return Ok(literal);
        }
        self.expr(0)
    }

    /// A column reference, optionally prefixed by the statement's alias.
    fn column_ref(&mut self, alias: Option<&str>) -> Result<Ident<'a>, SyntaxError> {
        let first = self.ident()?;
        if self.next_is(b'.') {
            let is_alias = alias.is_some_and(|a| !first.quoted && first.raw == a);
            if !is_alias {
                return Err(self.error("a column name"));
            }
            self.pos += 1;
            return self.ident();
        }
        Ok(first)
    }

    /// `atom ( '||' atom )*`.
    fn expr(&mut self, depth: u32) -> Result<Literal<'a>, SyntaxError> {
        let start = self.pos;
        let first = self.atom(depth)?;
        let mut end = self.pos;
        let mut parts = 1;
        loop {
            let save = self.pos;
            self.ws()?;
            // the common case ends the value with ',', ')' or a keyword: one byte decides
            if !(self.next_is(b'|') && self.eat_str("||")) {
                self.pos = save;
                break;
            }
            self.ws()?;
            self.atom(depth)?;
            end = self.pos;
            parts += 1;
        }
        if parts == 1 {
            Ok(first)
        } else {
            Ok(Literal::Concat(Concat {
                span: &self.s[start..end],
            }))
        }
    }

    fn atom(&mut self, depth: u32) -> Result<Literal<'a>, SyntaxError> {
        let Some(b) = self.peek() else {
            return Err(self.error("a value"));
        };
        match b {
            b'\'' => self.quoted().map(Literal::Quoted),
            b':' => {
                let start = self.pos;
                self.pos += 1;
                if self.bare_word().is_empty() {
                    return Err(self.error("a bind name after ':'"));
                }
                Ok(Literal::Bind(&self.s[start..self.pos]))
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => self.number().map(Literal::Number),
            b'/' => {
                let Some(len) = self.bytes().get(self.pos..).and_then(json_marker) else {
                    return Err(self.error("a value"));
                };
                if depth >= MAX_DEPTH {
                    return Err(self.error("less deeply nested values"));
                }
                self.pos += len;
                self.ws()?;
                let start = self.pos;
                self.expr(depth + 1)?;
                Ok(Literal::Json(JsonValue {
                    span: &self.s[start..self.pos],
                }))
            }
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                let start = self.pos;
                if self.keyword("null") {
                    return Ok(Literal::Null);
                }
                if self.keyword("unsupported") {
                    self.ws()?;
                    if self.keyword("type") {
                        return Ok(Literal::Unsupported);
                    }
                    // not the token: read it as a function name instead
                    self.pos = start;
                }
                self.function(depth)
            }
            _ => Err(self.error("a value")),
        }
    }

    fn quoted(&mut self) -> Result<QuotedText<'a>, SyntaxError> {
        // caller saw the opening quote
        self.pos += 1;
        let start = self.pos;
        let mut doubled = false;
        loop {
            match find_byte(self.bytes(), self.pos, b'\'') {
                None => {
                    self.pos = start - 1;
                    return Err(self.error("a closing quote"));
                }
                Some(at) => {
                    self.pos = at + 1;
                    if self.next_is(b'\'') {
                        doubled = true;
                        self.pos += 1;
                    } else {
                        return Ok(QuotedText {
                            raw: &self.s[start..self.pos - 1],
                            doubled,
                        });
                    }
                }
            }
        }
    }

    /// An unquoted number: `[+-]digits[.digits][e[+-]digits]`.
    fn number(&mut self) -> Result<&'a str, SyntaxError> {
        let start = self.pos;
        let bytes = self.bytes();
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        let mut digits = 0;
        while let Some(&b) = bytes.get(self.pos) {
            if b.is_ascii_digit() {
                digits += 1;
            } else if b != b'.' {
                break;
            }
            self.pos += 1;
        }
        if digits == 0 {
            self.pos = start;
            return Err(self.error("a number"));
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'-' | b'+')) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == exp_start {
                return Err(self.error("exponent digits"));
            }
        }
        if self.peek().is_some_and(is_word_byte) {
            return Err(self.error("the end of a number"));
        }
        Ok(&self.s[start..self.pos])
    }

    /// `name(args)`; the name may be qualified (`SYS.XMLTYPE`).
    fn function(&mut self, depth: u32) -> Result<Literal<'a>, SyntaxError> {
        let start = self.pos;
        loop {
            self.bare_word();
            if self.next_is(b'.')
                && self
                    .bytes()
                    .get(self.pos + 1)
                    .is_some_and(|&b| is_word_byte(b))
            {
                self.pos += 1;
            } else {
                break;
            }
        }
        let name = &self.s[start..self.pos];
        if name.is_empty() {
            return Err(self.error("a value"));
        }
        self.ws()?;
        if !self.next_is(b'(') {
            self.pos = start;
            return Err(self.error("a value"));
        }
        if depth >= MAX_DEPTH {
            return Err(self.error("less deeply nested function calls"));
        }
        self.pos += 1;
        self.ws()?;
        let args_start = self.pos;
        let mut args_end = self.pos;
        if !self.eat(b')') {
            loop {
                self.expr(depth + 1)?;
                args_end = self.pos;
                self.ws()?;
                if self.eat(b')') {
                    break;
                }
                self.expect_byte(b',', "',' or ')' in an argument list")?;
                self.ws()?;
            }
        }
        Ok(Literal::Function(Function {
            name,
            args: &self.s[args_start..args_end],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_shape() {
        let s =
            parse_statement(r#"insert into "APP"."T"("ID","NAME","D") values ('1','it''s',NULL);"#)
                .unwrap();
        assert_eq!(s.kind, StatementKind::Insert);
        assert_eq!(s.owner.map(|o| o.name()), Some("APP".into()));
        assert_eq!(s.table.name(), "T");
        let items = s.assignments();
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].column.name(), "NAME");
        match items[1].value {
            Literal::Quoted(q) => assert_eq!(q.text(), "it's"),
            other => panic!("{other:?}"),
        }
        assert_eq!(items[2].value, Literal::Null);
        assert!(s.conditions().is_empty());
    }

    #[test]
    fn function_args_and_concat() {
        let s = parse_statement(
            r#"update "O"."T" set "D" = TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS'), "N" = UNISTR('a') ||UNISTR('\00e9') where "K" = '1' and "E" IS NULL and ROWID = 'AAAA'"#,
        )
        .unwrap();
        let Literal::Function(f) = s.assignments()[0].value else {
            panic!()
        };
        assert!(f.is("to_date"));
        let args: Vec<_> = f.args().collect();
        assert_eq!(args.len(), 2);
        let Literal::Concat(c) = s.assignments()[1].value else {
            panic!()
        };
        assert_eq!(c.parts().count(), 2);
        assert_eq!(s.conditions().len(), 2);
        assert_eq!(s.row_id, Some("AAAA"));
    }

    #[test]
    fn a_reused_item_buffer_parses_the_same_and_keeps_its_allocation() {
        let statements = [
            r#"insert into "O"."T"("A","B","C") values ('1',NULL,TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS'))"#,
            r#"update "O"."T" set "A" = '2' where "A" = '1' and "B" IS NULL"#,
            r#"delete from "O"."T" where "A" = '1' and ROWID = 'AAA'"#,
            r#"delete from "O"."T""#,
        ];
        let mut buffer = Vec::new();
        for sql in statements {
            let fresh = parse_statement(sql).unwrap();
            let reused = parse_statement_reusing(sql, recycle(buffer)).unwrap();
            assert_eq!(reused, fresh, "{sql}");
            let capacity = reused.items().len().max(1);
            buffer = reused.into_buffer();
            assert!(buffer.is_empty());
            // collecting in place keeps the allocation (what the reuse is for)
            assert!(buffer.capacity() >= capacity, "{sql}");
        }
    }

    #[test]
    fn find_byte_agrees_with_position() {
        let text = b"abc'defghij'klmnopqrstuvwxyz''0123456789'";
        for from in 0..=text.len() + 2 {
            let expected = text
                .get(from..)
                .and_then(|t| t.iter().position(|&b| b == b'\''))
                .map(|p| p + from);
            assert_eq!(find_byte(text, from, b'\''), expected, "{from}");
        }
        assert_eq!(
            find_byte(&[0x80, 0xa7, b'\'', 0xff, 0x27, 1, 2, 3, 4], 0, b'\''),
            Some(2)
        );
    }

    /// Statements that exercise the edges of the one-pass fast paths: each must parse (or
    /// fail) exactly as the general parser reads it, and every value must convert the same.
    #[test]
    fn fast_paths_agree_with_the_general_parser() {
        use crate::decode::convert::convert;
        use cdc_core::table::{ColumnDef, ColumnType};

        let values = [
            "'abc'",
            "'it''s'",
            "''''",
            "''",
            "'a' || 'b'",
            "'a'  ||  'b'",
            "'a'/* c */|| 'b'",
            "'a' /* c */",
            "'a'\t|| 'b'",
            "'unterminated",
            "'x''",
            "NULL",
            "42",
            "-1.5e3",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59','SYYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59',  'yyyy-mm-dd hh24:mi:ss')",
            "TO_DATE('2026-02-28 13:45:59', 'DD-MON-RR')",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS', 'x')",
            "TO_DATE('2026-02-28 13:45:59' || '', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE( '2026-02-28 13:45:59' , 'YYYY-MM-DD HH24:MI:SS' )",
            "TO_DATE('2026-02-28 13:45:59',/**/'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59', 42)",
            "TO_TIMESTAMP('2026-03-29 01:30:00.123456000')",
            "TO_TIMESTAMP('2026-03-29 01:30:00.')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +05:30')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 -08:00')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +15:00')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +14:60')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +5:30')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 Europe/Paris')",
            "TO_DSINTERVAL('+00005 04:03:02.123456')",
            "TO_DSINTERVAL(' +00005 04:03:02')",
            "TO_YMINTERVAL('+0012-03')",
            r"UNISTR('caf\00e9 it''s')",
            r"UNISTR('\d83d') || UNISTR('\de00')",
            "UNISTR('a', 'b')",
            r"UNISTR('\zz00')",
            r"UNISTR('\00é0')",
            "HEXTORAW('deadbeef')",
            "HEXTORAW('dead') || HEXTORAW('beef')",
            "EMPTY_CLOB()",
            "Unsupported Type",
            "null",
            "NULL || 'a'",
            "NULL/* c */",
            "NULL('a')",
            "NULLX('a')",
            "EMPTY_CLOB( )",
            "EMPTY_BLOB() || 'a'",
            "EMPTY_CLOB ()",
            "TO_DATE('2026-02-28 13:45:59','YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59' , 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS' )",
            "TO_DATE('2026-02-28 13:45:59',\t'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')|| 'x'",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS'",
            "TO_DATE('2026-02-28 13:45:59', 'unterminated)",
            "TO_DATE('2026-02-28 13:45:59', )",
            "TO_DATE(,'x')",
            "SYS.XMLTYPE('<a/>')",
            "Unsupported('a')",
            "F$#_1('a')",
            "_F('a')",
            "HEXTORAW('it''s')",
            "UNISTR('a''b', 'c''')",
            "/* JSON */ HEXTORAW('ff4a')",
            "/*JSON*/EMPTY_BLOB()",
            "/* json */ 'a' || 'b'",
            "/* JSON */",
            "/* JSONX */ 'a'",
        ];
        let types = [
            ColumnType::Number,
            ColumnType::Varchar2,
            ColumnType::NVarchar2,
            ColumnType::Date,
            ColumnType::Timestamp,
            ColumnType::TimestampTz,
            ColumnType::TimestampLtz,
            ColumnType::IntervalDs,
            ColumnType::IntervalYm,
            ColumnType::Raw,
            ColumnType::Clob,
        ];
        let shapes = [
            r#"insert into "O"."T"("A","B") values ({v},{v})"#,
            r#"insert into "O"."T"("A","B") values ({v}, {v});"#,
            r#"update "O"."T" set "A" = {v}, "B" = {v} where "K" = {v} and "E" IS NULL"#,
            r#"update "O"."T" set "A" = {v} where "K" = {v} and ROWID = 'AAA';"#,
            r#"update "O"."T" a set a."A" = {v} where a."K" = {v}"#,
            r#"update "O"."T" set "A" = {v} where "K" = {v}"#,
            r#"delete from "O"."T" where "K" = {v} and "E" IS NULL and "F" = {v}"#,
            r#"delete from "O"."T" where "K"={v} and "E" is null"#,
            r#"delete from "O"."T" where "K" = {v} and "E" IS NULLX"#,
            r#"delete from "O"."T" where "K" = {v} and "E" IS NULL/**/"#,
            r#"delete from "O"."T" where "A""B" = {v} and "C" IS NULL and "D" = {v}"#,
            r#"delete from "O"."T" where "K" = {v}  and "D" =  {v}"#,
            r#"delete from "O"."T" where "K" = {v} and "D" = {v} ;"#,
            r#"delete from "O"."T" where "K" = {v} and  "E" IS NULL and	"F" = {v} AND "G" = {v}"#,
            r#"delete from "O"."T" where "K" = {v} and /* c */ "E" IS NULL and "#,
            r#"delete from "O"."T" where "K" = {v} and "#,
        ];
        let general_only = |on: bool| GENERAL_ONLY.with(|g| g.set(on));
        for shape in shapes {
            for v in values {
                let sql = shape.replace("{v}", v);
                let fast = parse_statement(&sql);
                general_only(true);
                let general = parse_statement(&sql);
                general_only(false);
                assert_eq!(fast, general, "{sql}");
                let Ok(stmt) = fast else { continue };
                for item in stmt.items() {
                    for ty in &types {
                        let column = ColumnDef::new("C", 1, ty.clone());
                        let fast = convert(&item.value, &column);
                        general_only(true);
                        let general = convert(&item.value, &column);
                        general_only(false);
                        assert_eq!(fast, general, "{sql} as {ty:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn rejects_without_panicking() {
        for bad in [
            "",
            "select 1",
            "insert into",
            r#"insert into "A"."B"("X") values ('1','2')"#,
            r#"insert into "A"."B"("X","Y") values ('1')"#,
            r#"update "A"."B" set "X" = 'unterminated"#,
            r#"delete from "A"."B" where "X" = '1' trailing"#,
            r#"update "A"."B" set "X" = f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(1)))))))))))))))))"#,
            "update \"A\".\"B\" set \"X\" = '1' /* open",
        ] {
            assert!(parse_statement(bad).is_err(), "{bad}");
        }
    }
}
