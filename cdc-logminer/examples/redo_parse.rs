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

use std::io;

use cdc_logminer::decode::inspect::inspect_lines;

fn main() -> io::Result<()> {
    inspect_lines(io::stdin().lock(), io::stdout().lock())
}
