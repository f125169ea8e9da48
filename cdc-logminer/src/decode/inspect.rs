//! The inspection tool's contract (`cargo run -p cdc-logminer --example redo_parse`): one JSON
//! line in, one JSON line out, showing the parser's first layer for a row an operator is looking
//! at (typically one that went to the dead letter topic).
//!
//! ```text
//!  in:  {"sql_redo": "update \"O\".\"T\" set \"A\" = '2' where \"A\" = '1' and ROWID = 'AAA'",
//!        "operation_code": 3}
//!  out: {"table":"O.T","op":"u","before":{"A":"1"},"after":{"A":"2"},"rowid":"AAA"}
//! ```
//!
//! Values are the raw literals: a string for a quoted literal (`''` collapsed, padding kept),
//! `null` for NULL / IS NULL, the text of an unquoted number as a string,
//! `{"fn": NAME, "args": [...]}` for a function call, `{"concat": [...]}` for `||`,
//! `{"json": value}` for a value marked `/* JSON */`, and `{"unsupported": true}` for
//! `Unsupported Type`. A literal the decoder would refuse whatever its column (bad
//! `HEXTORAW` digits, a bad `UNISTR` escape, a date not in the session's format, …) makes the
//! line an error naming the column. The input may also carry `seg_owner` (the owner of a
//! statement that names none), `status` and `info`.
//!
//! An UNSUPPORTED row (operation 255, or SQL_REDO `Unsupported` without an operation code) is
//! no statement to parse: it is answered `{"op":"unsupported", …}` with its `table`, `status`
//! and `info` when the input gives them, as the engine reports it (the `unsupported-row`
//! event). A rejected line (one that is not UTF-8 included) gives `{"error": "…"}`, and the
//! lines after it are still answered.

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value as Json};

use cdc_core::change::Operation;

use super::convert::check_literal;
use super::parse::{Item, Literal, StatementKind, parse_statement};

/// Answers every line of `input` with one line on `out`, in order, flushing after each (an
/// operator may pipe rows one at a time and wait for each answer). A line that is not UTF-8 is
/// rejected like any other bad line rather than ending the stream: the lines after it still
/// get their answers. Only an I/O error stops it.
pub fn inspect_lines(mut input: impl BufRead, mut out: impl Write) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let answer = match std::str::from_utf8(text) {
            Ok(text) => inspect_line(text),
            Err(_) => error_line("not a JSON object: the line is not UTF-8".into()),
        };
        serde_json::to_writer(&mut out, &answer)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
}

/// Renders one input line as its output line (a JSON object).
pub fn inspect_line(line: &str) -> Json {
    inspect(line).unwrap_or_else(error_line)
}

fn error_line(message: String) -> Json {
    let mut out = Map::new();
    out.insert("error".into(), Json::String(message));
    Json::Object(out)
}

fn inspect(line: &str) -> Result<Json, String> {
    let input: Json = serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let Json::Object(input) = input else {
        return Err("not a JSON object".into());
    };
    let Some(Json::String(sql)) = input.get("sql_redo") else {
        return Err("no \"sql_redo\" string".into());
    };
    let operation = match input.get("operation_code") {
        None | Some(Json::Null) => None,
        Some(Json::Number(n)) => match n.as_u64().and_then(|n| u16::try_from(n).ok()) {
            Some(code) => Some(Operation::from_code(code)),
            None => return Err("\"operation_code\" is not an operation code".into()),
        },
        Some(Json::String(s)) => match s.trim().parse::<u16>() {
            Ok(code) => Some(Operation::from_code(code)),
            Err(_) => return Err("\"operation_code\" is not an operation code".into()),
        },
        Some(_) => return Err("\"operation_code\" is not an operation code".into()),
    };
    let text = |key: &str| match input.get(key) {
        Some(Json::String(s)) => Some(s.as_str()),
        _ => None,
    };
    if operation == Some(Operation::Unsupported)
        || (operation.is_none() && sql.trim().eq_ignore_ascii_case("Unsupported"))
    {
        return Ok(unsupported_row(&input));
    }
    if let Some(op) = operation
        && !op.is_dml()
    {
        return Err(format!(
            "operation {op} is not an INSERT, UPDATE or DELETE row"
        ));
    }
    if let Some(reason) = super::row::placeholder_reason(sql) {
        return Err(reason.to_string());
    }
    let stmt = parse_statement(sql).map_err(|e| e.to_string())?;
    let expected = match stmt.kind {
        StatementKind::Insert => Operation::Insert,
        StatementKind::Update => Operation::Update,
        StatementKind::Delete => Operation::Delete,
    };
    if let Some(op) = operation
        && op != expected
    {
        return Err(format!(
            "the SQL_REDO is an {} statement but the operation is {op}",
            stmt.kind.keyword()
        ));
    }
    let (op, before, after) = match stmt.kind {
        StatementKind::Insert => ("c", Json::Null, image(stmt.assignments(), None)),
        StatementKind::Delete => ("d", image(stmt.conditions(), None), Json::Null),
        StatementKind::Update => {
            let before = image(stmt.conditions(), None);
            let after = image(stmt.assignments(), before.as_object());
            ("u", before, after)
        }
    };
    for item in stmt.items() {
        check_literal(&item.value).map_err(|e| {
            format!(
                "the value of column \"{}\" would not decode: {}",
                item.column.name(),
                e.reason()
            )
        })?;
    }
    // a statement that names no owner is read with the row's SEG_OWNER
    let owner = match stmt.owner {
        Some(owner) => Some(owner.name().into_owned()),
        None => text("seg_owner").map(str::to_owned),
    };
    let table = match owner {
        Some(owner) => format!("{owner}.{}", stmt.table.name()),
        None => stmt.table.name().into_owned(),
    };
    let mut out = Map::new();
    out.insert("table".into(), Json::String(table));
    out.insert("op".into(), Json::String(op.into()));
    out.insert("before".into(), before);
    out.insert("after".into(), after);
    if let Some(row_id) = stmt.row_id {
        out.insert("rowid".into(), Json::String(row_id.to_owned()));
    }
    Ok(Json::Object(out))
}

/// The answer for an UNSUPPORTED row: what the engine's `unsupported-row` event names.
fn unsupported_row(input: &Map<String, Json>) -> Json {
    let mut out = Map::new();
    out.insert("op".into(), Json::String("unsupported".into()));
    let owner = input.get("seg_owner").and_then(Json::as_str);
    if let Some(table) = input.get("table_name").and_then(Json::as_str) {
        let table = match owner {
            Some(owner) => format!("{owner}.{table}"),
            None => table.to_owned(),
        };
        out.insert("table".into(), Json::String(table));
    }
    for key in ["status", "info"] {
        if let Some(value) = input.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), value.clone());
        }
    }
    Json::Object(out)
}

/// An image as a JSON object; with `base`, the items are laid over a copy of it (an update's
/// after image is its before image overlaid with the SET items).
fn image(items: &[Item<'_>], base: Option<&Map<String, Json>>) -> Json {
    let mut out = base.cloned().unwrap_or_default();
    for item in items {
        out.insert(item.column.name().into_owned(), literal(&item.value));
    }
    Json::Object(out)
}

/// One first-layer literal as JSON.
pub fn literal(value: &Literal<'_>) -> Json {
    match value {
        Literal::Quoted(q) => Json::String(q.text().into_owned()),
        Literal::Null => Json::Null,
        Literal::Number(text) | Literal::Bind(text) => Json::String((*text).to_owned()),
        Literal::Function(f) => {
            let mut out = Map::new();
            out.insert("fn".into(), Json::String(f.name().to_owned()));
            out.insert(
                "args".into(),
                Json::Array(f.args().map(|a| literal(&a)).collect()),
            );
            Json::Object(out)
        }
        Literal::Concat(c) => {
            let mut out = Map::new();
            out.insert(
                "concat".into(),
                Json::Array(c.parts().map(|p| literal(&p)).collect()),
            );
            Json::Object(out)
        }
        Literal::Json(j) => {
            let mut out = Map::new();
            out.insert("json".into(), literal(&j.value()));
            Json::Object(out)
        }
        Literal::Unsupported => {
            let mut out = Map::new();
            out.insert("unsupported".into(), Json::Bool(true));
            Json::Object(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sql: &str, code: Option<u16>) -> String {
        let mut input = Map::new();
        input.insert("sql_redo".into(), Json::String(sql.into()));
        if let Some(code) = code {
            input.insert("operation_code".into(), Json::from(code));
        }
        inspect_line(&Json::Object(input).to_string()).to_string()
    }

    #[test]
    fn contract() {
        assert_eq!(
            run(
                r#"update "O"."T" set "A" = '2', "C" = UNISTR('\00e9') where "A" = '1' and "B" IS NULL and ROWID = 'AAA'"#,
                Some(3)
            ),
            r#"{"table":"O.T","op":"u","before":{"A":"1","B":null},"after":{"A":"2","B":null,"C":{"fn":"UNISTR","args":["\\00e9"]}},"rowid":"AAA"}"#
        );
        assert_eq!(
            run(
                r#"insert into "O"."T"("A","B","C","D","E") values ('x''y  ',42,EMPTY_CLOB(),'a' || 'b',Unsupported Type);"#,
                Some(1)
            ),
            r#"{"table":"O.T","op":"c","before":null,"after":{"A":"x'y  ","B":"42","C":{"fn":"EMPTY_CLOB","args":[]},"D":{"concat":["a","b"]},"E":{"unsupported":true}}}"#
        );
        assert_eq!(
            run(
                r#"delete from "O"."T" where "D" = TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')"#,
                None
            ),
            r#"{"table":"O.T","op":"d","before":{"D":{"fn":"TO_DATE","args":["2026-02-28 13:45:59","YYYY-MM-DD HH24:MI:SS"]}},"after":null}"#
        );
        assert!(run(r#"delete from "O"."T""#, Some(1)).starts_with(r#"{"error":"#));
        assert!(run("commit;", Some(7)).starts_with(r#"{"error":"#));
        assert!(run("nonsense", None).starts_with(r#"{"error":"#));
        // the texts LogMiner writes in place of a statement are named, not syntax errors
        let temporary = run("/* No SQL_REDO for temporary tables */", Some(1));
        assert!(
            temporary.starts_with(r#"{"error":"LogMiner gives no SQL_REDO for temporary"#),
            "{temporary}"
        );
        let mismatch = run("Dictionary Version Mismatch", Some(3));
        assert!(
            mismatch.starts_with(r#"{"error":"dictionary mismatch"#),
            "{mismatch}"
        );
        assert!(
            inspect_line("not json")
                .to_string()
                .starts_with(r#"{"error":"#)
        );
        assert!(inspect_line("").to_string().starts_with(r#"{"error":"#));
    }

    /// A literal the decoder would refuse, whatever its column, is an error naming the
    /// column, not a value shown as if it would decode.
    #[test]
    fn malformed_literals_are_errors() {
        let insert = |value: &str| {
            run(
                &format!(r#"insert into "O"."T"("ID","C") values ('1',{value})"#),
                Some(1),
            )
        };
        for good in [
            "HEXTORAW('00ff')",
            r"UNISTR('\00e9\d83d\de00')",
            r"UNISTR('\d83d') || UNISTR('\de00')",
            "TO_DATE('2026-02-28 13:45:59', 'YYYY-MM-DD HH24:MI:SS')",
            "TO_DATE(' 2026-02-28 13:45:59', 'SYYYY-MM-DD HH24:MI:SS')",
            "TO_TIMESTAMP('2026-03-29 01:30:00.123456000')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1 +05:30')",
            "TO_TIMESTAMP_TZ('2026-03-29 01:30:00.1')",
            "TO_YMINTERVAL('+0012-03')",
            "TO_DSINTERVAL('+00005 04:03:02.123456')",
            "XMLType(:1)",
            "/* JSON */ HEXTORAW('ff4a5a')",
        ] {
            let out = insert(good);
            assert!(out.starts_with(r#"{"table":"O.T""#), "{good}: {out}");
        }
        for (bad, problem) in [
            ("HEXTORAW('abc')", "an odd number of hex digits"),
            ("HEXTORAW('zz')", "not a hex digit"),
            (
                "HEXTORAW('00') || HEXTORAW('0')",
                "an odd number of hex digits",
            ),
            (r"UNISTR('\00e')", "a short UNISTR escape"),
            (r"UNISTR('\zz00')", "a bad UNISTR escape"),
            (r"UNISTR('\d83d')", "an unpaired UTF-16 surrogate in UNISTR"),
            (
                "TO_DATE('2026-02-30 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
                "not a valid date or time",
            ),
            (
                "TO_DATE('28-FEB-26', 'DD-MON-RR')",
                "TO_DATE with a format other than the session's NLS_DATE_FORMAT",
            ),
            (
                "TO_DATE('-4712-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS')",
                "a sign before the year",
            ),
            (
                "TO_DATE('2026-02-28 13:45:59.5', 'YYYY-MM-DD HH24:MI:SS')",
                "a DATE carries no fraction of a second",
            ),
            (
                "TO_TIMESTAMP('2026-03-29 24:00:00')",
                "not a valid date or time",
            ),
            (
                "TO_TIMESTAMP_TZ('2026-03-29 01:30:00 +15:00')",
                "a time zone offset out of range",
            ),
            ("TO_YMINTERVAL('+0012-12')", "months out of range"),
            ("XMLType(HEXTORAW('a'))", "an odd number of hex digits"),
            ("/* JSON */ HEXTORAW('ff4')", "an odd number of hex digits"),
        ] {
            let out = insert(bad);
            assert!(
                out.starts_with(r#"{"error":"the value of column \"C\" would not decode: "#)
                    && out.contains(problem),
                "{bad}: {out}"
            );
        }
    }

    #[test]
    fn the_json_marker_and_an_owner_from_seg_owner() {
        assert_eq!(
            run(
                r#"insert into "O"."J"("ID","DOC") values ('1',/* JSON */ HEXTORAW('ff4a'))"#,
                Some(1)
            ),
            r#"{"table":"O.J","op":"c","before":null,"after":{"ID":"1","DOC":{"json":{"fn":"HEXTORAW","args":["ff4a"]}}}}"#
        );
        let line = |extra: &str| {
            inspect_line(&format!(
                r#"{{"sql_redo": "delete from \"T\" where \"ID\" = '1'", "operation_code": 2{extra}}}"#
            ))
            .to_string()
        };
        assert_eq!(
            line(r#", "seg_owner": "APP""#),
            r#"{"table":"APP.T","op":"d","before":{"ID":"1"},"after":null}"#
        );
        assert_eq!(
            line(""),
            r#"{"table":"T","op":"d","before":{"ID":"1"},"after":null}"#
        );
    }

    /// An UNSUPPORTED row is reported as one, with what the engine's event names, not as a
    /// statement that does not parse.
    #[test]
    fn unsupported_rows_are_reported_as_unsupported() {
        assert_eq!(
            inspect_line(
                r#"{"sql_redo": "Unsupported", "operation_code": 255, "seg_owner": "APP", "table_name": "FLAGS", "status": 2, "info": "Object or Data type Unsupported"}"#
            )
            .to_string(),
            r#"{"op":"unsupported","table":"APP.FLAGS","status":2,"info":"Object or Data type Unsupported"}"#
        );
        assert_eq!(run("Unsupported", Some(255)), r#"{"op":"unsupported"}"#);
        assert_eq!(run("Unsupported", None), r#"{"op":"unsupported"}"#);
        // whatever its SQL_REDO: operation 255 gives no column data
        assert_eq!(run("", Some(255)), r#"{"op":"unsupported"}"#);
        assert!(run("Unsupported", Some(1)).starts_with(r#"{"error":"#));
    }

    /// One answer per input line, in order, even when a line is not UTF-8 (a DLQ row pasted
    /// from a terminal in another encoding): the bad line is rejected, the stream goes on.
    #[test]
    fn every_line_is_answered_even_after_one_that_is_not_utf8() {
        let delete = br#"{"sql_redo": "delete from \"O\".\"T\"", "operation_code": 2}"#;
        let mut input = Vec::new();
        input.extend_from_slice(delete);
        input.extend_from_slice(b"\r\n{\"sql_redo\": \"\xff\xfe\"}\n\n");
        input.extend_from_slice(delete);
        let mut out = Vec::new();
        inspect_lines(&input[..], &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        let ok = r#"{"table":"O.T","op":"d","before":{},"after":null}"#;
        assert_eq!(lines[0], ok);
        assert!(lines[1].contains("not UTF-8"), "{}", lines[1]);
        assert!(lines[2].starts_with(r#"{"error":"#), "{}", lines[2]);
        assert_eq!(lines[3], ok);
    }
}
