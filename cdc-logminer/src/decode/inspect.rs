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
//! `{"fn": NAME, "args": [...]}` for a function call, `{"concat": [...]}` for `||`, and
//! `{"unsupported": true}` for `Unsupported Type`. A rejected line (one that is not UTF-8
//! included) gives `{"error": "…"}`, and the lines after it are still answered.

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value as Json};

use cdc_core::change::Operation;

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
    let mut out = Map::new();
    out.insert(
        "table".into(),
        Json::String(match stmt.owner {
            Some(owner) => format!("{}.{}", owner.name(), stmt.table.name()),
            None => stmt.table.name().into_owned(),
        }),
    );
    out.insert("op".into(), Json::String(op.into()));
    out.insert("before".into(), before);
    out.insert("after".into(), after);
    if let Some(row_id) = stmt.row_id {
        out.insert("rowid".into(), Json::String(row_id.to_owned()));
    }
    Ok(Json::Object(out))
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
