//! The one-pass decoder: DML in exactly the shape LogMiner writes it, converted while it is
//! read. Each column is resolved as soon as its name is read, so its value is read for the
//! column's type in the same pass (`'42'` to a NUMBER, `TO_DATE('…', '…')` to a DATE) instead
//! of being parsed into an item and converted afterwards.
//!
//! ```text
//!  insert into "O"."T"("A","B") values (v,v)[;]
//!  update "O"."T" set "A" = v, "B" = v[ where "K" = v and "E" IS NULL and ROWID = 'r'][;]
//!  delete from "O"."T"[ where …][;]
//!      │  exactly these keywords and blanks, no `""` in a name, no comment
//!      ▼
//!  "O"."T" ─ compared whole with the layout's table (DecodeTable::quoted_name)
//!  an insert's ("A","B") values ( ── the same text as the table's first insert? ─► its columns
//!      │ otherwise name by name; an update or delete item first as the column at the hint
//!      │ ("NAME" = compared whole), the one the lookup would give for that name
//!  "C" ─ DecodeTable::lookup ─┬─ excluded ─► value skipped (only its syntax is read)
//!                             └─ column ──► typed reader for the column type and value shape
//!                                            └─ other shapes: parse::value_at + convert
//!
//!  any other shape, any check or conversion that fails ─► None: the general path (parse, then
//!  convert) decodes the row again and reports exactly what is wrong with it
//! ```
//!
//! Whatever it accepts, the general path decodes to the same images: the same grammar
//! functions, the same column lookup (hint included), the same conversion helpers, and the
//! same ordering and duplicate rule. It never produces an error of its own, so the general
//! path alone decides every error and its precedence.

use std::cell::Cell;

use cdc_core::change::{ChangeOp, ColumnValue};
use cdc_core::table::{ColumnDef, ColumnType, TableLayout};
use cdc_core::value::{TimeZone, Value};

use super::convert;
use super::parse::{fast_paths, find_byte, is_word_byte, scan_quoted, value_at};
use super::table::{DecodeTable, InsertColumns};
use super::temporal;

/// The images of a row decoded in one pass.
pub(super) struct Images<'a> {
    pub before: Option<Vec<ColumnValue>>,
    pub after: Option<Vec<ColumnValue>>,
    /// The value of a `ROWID = '…'` predicate, as written.
    pub row_id: Option<&'a str>,
}

thread_local! {
    /// The SET image of an update: kept between rows so that it is not allocated per row.
    static SET: Cell<Vec<ColumnValue>> = const { Cell::new(Vec::new()) };
}

/// Returns a scratch vector to its thread-local slot. `LocalKey::set` goes through the
/// lazy-initialisation path on every call (~45 instructions); the slot was initialised by
/// the `take` that lent the vector out, so a plain `Cell::set` does.
#[inline]
fn put_back<T: 'static>(key: &'static std::thread::LocalKey<Cell<Vec<T>>>, v: Vec<T>) {
    key.with(|cell| cell.set(v));
}

/// Decodes `sql`, the statement of an `op` row of `table`, when it has LogMiner's own shape and
/// decodes without any error; `None` otherwise.
pub(super) fn decode<'a>(sql: &'a str, op: ChangeOp, table: &DecodeTable) -> Option<Images<'a>> {
    if !fast_paths() {
        return None;
    }
    let mut r = Reader {
        s: sql,
        pos: 0,
        table,
        layout: table.layout(),
    };
    match op {
        ChangeOp::Insert => {
            r.word(b"insert into ")?;
            r.table_name()?;
            let after = r.insert_body()?;
            r.end()?;
            Some(Images {
                before: None,
                after: Some(after),
                row_id: None,
            })
        }
        ChangeOp::Update => {
            r.word(b"update ")?;
            r.table_name()?;
            r.word(b" set ")?;
            let mut set = Image::new(SET.take());
            set.out.clear();
            let result = r.set_list(&mut set).and_then(|()| {
                let (before, row_id) = r.where_clause()?;
                r.end()?;
                let after = super::row::overlay(&before, &mut set.out);
                Some(Images {
                    before: Some(before),
                    after: Some(after),
                    row_id,
                })
            });
            set.out.clear();
            put_back(&SET, set.out);
            result
        }
        ChangeOp::Delete => {
            r.word(b"delete from ")?;
            r.table_name()?;
            let (before, row_id) = r.where_clause()?;
            r.end()?;
            Some(Images {
                before: Some(before),
                after: None,
                row_id,
            })
        }
    }
}

struct Reader<'a, 't> {
    s: &'a str,
    pos: usize,
    table: &'t DecodeTable,
    layout: &'t TableLayout,
}

/// An image in the making: the same order and duplicate rule as the general path's.
struct Image {
    out: Vec<ColumnValue>,
    /// The general path's lookup hint: the column after the last one kept.
    hint: usize,
    /// The column after the one pushed last: a column before it breaks the order (kept here
    /// rather than read back from the image).
    next: usize,
    sorted: bool,
}

impl Image {
    fn new(out: Vec<ColumnValue>) -> Image {
        Image {
            out,
            hint: 0,
            next: 0,
            sorted: true,
        }
    }

    /// Pushes the value of the column at `index` (`out` holds only what was pushed).
    #[inline(always)]
    fn push(&mut self, index: usize, value: Value) {
        if index < self.next {
            self.sorted = false;
        }
        self.next = index + 1;
        self.out.push(ColumnValue {
            column: index as u16,
            value,
        });
    }

    /// Puts the image in column order; `None` when a column came twice.
    fn finish(&mut self) -> Option<()> {
        if !self.sorted {
            self.out.sort_by_key(|v| v.column);
            if self.out.windows(2).any(|w| w[0].column == w[1].column) {
                return None;
            }
        }
        Some(())
    }
}

impl<'a, 't> Reader<'a, 't> {
    #[inline]
    fn rest(&self) -> &'a [u8] {
        self.s.as_bytes().get(self.pos..).unwrap_or(&[])
    }

    /// Consumes `text` when it comes next.
    #[inline]
    fn word(&mut self, text: &[u8]) -> Option<()> {
        self.rest()
            .starts_with(text)
            .then(|| self.pos += text.len())
    }

    /// `"NAME"` without a doubled quote inside: the name.
    #[inline]
    fn name(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        if b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let close = find_byte(b, self.pos + 1, b'"')?;
        if b.get(close + 1) == Some(&b'"') {
            return None;
        }
        let name = self.s.get(self.pos + 1..close)?;
        self.pos = close + 1;
        Some(name)
    }

    /// `"OWNER"."TABLE"`: the layout's table, as the general path reads and checks it (the
    /// next byte, which the caller reads, is not a `"`).
    #[inline]
    fn table_name(&mut self) -> Option<()> {
        self.word(self.table.quoted_name()?.as_bytes())
    }

    /// The end of the statement, after an optional `;`.
    fn end(&mut self) -> Option<()> {
        matches!(self.rest(), b"" | b";").then_some(())
    }

    /// The layout position of the column `name` of `image` as the general path resolves it
    /// (`Some(None)`: excluded); `None` for a column the table does not know.
    #[inline]
    fn column(&self, name: &str, image: &mut Image) -> Option<Option<usize>> {
        let Some(index) = self.table.lookup(name, image.hint) else {
            return self.table.is_excluded_name(name).then_some(None);
        };
        if self.table.is_excluded_index(index) {
            return Some(None);
        }
        image.hint = index + 1;
        (index < self.layout.columns.len() && index <= usize::from(u16::MAX)).then_some(Some(index))
    }

    /// `"NAME" = ` of the column at the hint when it comes next: the column, resolved as
    /// [`Reader::column`] resolves that name (the hint is the lookup's first answer), after
    /// the `=`. `None` (nothing read) otherwise.
    #[inline]
    fn expected_item(&mut self, image: &mut Image) -> Option<Option<usize>> {
        let index = image.hint;
        let prefix = self.table.item_prefix(index)?;
        if !DecodeTable::starts_with(self.rest(), prefix) {
            return None;
        }
        self.pos += prefix.len();
        if self.table.is_excluded_index(index) {
            return Some(None);
        }
        image.hint = index + 1;
        (index <= usize::from(u16::MAX)).then_some(Some(index))
    }

    /// `"NAME" = ` of any column when it comes next, compared whole with each column's (see
    /// [`DecodeTable::item_column`]): the column, resolved as [`Reader::column`] resolves that
    /// name when it is not the one at the hint, after the `=`. `None` (nothing read) otherwise.
    #[inline]
    fn named_item(&mut self, image: &mut Image) -> Option<Option<usize>> {
        let (index, len) = self.table.item_column(self.rest())?;
        self.pos += len;
        if self.table.is_excluded_index(index) {
            return Some(None);
        }
        image.hint = index + 1;
        (index <= usize::from(u16::MAX)).then_some(Some(index))
    }

    /// `"NAME" IS NULL` of the column at the hint when it comes next: the column, as
    /// [`Reader::expected_item`] gives it, after the predicate. `None` (nothing read) otherwise.
    #[inline]
    fn expected_null(&mut self, image: &mut Image) -> Option<Option<usize>> {
        let index = image.hint;
        // `"NAME" = ` without its `= `
        let prefix = self.table.item_prefix(index)?;
        let name = prefix.get(..prefix.len().checked_sub(2)?)?;
        let rest = self.rest();
        if !DecodeTable::starts_with(rest, name)
            || !DecodeTable::starts_with(rest.get(name.len()..)?, b"IS NULL")
        {
            return None;
        }
        self.pos += name.len() + b"IS NULL".len();
        if self.table.is_excluded_index(index) {
            return Some(None);
        }
        image.hint = index + 1;
        (index <= usize::from(u16::MAX)).then_some(Some(index))
    }

    /// Reads the value of the column at `index` into `image`, or skips it (`None`: excluded).
    /// Inlined into each of its three loops: as a call, with every typed reader inlined into
    /// it, its prologue and epilogue alone cost some 15 instructions per value.
    #[inline(always)]
    fn item_value(&mut self, index: Option<usize>, image: &mut Image) -> Option<()> {
        match index {
            Some(index) => {
                let column = self.layout.columns.get(index)?;
                self.value(column, index, image)?;
            }
            None => self.skip_value()?,
        }
        Some(())
    }

    /// Skips the value of an excluded column: only its syntax is read.
    #[cold]
    #[inline(never)]
    fn skip_value(&mut self) -> Option<()> {
        let (_, end) = value_at(self.s, self.pos)?;
        self.pos = end;
        Some(())
    }

    /// The value at the cursor converted for `column`, into `image` as the column at `index`.
    /// A NUMBER written as a short quoted decimal, the most common value, is read in the loop
    /// that reads the item (this is inlined into each of the three); every other value costs a
    /// call.
    #[inline(always)]
    fn value(&mut self, column: &ColumnDef, index: usize, image: &mut Image) -> Option<()> {
        if let ColumnType::Number | ColumnType::Float = column.data_type
            && let Some((value, end)) = convert::quoted_small_decimal(self.s.as_bytes(), self.pos)
        {
            image.push(index, Value::Number(value));
            self.pos = end;
            return Some(());
        }
        self.typed_value(column, index, image)
    }

    /// [`Reader::value`] for every value but a short quoted decimal of a NUMBER.
    #[inline(never)]
    fn typed_value(&mut self, column: &ColumnDef, index: usize, image: &mut Image) -> Option<()> {
        if let Some(end) = typed(self.s, self.pos, &column.data_type, image, index) {
            self.pos = end;
            return Some(());
        }
        let value = self.general_value(column)?;
        image.push(index, value);
        Some(())
    }

    /// A value no typed reader takes, read and converted as the general path does.
    #[cold]
    #[inline(never)]
    fn general_value(&mut self, column: &ColumnDef) -> Option<Value> {
        let (literal, end) = value_at(self.s, self.pos)?;
        self.pos = end;
        convert::convert(&literal, column).ok()
    }

    /// `("A","B") values (v,v)` after the table name: the after image.
    fn insert_body(&mut self) -> Option<Vec<ColumnValue>> {
        let known = self.table.insert_columns();
        let resolved;
        let slots: &[Option<usize>] = match known.get() {
            // the same text resolves to the same columns: each name's column is a function of
            // the name and of the hint the names before it left. They are read where they lie,
            // in the table.
            Some(list) if self.rest().starts_with(list.text.as_bytes()) => {
                self.pos += list.text.len();
                &list.columns
            }
            // another list (or the first): resolved name by name before any value is read
            _ => {
                let mut slots = Vec::new();
                let start = self.pos;
                self.column_list(&mut slots, &mut Image::new(Vec::new()))?;
                if known.get().is_none() {
                    let _ = known.set(InsertColumns {
                        text: self.s.get(start..self.pos)?.into(),
                        columns: slots.as_slice().into(),
                    });
                }
                resolved = slots;
                &resolved
            }
        };
        // the image is allocated once its size is known
        let mut image = Image::new(Vec::with_capacity(slots.len()));
        for (i, &slot) in slots.iter().enumerate() {
            if i > 0 {
                self.word(b",")?;
            }
            self.item_value(slot, &mut image)?;
        }
        self.word(b")")?;
        image.finish()?;
        Some(image.out)
    }

    /// `("A","B") values (`: the column of each name (`None`: excluded).
    fn column_list(&mut self, slots: &mut Vec<Option<usize>>, image: &mut Image) -> Option<()> {
        self.word(b"(")?;
        loop {
            let name = self.name()?;
            slots.push(self.column(name, image)?);
            if self.word(b",").is_none() {
                break;
            }
        }
        self.word(b") values (")
    }

    /// `"A" = v, "B" = v` into `image`, up to ` where` or the end.
    fn set_list(&mut self, image: &mut Image) -> Option<()> {
        loop {
            // a SET item names any column: after the one at the hint, each column's
            // `"NAME" = ` (where there are few), and only then the name read and looked up
            let index = match self.expected_item(image) {
                Some(index) => index,
                None if let Some(index) = self.named_item(image) => index,
                None => {
                    let name = self.name()?;
                    let index = self.column(name, image)?;
                    self.word(b" = ")?;
                    index
                }
            };
            self.item_value(index, image)?;
            if self.word(b", ").is_none() {
                return image.finish();
            }
        }
    }

    /// An optional ` where "K" = v and "E" IS NULL and ROWID = 'r'`: the before image and the
    /// ROWID predicate's value.
    fn where_clause(&mut self) -> Option<(Vec<ColumnValue>, Option<&'a str>)> {
        // built where it is kept: LogMiner writes every column in the WHERE clause of a
        // table logged with ALL COLUMNS, so the image usually fills the layout's width; a
        // shorter one gives back the rest (the buffer counts an image's capacity)
        let mut image = Image::new(Vec::with_capacity(self.layout.columns.len()));
        let row_id = self.where_items(&mut image)?;
        image.finish()?;
        image.out.shrink_to_fit();
        Some((image.out, row_id))
    }

    fn where_items(&mut self, image: &mut Image) -> Option<Option<&'a str>> {
        if self.word(b" where ").is_none() {
            return Some(None);
        }
        let mut row_id = None;
        loop {
            // the column in layout order first: the common item (it starts with `"`, so it is
            // never the ROWID predicate)
            if let Some(index) = self.expected_item(image) {
                self.item_value(index, image)?;
            } else if let Some(index) = self.expected_null(image) {
                if let Some(index) = index {
                    image.push(index, Value::Null);
                }
            } else if self.word(b"ROWID = ").is_some() {
                let (text, end) = scan_quoted(self.s, self.pos)?;
                self.pos = end;
                row_id = Some(text.raw());
            } else {
                let name = self.name()?;
                let index = self.column(name, image)?;
                if self.word(b" IS NULL").is_some() {
                    if let Some(index) = index {
                        image.push(index, Value::Null);
                    }
                } else {
                    self.word(b" = ")?;
                    self.item_value(index, image)?;
                }
            }
            if self.word(b" and ").is_none() {
                return Some(row_id);
            }
        }
    }
}

/// `, 'FORMAT'` for each of [`super::DATE_FORMATS`]: TO_DATE's second argument as LogMiner writes it.
const DATE_FORMAT_ARGS: [&str; 2] = [", 'SYYYY-MM-DD HH24:MI:SS'", ", 'YYYY-MM-DD HH24:MI:SS'"];

/// A value in a shape LogMiner writes for the type, read and converted at once: the value and
/// the offset after it. `None` for any other shape, or a value that does not convert (the
/// general reading then decides). Each arm gives what `convert` gives for the same literal,
/// through the same helpers. The value goes straight into `image` (as the column at `index`):
/// each arm pushes what it read, so that no arm's value is moved through a common return
/// slot first.
#[inline]
fn typed(s: &str, at: usize, ty: &ColumnType, image: &mut Image, index: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut put = |value: Value, end: usize| {
        image.push(index, value);
        Some(end)
    };
    match *b.get(at)? {
        b'\'' => {
            // (a short decimal of a NUMBER was read by `Reader::value` already)
            let (q, end) = scan_quoted(s, at)?;
            let plain = !q.has_doubled_quote();
            let value = match ty {
                ColumnType::Number | ColumnType::Float if plain => {
                    Value::Number(convert::number_text(q.raw()).ok()?)
                }
                ColumnType::Char
                | ColumnType::Varchar2
                | ColumnType::NChar
                | ColumnType::NVarchar2
                | ColumnType::Clob
                | ColumnType::NClob => Value::Text(q.text().into_owned()),
                ColumnType::Long if q.raw() != convert::LONG_PLACEHOLDER => {
                    Value::Text(q.text().into_owned())
                }
                ColumnType::BinaryFloat if plain => convert::float(q.raw(), false).ok()?,
                ColumnType::BinaryDouble if plain => convert::float(q.raw(), true).ok()?,
                ColumnType::RowId | ColumnType::URowId => Value::RowId(q.text().into_owned()),
                _ => return None,
            };
            put(value, end)
        }
        b'N' => {
            if b.get(at..at + 4) == Some(b"NULL")
                && !b.get(at + 4).is_some_and(|&c| is_word_byte(c))
            {
                put(Value::Null, at + 4)
            } else {
                None
            }
        }
        b'A'..=b'Z' if let Some((value, end)) = plain_function(s, at, ty) => put(value, end),
        b'A'..=b'Z' => {
            let mut open = at;
            while b
                .get(open)
                .is_some_and(|&c| c.is_ascii_uppercase() || c == b'_')
            {
                open += 1;
            }
            if b.get(open) != Some(&b'(') {
                return None;
            }
            let name = s.get(at..open)?;
            let (first, mut close) = scan_quoted(s, open + 1)?;
            // a second argument only as TO_DATE's format, exactly as LogMiner writes it
            let mut dated = false;
            let mut sign = temporal::YearSign::Signed;
            if b.get(close) == Some(&b',') {
                let rest = b.get(close..)?;
                let format = DATE_FORMAT_ARGS
                    .iter()
                    .find(|f| DecodeTable::starts_with(rest, f.as_bytes()))?;
                close += format.len();
                dated = true;
                sign = temporal::YearSign::of_date_format(format.trim_start_matches(", '"));
            }
            if b.get(close) != Some(&b')') {
                return None;
            }
            let value = match ty {
                ColumnType::Date
                | ColumnType::Timestamp
                | ColumnType::TimestampTz
                | ColumnType::TimestampLtz
                | ColumnType::IntervalYm
                | ColumnType::IntervalDs => {
                    let function = convert::temporal_function(ty, name)?;
                    if dated && function != "TO_DATE" {
                        return None;
                    }
                    convert::temporal_value(ty, function, sign, first.raw()).ok()?
                }
                ColumnType::Raw | ColumnType::LongRaw | ColumnType::Blob
                    if !dated && name == "HEXTORAW" =>
                {
                    Value::Raw(convert::hex(first.raw()).ok()?)
                }
                ColumnType::Char
                | ColumnType::Varchar2
                | ColumnType::NChar
                | ColumnType::NVarchar2
                | ColumnType::Long
                | ColumnType::Clob
                | ColumnType::NClob
                    if !dated && name == "UNISTR" =>
                {
                    Value::Text(convert::plain_unistr(&first)?)
                }
                _ => return None,
            };
            put(value, close + 1)
        }
        _ => None,
    }
}

/// A date or timestamp exactly as the session's NLS formats write it, read at fixed
/// positions: `TO_DATE('YYYY-MM-DD HH24:MI:SS', 'format')` for a DATE,
/// `TO_TIMESTAMP('….F')` for a TIMESTAMP, `TO_TIMESTAMP_TZ('….F ±HH:MM')` for a TIMESTAMP WITH
/// TIME ZONE and `TO_TIMESTAMP_TZ('….F')` for one WITH LOCAL TIME ZONE. `None` for anything
/// else, which [`typed`]'s general temporal arm then reads (to the same value when it is one
/// of these).
#[inline]
fn plain_temporal(s: &str, at: usize, ty: &ColumnType) -> Option<(Value, usize)> {
    let b = s.as_bytes();
    let rest = b.get(at..)?;
    let (function, fraction): (&[u8], bool) = match ty {
        ColumnType::Date => (b"TO_DATE('", false),
        ColumnType::Timestamp => (b"TO_TIMESTAMP('", true),
        ColumnType::TimestampTz | ColumnType::TimestampLtz => (b"TO_TIMESTAMP_TZ('", true),
        ColumnType::IntervalYm | ColumnType::IntervalDs => return plain_interval(s, at, ty),
        _ => return None,
    };
    if !DecodeTable::starts_with(rest, function) {
        return None;
    }
    let text = rest.get(function.len()..)?;
    let (value, mut end) = temporal::plain_datetime(text, fraction)?;
    let value = match ty {
        ColumnType::Date => {
            // the closing quote, then one of the session's date formats
            if text.get(end) != Some(&b'\'') {
                return None;
            }
            end += 1;
            let after = text.get(end..)?;
            // the engine's own format first
            let [signed, plain] = DATE_FORMAT_ARGS;
            end += if DecodeTable::starts_with(after, plain.as_bytes()) {
                plain.len()
            } else if DecodeTable::starts_with(after, signed.as_bytes()) {
                signed.len()
            } else {
                return None;
            };
            Value::Date(value)
        }
        ColumnType::Timestamp => Value::Timestamp(value),
        ColumnType::TimestampTz => {
            if text.get(end) != Some(&b' ') {
                return None;
            }
            let minutes = temporal::plain_offset(text.get(end + 1..)?)?;
            end += 7;
            Value::TimestampTz(value, TimeZone::Offset(minutes))
        }
        _ => Value::TimestampLtz(value),
    };
    if !matches!(ty, ColumnType::Date) {
        if text.get(end) != Some(&b'\'') {
            return None;
        }
        end += 1;
    }
    if text.get(end) != Some(&b')') {
        return None;
    }
    Some((value, at + function.len() + end + 1))
}

/// A function call in the one shape LogMiner writes for the column's type, recognised by its
/// exact prefix: the temporal functions ([`plain_temporal`]), `UNISTR('…')` for a character
/// type and `HEXTORAW('…')` for a binary one. Each converts as [`typed`]'s general function
/// arm does (the same helper on the same argument); `None` leaves the value to that arm.
#[inline]
fn plain_function(s: &str, at: usize, ty: &ColumnType) -> Option<(Value, usize)> {
    let b = s.as_bytes();
    let rest = b.get(at..)?;
    match ty {
        ColumnType::Char
        | ColumnType::Varchar2
        | ColumnType::NChar
        | ColumnType::NVarchar2
        | ColumnType::Long
        | ColumnType::Clob
        | ColumnType::NClob => {
            if !DecodeTable::starts_with(rest, b"UNISTR('") {
                return None;
            }
            let (q, close) = scan_quoted(s, at + 7)?;
            if b.get(close) != Some(&b')') {
                return None;
            }
            Some((Value::Text(convert::plain_unistr(&q)?), close + 1))
        }
        ColumnType::Raw | ColumnType::LongRaw | ColumnType::Blob => {
            if !DecodeTable::starts_with(rest, b"HEXTORAW('") {
                return None;
            }
            let (q, close) = scan_quoted(s, at + 9)?;
            if b.get(close) != Some(&b')') {
                return None;
            }
            Some((Value::Raw(convert::hex(q.raw()).ok()?), close + 1))
        }
        _ => plain_temporal(s, at, ty),
    }
}

/// `TO_YMINTERVAL('text')` or `TO_DSINTERVAL('text')` for its type, the text without a
/// quote: the value the general temporal arm gives (the same conversion of the same text),
/// without its function-name scan and lookups. `None` for any other shape.
#[inline]
fn plain_interval(s: &str, at: usize, ty: &ColumnType) -> Option<(Value, usize)> {
    let ym = matches!(ty, ColumnType::IntervalYm);
    let function: &[u8] = if ym {
        b"TO_YMINTERVAL('"
    } else {
        b"TO_DSINTERVAL('"
    };
    let b = s.as_bytes();
    if !DecodeTable::starts_with(b.get(at..)?, function) {
        return None;
    }
    let start = at + function.len();
    let close = find_byte(b, start, b'\'')?;
    if b.get(close + 1) != Some(&b')') {
        return None;
    }
    // what `convert::temporal_value` gives for the type and its function
    let text = s.get(start..close)?;
    let value = if ym {
        Value::IntervalYm(temporal::parse_interval_ym(text).ok()?)
    } else {
        Value::IntervalDs(temporal::parse_interval_ds(text).ok()?.into())
    };
    Some((value, close + 2))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use cdc_core::change::{MinedRow, Operation, status};
    use cdc_core::table::{ColumnType, TableLayout};

    use crate::decode::parse::GENERAL_ONLY;
    use crate::decode::{ColumnFilter, DecodeOptions, DecodeTable, decode_row};
    use crate::test_support::{Rng, corpus, layout, row, small_corpus};

    /// Values of every shape, for every type: the typed readers must give what the general
    /// reading gives, or leave the value to it.
    const VALUES: [&str; 87] = [
        "TO_DATE('-2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE(' 2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('+2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-28 13:45:59.5', 'SYYYY-MM-DD HH24:MI:SS')",
        "/* JSON */ EMPTY_BLOB()",
        "/* JSON */ HEXTORAW('ff4a')",
        "/* JSON */ HEXTORAW('ff4')",
        "HEXTORAW('abc')",
        "TO_YMINTERVAL('-0012-03')",
        "TO_YMINTERVAL(' +12-03 ')",
        "TO_DSINTERVAL('+5 4:3:2')",
        "TO_DSINTERVAL('-00005 04:03:02.1234567891')",
        "TO_DSINTERVAL('x')",
        "TO_YMINTERVAL('it''s')",
        "TO_DSINTERVAL('+00005 04:03:02.123456', 'x')",
        "'12345678.123456789'",
        "'123456789'",
        "'-0.00000001'",
        "'00000000000000000001'",
        "'12345678901234567.8'",
        "TO_TIMESTAMP('2026-03-29 01:30:00.1234567891')",
        "TO_TIMESTAMP('2026-03-29 01:30:00.')",
        "TO_TIMESTAMP('2026-02-29 01:30:00')",
        "TO_TIMESTAMP('2026-03-29 01:30:00.5', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +15:00')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +05:60')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00 +05:30')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.123456789 -08:00')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 *05:30')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +05:30 ')",
        "TO_DATE(' 2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
        "'-0'",
        "'3.4028236E38'",
        "'16777217'",
        "'1E400'",
        "'abc'",
        "'it''s'",
        "''",
        "'12'",
        "'-42.50'",
        "'7.'",
        "'1234567890123456789012'",
        "'1e5'",
        "'1.50000005E+010'",
        "'-Inf'",
        "'Nan'",
        "'x''y'",
        "'a' || 'b'",
        "'a' ||'b'",
        "NULL",
        "NULL || 'a'",
        "NULLX('a')",
        "null",
        "42",
        "-1.5e3",
        "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('-2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-28 13:45:59', 'yyyy-mm-dd hh24:mi:ss')",
        "TO_DATE('2026-02-28 13:45:59', 'DD-MON-RR')",
        "TO_DATE('2026-02-28 13:45:59','YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-30 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-28 13:45:59.5', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_DATE('2026-02-28 13:45:59')",
        "to_date('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
        "TO_TIMESTAMP('2026-03-29 01:30:00.123456000')",
        "TO_TIMESTAMP('2026-03-29 01:30:00.123456000', 'x')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +05:30')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 -08:00')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1')",
        "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 Europe/Paris')",
        "TO_DSINTERVAL('+00005 04:03:02.123456')",
        "TO_YMINTERVAL('+0012-03')",
        "TO_YMINTERVAL('+0012-13')",
        r"UNISTR('caf\00e9 it''s')",
        r"UNISTR('\d83d')",
        r"UNISTR('\d83d') || UNISTR('\de00')",
        "UNISTR('a', 'b')",
        "HEXTORAW('deadbeef')",
        "HEXTORAW('dead', 'beef')",
        "HEXTORAW('xyz')",
        "HEXTORAW('it''s')",
        "EMPTY_CLOB()",
        "EMPTY_BLOB()",
        "Unsupported Type",
        "XMLType(:1)",
        "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS') || 'x'",
    ];

    /// Pieces that break or bend LogMiner's shape.
    const PIECES: [&str; 20] = [
        "'",
        "\"",
        ",",
        " ",
        "  ",
        "||",
        "/**/",
        ";",
        " and ",
        "ROWID = 'AAAB'",
        "\"ID\" = '1'",
        "\"NOPE\" = '1'",
        "(",
        ")",
        "\"\"",
        "\t",
        " IS NULL",
        " where ",
        "a.",
        "NULL",
    ];

    fn filtered(l: &Arc<TableLayout>) -> DecodeTable {
        let filter =
            ColumnFilter::from_fn(|c| c.ends_with("_2") || c.ends_with("_5") || c == "GONE");
        DecodeTable::new(Arc::clone(l), filter).unwrap()
    }

    /// A variant of `sql`: as it is, bent, or with a literal replaced.
    fn variant(sql: &str, rng: &mut Rng) -> String {
        let mut s = sql.to_owned();
        let boundaries = |s: &str| {
            (0..=s.len())
                .filter(|&i| s.is_char_boundary(i))
                .collect::<Vec<_>>()
        };
        match rng.below(8) {
            0 => {}
            1 => {
                let at = boundaries(&s);
                let at = at[rng.below(at.len() as u64) as usize];
                s.insert_str(at, PIECES[rng.below(PIECES.len() as u64) as usize]);
            }
            2 => {
                let at = boundaries(&s);
                let from = at[rng.below(at.len() as u64) as usize];
                let to = at.iter().copied().find(|&i| i > from).unwrap_or(from);
                s.replace_range(from..to, "");
            }
            3 => {
                let at = boundaries(&s);
                s.truncate(at[rng.below(at.len() as u64) as usize]);
            }
            4 => {
                let upper = [
                    "INSERT INTO",
                    "UPDATE",
                    "DELETE FROM",
                    " SET ",
                    " WHERE ",
                    " AND ",
                    " VALUES ",
                ];
                for (lower, upper) in [
                    "insert into",
                    "update",
                    "delete from",
                    " set ",
                    " where ",
                    " and ",
                    " values ",
                ]
                .iter()
                .zip(upper)
                {
                    if rng.chance(50) {
                        s = s.replacen(lower, upper, 1);
                    }
                }
            }
            _ => {
                // a value replaced: the literal after the n-th " = " or after "values (" / ","
                let starts: Vec<usize> = s
                    .match_indices(" = ")
                    .map(|(i, _)| i + 3)
                    .chain(s.match_indices("values (").map(|(i, _)| i + 8))
                    .collect();
                if starts.is_empty() {
                    return s;
                }
                let at = starts[rng.below(starts.len() as u64) as usize];
                let len = crate::decode::parse::value_at(&s, at).map_or(0, |(_, end)| end - at);
                s.replace_range(
                    at..at + len,
                    VALUES[rng.below(VALUES.len() as u64) as usize],
                );
            }
        }
        s
    }

    fn check(r: &MinedRow, table: &DecodeTable, options: &DecodeOptions) {
        let one = decode_row(r, Some(table), options);
        GENERAL_ONLY.with(|g| g.set(true));
        let general = decode_row(r, Some(table), options);
        GENERAL_ONLY.with(|g| g.set(false));
        // compared as printed: a NaN value is not equal to itself
        assert_eq!(
            format!("{one:?}"),
            format!("{general:?}"),
            "{:?}",
            r.sql_redo
        );
    }

    #[test]
    fn one_pass_decodes_as_the_general_path() {
        let (small_layouts, small_rows) = small_corpus(7, 12, 2000);
        let (layouts, rows) = corpus(8, 12, 2000);
        let mut rng = Rng::new(9);
        for (layouts, rows) in [(small_layouts, small_rows), (layouts, rows)] {
            let tables: HashMap<String, (DecodeTable, DecodeTable)> = layouts
                .iter()
                .map(|l| {
                    let plain = DecodeTable::without_exclusions(Arc::clone(l));
                    (l.table.table.clone(), (plain, filtered(l)))
                })
                .collect();
            for base in &rows {
                let name = base.table_name.as_deref().unwrap();
                let (plain, excluding) = &tables[name];
                // LogMiner's own shape is what the one-pass decoder is for
                let op = super::super::row::change_op(base.operation).unwrap();
                let sql = base.sql_redo.as_deref().unwrap();
                assert!(super::decode(sql, op, plain).is_some(), "{sql}");
                assert!(super::decode(sql, op, excluding).is_some(), "{sql}");
                for _ in 0..8 {
                    let mut r = base.clone();
                    r.sql_redo = Some(variant(base.sql_redo.as_deref().unwrap(), &mut rng));
                    r.status = [
                        status::VALID_SQL,
                        status::ASSEMBLY_REQUIRED_SQL,
                        status::INVALID_SQL,
                    ][rng.below(3) as usize];
                    if rng.chance(20) {
                        r.operation = [Operation::Insert, Operation::Update, Operation::Delete]
                            [rng.below(3) as usize];
                    }
                    if rng.chance(30) {
                        r.row_id = [None, Some(String::new())][rng.below(2) as usize].clone();
                    }
                    let options = DecodeOptions {
                        log_sensitive_data: rng.chance(50),
                    };
                    check(&r, plain, &options);
                    check(&r, excluding, &options);
                }
            }
        }
    }

    /// A before image holds no spare capacity, whether the WHERE clause names every column,
    /// some of them, or excluded ones: the buffer counts an image's capacity.
    #[test]
    fn before_images_are_as_long_as_their_capacity() {
        let (layouts, rows) = corpus(14, 12, 2000);
        let tables: HashMap<String, (DecodeTable, DecodeTable)> = layouts
            .iter()
            .map(|l| {
                let plain = DecodeTable::without_exclusions(Arc::clone(l));
                (l.table.table.clone(), (plain, filtered(l)))
            })
            .collect();
        let mut checked = 0;
        for r in &rows {
            let (plain, excluding) = &tables[r.table_name.as_deref().unwrap()];
            let op = super::super::row::change_op(r.operation).unwrap();
            let sql = r.sql_redo.as_deref().unwrap();
            // the WHERE clause cut after its first item, as a table logged with its key only
            let first = sql.find(" and ").map(|at| &sql[..at]);
            for sql in std::iter::once(sql).chain(first) {
                for table in [plain, excluding] {
                    if let Some(before) = super::decode(sql, op, table).and_then(|i| i.before) {
                        assert_eq!(before.capacity(), before.len(), "{sql}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// The column list remembered from a first insert serves only inserts that write the same
    /// list; any other list is resolved name by name.
    #[test]
    fn a_remembered_column_list_serves_the_same_list_only() {
        let l = layout(
            "O",
            "T",
            &[
                ("ID", ColumnType::Number),
                ("C", ColumnType::Varchar2),
                ("D", ColumnType::Date),
            ],
            &["ID"],
        );
        let lists = [
            r#"insert into "O"."T"("ID","C") values ('1','x')"#,
            r#"insert into "O"."T"("ID","C","D") values ('1','x',NULL)"#,
            r#"insert into "O"."T"("C","ID") values ('x','1')"#,
            r#"insert into "O"."T"("ID","C","GONE") values ('1','x','y')"#,
            r#"insert into "O"."T"("ID","C","C") values ('1','x','y')"#,
            r#"insert into "O"."T"("ID","C") values ('1')"#,
            r#"insert into "O"."T"("ID","NOPE") values ('1','x')"#,
        ];
        for first in lists {
            let plain = DecodeTable::without_exclusions(Arc::clone(&l));
            let excluding = DecodeTable::new(
                Arc::clone(&l),
                ColumnFilter::from_fn(|c| c == "C" || c == "GONE"),
            )
            .unwrap();
            for sql in std::iter::once(first).chain(lists) {
                let r = row(1, "O", "T", sql);
                check(&r, &plain, &DecodeOptions::default());
                check(&r, &excluding, &DecodeOptions::default());
            }
        }
    }

    /// A layout with a name twice (the lookup's hint then decides which) and a name with a
    /// quote in it.
    #[test]
    fn duplicate_and_quoted_column_names_resolve_as_in_the_general_path() {
        let l = layout(
            "O",
            "T",
            &[
                ("ID", ColumnType::Number),
                ("C", ColumnType::Varchar2),
                ("C", ColumnType::Number),
                ("Q\"X", ColumnType::Varchar2),
                ("E", ColumnType::Number),
            ],
            &["ID"],
        );
        let statements = [
            (
                1,
                r#"insert into "O"."T"("ID","C","C","Q""X") values ('1','a','2','b')"#,
            ),
            (
                1,
                r#"insert into "O"."T"("ID","C","E","C") values ('1','a','3','2')"#,
            ),
            (1, r#"insert into "O"."T"("C","ID") values ('a','1')"#),
            (
                2,
                r#"delete from "O"."T" where "ID" = '1' and "C" = 'a' and "C" = '2'"#,
            ),
            (
                2,
                r#"delete from "O"."T" where "ID" = '1' and "C" = 'a' and "Q""X" = 'b'"#,
            ),
            (
                2,
                r#"delete from "O"."T" where "C" = 'a' and "ID" = '1' and "C" = '2'"#,
            ),
            (
                2,
                r#"delete from "O"."T" where "ID" = '1' and "C" IS NULL and "C" = '2'"#,
            ),
            (
                3,
                r#"update "O"."T" set "C" = '5', "C" = 'z' where "ID" = '1' and "C" = 'a'"#,
            ),
            (
                3,
                r#"update "O"."T" set "E" = '5' where "ID" = '1' and "C" = 'a' and "C" = '2' and "E" = '4'"#,
            ),
        ];
        let plain = DecodeTable::without_exclusions(Arc::clone(&l));
        let excluding =
            DecodeTable::new(Arc::clone(&l), ColumnFilter::from_fn(|c| c == "C")).unwrap();
        for (code, sql) in statements {
            let r = row(code, "O", "T", sql);
            check(&r, &plain, &DecodeOptions::default());
            check(&r, &excluding, &DecodeOptions::default());
        }
    }

    /// Table names the one-pass decoder must not take for the layout's.
    #[test]
    fn table_names_are_checked_as_the_general_path_checks_them() {
        let tables = [
            ("O", "T"),
            ("A\"B", "T"),
            ("UNKNOWN", "T"),
            ("O", "OBJ# 45522"),
            ("O", "T\""),
        ];
        let written = [
            r#""O"."T""#,
            r#""O"."T2""#,
            r#""O"."T""X""#,
            r#""A""B"."T""#,
            r#""UNKNOWN"."T""#,
            r#""O"."OBJ# 45522""#,
            r#""O"."T""""#,
            r#"O.T"#,
        ];
        for (owner, table) in tables {
            let l = layout(owner, table, &[("ID", ColumnType::Number)], &["ID"]);
            let t = DecodeTable::without_exclusions(l);
            for name in written {
                for (code, sql) in [
                    (1, format!(r#"insert into {name}("ID") values ('1')"#)),
                    (
                        3,
                        format!(r#"update {name} set "ID" = '2' where "ID" = '1'"#),
                    ),
                    (2, format!(r#"delete from {name} where "ID" = '1'"#)),
                ] {
                    check(
                        &row(code, owner, table, &sql),
                        &t,
                        &DecodeOptions::default(),
                    );
                }
            }
        }
    }

    #[test]
    fn date_format_arguments_are_the_date_formats() {
        let written: Vec<String> = crate::decode::DATE_FORMATS
            .iter()
            .map(|f| format!(", '{f}'"))
            .collect();
        assert_eq!(written, super::DATE_FORMAT_ARGS);
    }

    /// Every value shape on every type, in each statement shape: with and without the column
    /// excluded.
    #[test]
    fn typed_readers_agree_with_convert() {
        let types = [
            ColumnType::Number,
            ColumnType::Float,
            ColumnType::Varchar2,
            ColumnType::Char,
            ColumnType::NVarchar2,
            ColumnType::Long,
            ColumnType::Clob,
            ColumnType::Blob,
            ColumnType::Date,
            ColumnType::Timestamp,
            ColumnType::TimestampTz,
            ColumnType::TimestampLtz,
            ColumnType::IntervalDs,
            ColumnType::IntervalYm,
            ColumnType::BinaryFloat,
            ColumnType::BinaryDouble,
            ColumnType::Raw,
            ColumnType::RowId,
            ColumnType::XmlType,
            ColumnType::Json,
        ];
        let shapes = [
            (1, r#"insert into "O"."T"("ID","C") values ('1',{v})"#),
            (1, r#"insert into "O"."T"("C","ID") values ({v},'1');"#),
            (
                3,
                r#"update "O"."T" set "C" = {v} where "ID" = '1' and "C" = {v}"#,
            ),
            (
                3,
                r#"update "O"."T" set "C" = {v}, "ID" = '2' where "ID" = '1' and ROWID = 'AAAB';"#,
            ),
            (
                2,
                r#"delete from "O"."T" where "ID" = '1' and "C" = {v} and "C" IS NULL"#,
            ),
            (2, r#"delete from "O"."T" where "C" = {v} and "ID" = '1'"#),
        ];
        for ty in types {
            let l = layout("O", "T", &[("ID", ColumnType::Number), ("C", ty)], &["ID"]);
            let plain = DecodeTable::without_exclusions(Arc::clone(&l));
            let excluding =
                DecodeTable::new(Arc::clone(&l), ColumnFilter::from_fn(|c| c == "C")).unwrap();
            for (code, shape) in shapes {
                for v in VALUES {
                    let r = row(code, "O", "T", &shape.replace("{v}", v));
                    for log_sensitive_data in [false, true] {
                        let options = DecodeOptions { log_sensitive_data };
                        check(&r, &plain, &options);
                        check(&r, &excluding, &options);
                    }
                }
            }
        }
    }
}
