//! `redo_parse`: shows how the decoder's first layer reads SQL_REDO, for an operator looking at
//! a row that went to the dead letter topic.
//!
//! ```text
//!  $ echo '{"sql_redo": "delete from \"O\".\"T\" where \"ID\" = '"'"'1'"'"'", "operation_code": 2}' \
//!      | cargo run -q -p cdc-logminer --example redo_parse
//!  {"table":"O.T","op":"d","before":{"ID":"1"},"after":null}
//! ```
//!
//! Reads JSON lines `{"sql_redo": "…", "operation_code": N}` on stdin and writes one JSON line
//! per input line, in order; the format is described in `cdc_logminer::decode::inspect`.

use std::io::{self, BufRead, BufWriter, Write};

use cdc_logminer::decode::inspect::inspect_line;

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line?;
        serde_json::to_writer(&mut out, &inspect_line(line.trim_end_matches('\r')))?;
        out.write_all(b"\n")?;
        // an operator may pipe rows one at a time and wait for each answer
        out.flush()?;
    }
    Ok(())
}
