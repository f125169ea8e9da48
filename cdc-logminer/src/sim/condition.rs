//! The SQL conditions a snapshot read takes (`cdc.snapshot.select.override.<table>`, a
//! signal's predicate): parsed against the table's columns and evaluated on each row the way
//! Oracle's WHERE clause would, with its errors.
//!
//! ```text
//!   "ID > 100 AND \"REGION\" IN ('EU','US')" ──tokens──► parse (columns resolved) ──► Condition
//!   Condition::holds(row) ──► three-valued: a row is returned only when it is TRUE
//! ```
//!
//! The grammar is what filters use: column names (bare, read in upper case, or double-quoted),
//! numeric and quoted string literals, `NULL`, `= <> != ^= < <= > >=`, `IS [NOT] NULL`,
//! `[NOT] IN (…)`, `[NOT] BETWEEN … AND …`, `[NOT] LIKE`, `AND`, `OR`, `NOT` and parentheses.
//! Comparisons follow Oracle's implicit conversions: text against a number is read as a
//! number (ORA-01722 when it is not one), text against a date or timestamp in the session's
//! format `YYYY-MM-DD HH24:MI:SS[.FF]` (ORA-01861), text against RAW as hex (ORA-01465); CHAR
//! columns and literals compare blank-padded, VARCHAR2 columns do not; a LOB cannot be
//! compared (ORA-00932). Whatever else a condition holds fails as Oracle's parser fails
//! (ORA-00904 for an unknown column, ORA-00920 for a missing relational operator, ORA-00936,
//! ORA-00907, ORA-00933, ORA-00911, ORA-01756), never with a panic.

use std::cmp::Ordering;

use cdc_core::ora::OraCode;
use cdc_core::{ColumnDef, ColumnType, Decimal, OracleDateTime, Value};

use super::order;
use crate::source::SourceError;

/// A parsed condition, its columns resolved to indexes into the row it is evaluated on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    expr: Expr,
}

impl Condition {
    /// Parses `text` against a table's `columns` (the row's values are in their order).
    pub(crate) fn parse(text: &str, columns: &[ColumnDef]) -> Result<Condition, SourceError> {
        let tokens = tokenize(text)?;
        let mut parser = Parser {
            tokens,
            at: 0,
            columns,
        };
        let expr = parser.or()?;
        match parser.peek() {
            None => Ok(Condition { expr }),
            // the condition is wrapped in parentheses in the statement: a stray `)` ends it
            // early, anything else leaves that parenthesis unclosed
            Some(Token::RParen) => Err(ora(933, "ORA-00933: SQL command not properly ended")),
            Some(_) => Err(missing_right_parenthesis()),
        }
    }

    /// Whether the row meets the condition (TRUE; FALSE and UNKNOWN leave it out).
    pub(crate) fn holds(&self, row: &[Value]) -> Result<bool, SourceError> {
        Ok(self.expr.eval(row)? == Some(true))
    }
}

fn ora(code: u32, text: &str) -> SourceError {
    SourceError::ora(OraCode(code), text)
}

fn missing_right_parenthesis() -> SourceError {
    ora(907, "ORA-00907: missing right parenthesis")
}

fn missing_expression() -> SourceError {
    ora(936, "ORA-00936: missing expression")
}

fn invalid_relational_operator() -> SourceError {
    ora(920, "ORA-00920: invalid relational operator")
}

fn inconsistent_types(expected: &str, got: &str) -> SourceError {
    SourceError::ora(
        OraCode(932),
        format!("ORA-00932: inconsistent datatypes: expected {expected} got {got}"),
    )
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A bare word, in upper case: a keyword or a column name.
    Word(String),
    /// A double-quoted name, as written.
    Quoted(String),
    Number(String),
    Text(String),
    /// `=`, `<>`, `!=`, `^=`, `<`, `<=`, `>`, `>=`, `+`, `-`.
    Symbol(&'static str),
    LParen,
    RParen,
    Comma,
}

fn tokenize(text: &str) -> Result<Vec<Token>, SourceError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::LParen);
                i += 1;
            }
            ')' => {
                out.push(Token::RParen);
                i += 1;
            }
            ',' => {
                out.push(Token::Comma);
                i += 1;
            }
            '\'' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(ora(
                                1756,
                                "ORA-01756: quoted string not properly terminated",
                            ));
                        }
                        Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                            s.push('\'');
                            i += 2;
                        }
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Token::Text(s));
            }
            '"' => {
                let start = i + 1;
                let end = chars[start..]
                    .iter()
                    .position(|&ch| ch == '"')
                    .map(|p| start + p)
                    .ok_or_else(|| ora(1740, "ORA-01740: missing double quote in identifier"))?;
                if end == start {
                    return Err(ora(1741, "ORA-01741: illegal zero-length identifier"));
                }
                out.push(Token::Quoted(chars[start..end].iter().collect()));
                i = end + 1;
            }
            c if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|ch| ch.is_ascii_digit() || *ch == '.')
                {
                    i += 1;
                }
                if matches!(chars.get(i), Some('e' | 'E'))
                    && chars[i + 1..]
                        .iter()
                        .find(|ch| **ch != '+' && **ch != '-')
                        .is_some_and(|ch| ch.is_ascii_digit())
                {
                    i += 1;
                    if matches!(chars.get(i), Some('+' | '-')) {
                        i += 1;
                    }
                    while chars.get(i).is_some_and(|ch| ch.is_ascii_digit()) {
                        i += 1;
                    }
                }
                out.push(Token::Number(chars[start..i].iter().collect()));
            }
            c if c.is_alphabetic() => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '$' | '#'))
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push(Token::Word(word.to_uppercase()));
            }
            '<' | '>' | '!' | '^' | '=' | '+' | '-' => {
                let two = match (c, next) {
                    ('<', Some('>')) => Some("<>"),
                    ('<', Some('=')) => Some("<="),
                    ('>', Some('=')) => Some(">="),
                    ('!', Some('=')) => Some("!="),
                    ('^', Some('=')) => Some("^="),
                    _ => None,
                };
                let symbol = match (two, c) {
                    (Some(s), _) => s,
                    (None, '<') => "<",
                    (None, '>') => ">",
                    (None, '=') => "=",
                    (None, '+') => "+",
                    (None, '-') => "-",
                    _ => return Err(ora(911, "ORA-00911: invalid character")),
                };
                out.push(Token::Symbol(symbol));
                i += symbol.len();
            }
            _ => return Err(ora(911, "ORA-00911: invalid character")),
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    fn from_symbol(s: &str) -> Option<CompareOp> {
        Some(match s {
            "=" => CompareOp::Eq,
            "<>" | "!=" | "^=" => CompareOp::Ne,
            "<" => CompareOp::Lt,
            "<=" => CompareOp::Le,
            ">" => CompareOp::Gt,
            ">=" => CompareOp::Ge,
            _ => return None,
        })
    }

    fn admits(self, o: Ordering) -> bool {
        match self {
            CompareOp::Eq => o == Ordering::Equal,
            CompareOp::Ne => o != Ordering::Equal,
            CompareOp::Lt => o == Ordering::Less,
            CompareOp::Le => o != Ordering::Greater,
            CompareOp::Gt => o == Ordering::Greater,
            CompareOp::Ge => o != Ordering::Less,
        }
    }
}

/// What a value is compared as: the column's type family, or a literal's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Numeric,
    /// Text; `padded`: CHAR semantics (CHAR and NCHAR columns, literals); `national`:
    /// compared in UTF-16 (AL16UTF16).
    Text {
        padded: bool,
        national: bool,
    },
    Datetime,
    Raw,
    Interval,
    Lob,
    RowId,
    Other,
}

impl Class {
    fn of(data_type: &ColumnType) -> Class {
        match data_type {
            ColumnType::Number
            | ColumnType::Float
            | ColumnType::BinaryFloat
            | ColumnType::BinaryDouble => Class::Numeric,
            ColumnType::Char => Class::Text {
                padded: true,
                national: false,
            },
            ColumnType::NChar => Class::Text {
                padded: true,
                national: true,
            },
            ColumnType::Varchar2 | ColumnType::Long => Class::Text {
                padded: false,
                national: false,
            },
            ColumnType::NVarchar2 => Class::Text {
                padded: false,
                national: true,
            },
            ColumnType::Date
            | ColumnType::Timestamp
            | ColumnType::TimestampTz
            | ColumnType::TimestampLtz => Class::Datetime,
            ColumnType::Raw | ColumnType::LongRaw => Class::Raw,
            ColumnType::IntervalYm | ColumnType::IntervalDs => Class::Interval,
            ColumnType::Clob | ColumnType::NClob | ColumnType::Blob | ColumnType::XmlType => {
                Class::Lob
            }
            ColumnType::RowId | ColumnType::URowId => Class::RowId,
            _ => Class::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Class::Numeric => "NUMBER",
            Class::Text { .. } => "CHAR",
            Class::Datetime => "DATE",
            Class::Raw => "BINARY",
            Class::Interval => "INTERVAL",
            Class::Lob => "LOB",
            Class::RowId => "ROWID",
            Class::Other => "-",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Column { index: usize, class: Class },
    Literal { value: Value, class: Class },
}

impl Operand {
    fn class(&self) -> Class {
        match self {
            Operand::Column { class, .. } | Operand::Literal { class, .. } => *class,
        }
    }

    fn value<'a>(&'a self, row: &'a [Value]) -> &'a Value {
        match self {
            Operand::Column { index, .. } => row.get(*index).unwrap_or(&Value::Null),
            Operand::Literal { value, .. } => value,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare(Operand, CompareOp, Operand),
    IsNull(Operand),
    In(Operand, Vec<Operand>),
    Between(Operand, Operand, Operand),
    Like(Operand, Operand),
}

/// SQL's three-valued logic: `None` is UNKNOWN.
type Truth = Option<bool>;

impl Expr {
    fn eval(&self, row: &[Value]) -> Result<Truth, SourceError> {
        Ok(match self {
            Expr::And(a, b) => match (a.eval(row)?, b.eval(row)?) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Expr::Or(a, b) => match (a.eval(row)?, b.eval(row)?) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Expr::Not(e) => e.eval(row)?.map(|t| !t),
            Expr::Compare(a, op, b) => compare(a, b, row)?.map(|o| op.admits(o)),
            Expr::IsNull(a) => Some(a.value(row).is_null()),
            Expr::In(a, list) => {
                let mut truth = Some(false);
                for item in list {
                    match compare(a, item, row)? {
                        Some(Ordering::Equal) => return Ok(Some(true)),
                        Some(_) => {}
                        None => truth = None,
                    }
                }
                truth
            }
            Expr::Between(a, low, high) => {
                let above = compare(a, low, row)?.map(|o| o != Ordering::Less);
                let below = compare(a, high, row)?.map(|o| o != Ordering::Greater);
                match (above, below) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                }
            }
            Expr::Like(a, pattern) => {
                let (value, pattern) = (a.value(row), pattern.value(row));
                match (like_text(value), like_text(pattern)) {
                    (Some(v), Some(p)) => Some(like(&v, &p)),
                    _ => None,
                }
            }
        })
    }
}

/// The text LIKE sees: text as it is, a number as its text; `None` for NULL.
fn like_text(v: &Value) -> Option<String> {
    match v {
        Value::Text(s) => Some(s.clone()),
        Value::Number(d) => Some(d.to_string()),
        Value::Null => None,
        other => Some(format!("{other:?}")),
    }
}

/// `value LIKE pattern`: `%` any run of characters, `_` one character.
fn like(value: &str, pattern: &str) -> bool {
    let v: Vec<char> = value.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    // the classic two-pointer match with one backtrack point for the last `%`
    let (mut vi, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while vi < v.len() {
        match p.get(pi) {
            Some('%') => {
                star = Some((pi, vi));
                pi += 1;
            }
            Some(&c) if c == '_' || c == v[vi] => {
                vi += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, sv)) => {
                    pi = sp + 1;
                    vi = sv + 1;
                    star = Some((sp, sv + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|c| *c == '%')
}

/// Two operands compared as Oracle compares them after its implicit conversions; `None` when
/// either is NULL.
fn compare(a: &Operand, b: &Operand, row: &[Value]) -> Result<Option<Ordering>, SourceError> {
    let (va, vb) = (a.value(row), b.value(row));
    if va.is_null() || vb.is_null() {
        return Ok(None);
    }
    let ordering = match (a.class(), b.class()) {
        (Class::Numeric, Class::Numeric) => order::compare(va, vb, false),
        (Class::Numeric, Class::Text { .. }) => order::compare(va, &to_number(vb)?, false),
        (Class::Text { .. }, Class::Numeric) => order::compare(&to_number(va)?, vb, false),
        (
            Class::Text {
                padded: pa,
                national: na,
            },
            Class::Text {
                padded: pb,
                national: nb,
            },
        ) => compare_text(va, vb, pa && pb, na || nb),
        (Class::Datetime, Class::Datetime) => instant(va)?.cmp(&instant(vb)?),
        (Class::Datetime, Class::Text { .. }) => instant(va)?.cmp(&text_instant(vb)?),
        (Class::Text { .. }, Class::Datetime) => text_instant(va)?.cmp(&instant(vb)?),
        (Class::Raw, Class::Raw) => order::compare(va, vb, false),
        (Class::Raw, Class::Text { .. }) => order::compare(va, &hex_to_raw(vb)?, false),
        (Class::Text { .. }, Class::Raw) => order::compare(&hex_to_raw(va)?, vb, false),
        (Class::Interval, Class::Interval) => order::compare(va, vb, false),
        (Class::RowId, Class::RowId | Class::Text { .. }) | (Class::Text { .. }, Class::RowId) => {
            let pos = |v: &Value| match v {
                Value::RowId(s) | Value::Text(s) => super::order::RowPos::parse(s)
                    .ok_or_else(|| ora(1410, "ORA-01410: invalid ROWID")),
                _ => Err(ora(1410, "ORA-01410: invalid ROWID")),
            };
            pos(va)?.cmp(&pos(vb)?)
        }
        (x, y) => return Err(inconsistent_types(x.name(), y.name())),
    };
    Ok(Some(ordering))
}

/// Text against text: blank-padded when both sides have CHAR semantics (the shorter is
/// padded with spaces), by bytes otherwise.
fn compare_text(a: &Value, b: &Value, padded: bool, national: bool) -> Ordering {
    let (Value::Text(x), Value::Text(y)) = (a, b) else {
        return order::compare(a, b, national);
    };
    if !padded {
        return order::compare(a, b, national);
    }
    let (x, y) = (x.trim_end_matches(' '), y.trim_end_matches(' '));
    order::compare(
        &Value::Text(x.to_owned()),
        &Value::Text(y.to_owned()),
        national,
    )
}

/// Text converted to NUMBER, as Oracle converts it for a comparison with a number.
fn to_number(v: &Value) -> Result<Value, SourceError> {
    match v {
        Value::Text(s) => Decimal::parse(s.trim())
            .map(Value::Number)
            .map_err(|_| ora(1722, "ORA-01722: invalid number")),
        other => Ok(other.clone()),
    }
}

/// Text converted to RAW (HEXTORAW), as Oracle converts it for a comparison with RAW.
fn hex_to_raw(v: &Value) -> Result<Value, SourceError> {
    let Value::Text(s) = v else {
        return Ok(v.clone());
    };
    let invalid = || ora(1465, "ORA-01465: invalid hex number");
    let digits: Vec<u8> = s
        .chars()
        .map(|c| c.to_digit(16).map(|d| d as u8).ok_or_else(invalid))
        .collect::<Result<_, _>>()?;
    // an odd count reads as if a leading zero were there
    let padded: Vec<u8> = if digits.len() % 2 == 1 {
        std::iter::once(0).chain(digits).collect()
    } else {
        digits
    };
    Ok(Value::Raw(
        padded.chunks(2).map(|p| p[0] * 16 + p[1]).collect(),
    ))
}

/// The instant of a date or timestamp value, in nanoseconds (WITH TIME ZONE at UTC).
fn instant(v: &Value) -> Result<i128, SourceError> {
    match v {
        Value::Date(t) | Value::Timestamp(t) | Value::TimestampLtz(t) => Ok(t.epoch_nanos()),
        Value::TimestampTz(t, zone) => {
            let offset = match zone {
                cdc_core::TimeZone::Offset(m) => i128::from(*m),
                cdc_core::TimeZone::Region(_) => 0,
            };
            Ok(t.epoch_nanos() - offset * 60 * 1_000_000_000)
        }
        _ => Err(inconsistent_types("DATE", "CHAR")),
    }
}

/// Text read as a date in the session's format, `YYYY-MM-DD[ HH24:MI:SS[.FF]]` (Oracle
/// accepts the trailing fields missing); the session's time zone is UTC.
fn text_instant(v: &Value) -> Result<i128, SourceError> {
    let Value::Text(s) = v else {
        return instant(v);
    };
    let mismatch = || ora(1861, "ORA-01861: literal does not match format string");
    let (date, time) = match s.trim().split_once(' ') {
        Some((d, t)) => (d, Some(t.trim())),
        None => (s.trim(), None),
    };
    let mut ymd = date.splitn(3, '-');
    let field = |it: &mut std::str::SplitN<'_, char>| -> Result<u32, SourceError> {
        it.next()
            .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|f| f.parse().ok())
            .ok_or_else(mismatch)
    };
    let (year, month, day) = (field(&mut ymd)?, field(&mut ymd)?, field(&mut ymd)?);
    let (mut hour, mut minute, mut second, mut nanos) = (0, 0, 0, 0);
    if let Some(time) = time {
        let (hms, fraction) = match time.split_once('.') {
            Some((h, f)) => (h, Some(f)),
            None => (time, None),
        };
        let mut parts = hms.splitn(3, ':');
        hour = field(&mut parts)?;
        minute = parts
            .next()
            .map_or(Ok(0), |m| m.parse::<u32>().map_err(|_| mismatch()))?;
        second = parts
            .next()
            .map_or(Ok(0), |m| m.parse::<u32>().map_err(|_| mismatch()))?;
        if let Some(f) = fraction {
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(mismatch());
            }
            nanos = f.parse::<u32>().map_err(|_| mismatch())? * 10u32.pow(9 - f.len() as u32);
        }
    }
    let narrow = |n: u32| u8::try_from(n).map_err(|_| mismatch());
    let t = OracleDateTime::new(
        i16::try_from(year).map_err(|_| mismatch())?,
        narrow(month)?,
        narrow(day)?,
        narrow(hour)?,
        narrow(minute)?,
        narrow(second)?,
        nanos,
    )
    .ok_or_else(mismatch)?;
    Ok(t.epoch_nanos())
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    columns: &'a [ColumnDef],
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Word(w)) if w == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, SourceError> {
        let mut e = self.and()?;
        while self.keyword("OR") {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, SourceError> {
        let mut e = self.not()?;
        while self.keyword("AND") {
            e = Expr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, SourceError> {
        if self.keyword("NOT") {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Expr, SourceError> {
        if self.peek() == Some(&Token::LParen) {
            self.at += 1;
            let e = self.or()?;
            return match self.next() {
                Some(Token::RParen) => Ok(e),
                _ => Err(missing_right_parenthesis()),
            };
        }
        let left = self.operand()?;
        let negated = self.keyword("NOT");
        let e = match self.next() {
            Some(Token::Symbol(s)) if !negated => {
                let op = CompareOp::from_symbol(s).ok_or_else(invalid_relational_operator)?;
                let right = self.operand()?;
                comparable(&left, &right)?;
                return Ok(Expr::Compare(left, op, right));
            }
            Some(Token::Word(w)) if w == "IS" && !negated => {
                let not_null = self.keyword("NOT");
                if !self.keyword("NULL") {
                    return Err(ora(908, "ORA-00908: missing NULL keyword"));
                }
                let e = Expr::IsNull(left);
                return Ok(if not_null { Expr::Not(Box::new(e)) } else { e });
            }
            Some(Token::Word(w)) if w == "IN" => {
                if self.next() != Some(Token::LParen) {
                    return Err(ora(906, "ORA-00906: missing left parenthesis"));
                }
                let mut list = vec![self.operand()?];
                loop {
                    match self.next() {
                        Some(Token::Comma) => list.push(self.operand()?),
                        Some(Token::RParen) => break,
                        _ => return Err(missing_right_parenthesis()),
                    }
                }
                for item in &list {
                    comparable(&left, item)?;
                }
                Expr::In(left, list)
            }
            Some(Token::Word(w)) if w == "BETWEEN" => {
                let low = self.operand()?;
                if !self.keyword("AND") {
                    return Err(ora(905, "ORA-00905: missing keyword"));
                }
                let high = self.operand()?;
                comparable(&left, &low)?;
                comparable(&left, &high)?;
                Expr::Between(left, low, high)
            }
            Some(Token::Word(w)) if w == "LIKE" => Expr::Like(left, self.operand()?),
            _ => return Err(invalid_relational_operator()),
        };
        Ok(if negated { Expr::Not(Box::new(e)) } else { e })
    }

    fn operand(&mut self) -> Result<Operand, SourceError> {
        let literal = |value: Value, class: Class| Operand::Literal { value, class };
        match self.next() {
            Some(Token::Number(n)) => number(&n).map(|v| literal(v, Class::Numeric)),
            Some(Token::Symbol(sign @ ("-" | "+"))) => match self.next() {
                Some(Token::Number(n)) => {
                    number(&format!("{sign}{n}")).map(|v| literal(v, Class::Numeric))
                }
                _ => Err(missing_expression()),
            },
            // '' is NULL in Oracle
            Some(Token::Text(s)) if s.is_empty() => Ok(literal(
                Value::Null,
                Class::Text {
                    padded: true,
                    national: false,
                },
            )),
            Some(Token::Text(s)) => Ok(literal(
                Value::Text(s),
                Class::Text {
                    padded: true,
                    national: false,
                },
            )),
            Some(Token::Word(w)) if w == "NULL" => Ok(literal(Value::Null, Class::Other)),
            Some(Token::Word(w)) if is_reserved(&w) => Err(missing_expression()),
            Some(Token::Word(w)) => self.column(&w),
            Some(Token::Quoted(name)) => self.column(&name),
            _ => Err(missing_expression()),
        }
    }

    fn column(&self, name: &str) -> Result<Operand, SourceError> {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .map(|index| Operand::Column {
                index,
                class: Class::of(&self.columns[index].data_type),
            })
            .ok_or_else(|| {
                SourceError::ora(
                    OraCode(904),
                    format!("ORA-00904: \"{name}\": invalid identifier"),
                )
            })
    }
}

/// The words a condition cannot use as a bare column name.
fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "AND" | "OR" | "NOT" | "IS" | "IN" | "BETWEEN" | "LIKE" | "SELECT" | "FROM" | "WHERE"
    )
}

fn number(text: &str) -> Result<Value, SourceError> {
    Decimal::parse(text)
        .map(Value::Number)
        .map_err(|_| ora(1722, "ORA-01722: invalid number"))
}

/// Refuses at parse time what Oracle refuses there: a LOB in a comparison, and types that
/// have no conversion between them. NULL compares with anything.
fn comparable(a: &Operand, b: &Operand) -> Result<(), SourceError> {
    let null = |o: &Operand| {
        matches!(
            o,
            Operand::Literal {
                value: Value::Null,
                ..
            }
        )
    };
    if null(a) || null(b) {
        return Ok(());
    }
    let text = |c: Class| matches!(c, Class::Text { .. });
    let ok = match (a.class(), b.class()) {
        (Class::Lob, _) | (_, Class::Lob) => false,
        (x, y) if x == y => true,
        (x, y) if text(x) && text(y) => true,
        (Class::Numeric | Class::Datetime | Class::Raw | Class::RowId, y) if text(y) => true,
        (x, Class::Numeric | Class::Datetime | Class::Raw | Class::RowId) if text(x) => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(inconsistent_types(a.class().name(), b.class().name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<ColumnDef> {
        vec![
            ColumnDef::new("ID", 1, ColumnType::Number),
            ColumnDef::new("STATUS", 2, ColumnType::Varchar2),
            ColumnDef::new("CODE", 3, ColumnType::Char),
            ColumnDef::new("AMOUNT", 4, ColumnType::Number),
            ColumnDef::new("Region", 5, ColumnType::Varchar2),
            ColumnDef::new("BODY", 6, ColumnType::Clob),
            ColumnDef::new("BORN", 7, ColumnType::Date),
            ColumnDef::new("TAG", 8, ColumnType::Raw),
        ]
    }

    fn row(id: i64, status: &str, amount: Option<i64>) -> Vec<Value> {
        vec![
            Value::Number(Decimal::new(i128::from(id), 0)),
            Value::Text(status.to_owned()),
            Value::Text("AB      ".to_owned()),
            amount.map_or(Value::Null, |a| {
                Value::Number(Decimal::new(i128::from(a), 0))
            }),
            Value::Text("EU".to_owned()),
            Value::Text("long".to_owned()),
            Value::Date(OracleDateTime::new(2026, 1, 5, 9, 30, 0, 0).unwrap()),
            Value::Raw(vec![0x0a, 0xff]),
        ]
    }

    fn holds(text: &str, row: &[Value]) -> bool {
        Condition::parse(text, &columns())
            .and_then(|c| c.holds(row))
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn code(text: &str) -> Option<u32> {
        Condition::parse(text, &columns())
            .and_then(|c| c.holds(&row(1, "OPEN", None)))
            .err()
            .and_then(|e| e.ora_code())
            .map(|c| c.0)
    }

    #[test]
    fn conditions_hold_as_oracle_evaluates_them() {
        let open = row(150, "OPEN", Some(7));
        let closed = row(50, "CLOSED", None);
        let table = [
            ("ID > 100 AND STATUS = 'OPEN'", true, false),
            ("id > 100 and status = 'OPEN'", true, false),
            ("\"Region\" IN ('EU','US')", true, true),
            ("\"Region\" NOT IN ('EU','US')", false, false),
            ("AMOUNT IS NOT NULL", true, false),
            ("AMOUNT IS NULL", false, true),
            ("ID BETWEEN 50 AND 150", true, true),
            ("ID NOT BETWEEN 51 AND 149", true, true),
            ("NOT (ID > 100) OR STATUS <> 'OPEN'", false, true),
            (
                "(ID < 0 OR ID >= 150) AND NOT STATUS != 'OPEN'",
                true,
                false,
            ),
            // NULL is neither equal nor unequal: both comparisons are UNKNOWN
            ("AMOUNT = 7 OR AMOUNT <> 7", true, false),
            ("NOT (AMOUNT = 7)", false, false),
            // NOT IN with a NULL in its list is never TRUE
            ("ID NOT IN (1, NULL)", false, false),
            ("ID IN (150, NULL)", true, false),
            // CHAR compares blank-padded, VARCHAR2 does not
            ("CODE = 'AB'", true, true),
            ("STATUS = 'OPEN  '", false, false),
            // implicit conversions: text to number, to date, to raw
            ("ID = '150'", true, false),
            ("ID > -1.5e2", true, true),
            (
                "BORN > '2026-01-05 09:00:00' AND BORN < '2026-01-06'",
                true,
                true,
            ),
            ("TAG = '0AFF'", true, true),
            ("STATUS LIKE 'OP%'", true, false),
            ("STATUS NOT LIKE '_LOSED'", true, false),
            ("BODY LIKE '%on%'", true, true),
            ("STATUS = ''", false, false),
        ];
        for (text, want_open, want_closed) in table {
            assert_eq!(holds(text, &open), want_open, "{text} on OPEN");
            assert_eq!(holds(text, &closed), want_closed, "{text} on CLOSED");
        }
    }

    #[test]
    fn bad_conditions_fail_with_oracles_errors() {
        let table = [
            ("NOPE = 1", 904),
            ("region = 'EU'", 904),
            ("ID 100", 920),
            ("ID LIKES 1", 920),
            ("ID =", 936),
            ("", 936),
            ("AND ID = 1", 936),
            ("(ID = 1", 907),
            ("ID = 1 2", 907),
            ("ID IN (1, 2", 907),
            ("ID = 1)", 933),
            ("ID = 1; DROP TABLE X", 911),
            ("STATUS = 'OPEN", 1756),
            ("ID IS 5", 908),
            ("ID BETWEEN 1 OR 2", 905),
            ("ID IN 1", 906),
            ("BODY = 'x'", 932),
            ("BORN = 5", 932),
            ("STATUS > 5", 1722),
            ("BORN = 'yesterday'", 1861),
            ("TAG = 'xyz'", 1465),
            ("\"\" = 1", 1741),
        ];
        for (text, want) in table {
            assert_eq!(code(text), Some(want), "{text}");
        }
    }

    #[test]
    fn like_patterns() {
        assert!(like("abc", "a%"));
        assert!(like("abc", "%c"));
        assert!(like("abc", "a_c"));
        assert!(like("abc", "%"));
        assert!(!like("abc", "a_"));
        assert!(like("a%c", "a%%c"));
        assert!(like("", "%"));
        assert!(!like("", "_"));
        assert!(like("banana", "%an%na"));
    }
}
