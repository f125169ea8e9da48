//! `docs/configuration.md`, rendered from the key table so the document cannot drift from
//! what validation accepts (the `config_doc` test compares the two).

use std::fmt::Write as _;

use super::keys::{Group, KEYS, KeyDefault, KeySpec, KeyStatus, human_bytes};

/// The text of `docs/configuration.md`.
pub fn render_markdown() -> String {
    let mut out = String::new();
    out.push_str(PREAMBLE);
    for &group in Group::ALL {
        let keys: Vec<&KeySpec> = KEYS.iter().filter(|spec| spec.group == group).collect();
        if keys.is_empty() {
            continue;
        }
        let _ = write!(out, "\n## {}\n\n{}\n\n", group.title(), group.about());
        out.push_str("| Key | Default | Allowed | Status | Meaning |\n");
        out.push_str("|---|---|---|---|---|\n");
        for spec in keys {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                cell(&spec.display_name()),
                cell(&default_text(spec)),
                cell(&spec.kind.allowed()),
                cell(&status_text(spec)),
                cell(spec.doc),
            );
        }
    }
    out.push_str(SHOWN_BY);
    for spec in KEYS.iter().filter(|spec| spec.status == KeyStatus::Built) {
        let tests: Vec<String> = spec
            .shown_by
            .iter()
            .map(|test| format!("`{test}`"))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} |",
            cell(&spec.display_name()),
            cell(&tests.join("<br>"))
        );
    }
    out
}

/// The status cell: built, reserved with what it waits for, or refused with why and what to
/// use instead; and the values that are built when the kind accepts more.
fn status_text(spec: &KeySpec) -> String {
    let mut text = match spec.status {
        KeyStatus::Built => "built".to_owned(),
        KeyStatus::Reserved => format!("**reserved**: {}", spec.why),
        KeyStatus::Refused => format!("**refused**: {}; use {} instead", spec.why, spec.instead),
    };
    if !spec.supported.is_empty() {
        let values: Vec<String> = spec.supported.iter().map(|v| format!("`{v}`")).collect();
        let _ = write!(
            text,
            ". Only {} accepted; any other value is refused: {}",
            values.join(", "),
            spec.refusal
        );
    }
    text
}

fn default_text(spec: &KeySpec) -> String {
    match spec.default {
        KeyDefault::Value("") => "empty".to_owned(),
        KeyDefault::Value(text) => match text.parse::<u64>().ok().and_then(human_bytes) {
            Some(human) if spec.key.ends_with(".bytes") => format!("`{text}` ({human})"),
            _ => format!("`{text}`"),
        },
        KeyDefault::Required => "required".to_owned(),
        KeyDefault::Conditional(when) => format!("required {when}"),
        KeyDefault::Unset => "not set".to_owned(),
        KeyDefault::Derived(text) => text.to_owned(),
    }
}

/// Keeps a table cell on one line and its pipes literal.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

const SHOWN_BY: &str = "
## Tests that show each built key

Each built key names the tests that show its effect, as `crate/path/file.rs::test`; the
`config_keys` test of cdc-core fails when a built key names none, or one that does not exist.

| Key | Tests |
|---|---|
";

const PREAMBLE: &str = "\
# Configuration

<!-- Generated from the key table in cdc-core/src/config/keys.rs by
     cdc_core::config::render_markdown(). Do not edit by hand; regenerate with
     CDC_BLESS=1 cargo test -p cdc-core --test main config_doc -->

The connector reads a Java `.properties` file or a Kafka Connect JSON body
(`{\"name\": …, \"config\": {…}}`, or a flat `{\"key\": \"value\"}` object). Every key of the
connector starts with `cdc.`; the Kafka Connect keys it reads are listed first. Other keys
without the `cdc.` prefix are kept as given, but not read (see the Kafka Connect keys).

## Validation

The configuration is checked as a whole when the connector starts, and every problem is
reported at once. Each problem names the key, the value given (secrets appear as `****`) and
what the key allows, for example:

```text
3 configuration problems:
  - cdc.mining.max.logs.per.stpe (line 15): not a known key; did you mean cdc.mining.max.logs.per.step?
  - cdc.buffer.memory.max.bytes = \"1000\" (line 16): too small; allowed: bytes, at least 16777216 (16 MiB)
  - cdc.capture.mode = \"archive\" (line 17): allowed: one of online, archive_only
```

- A `cdc.*` key that is not in the tables below is an error, with the closest known key.
- Every key is one of three things, shown in its Status column:
  - **built**: it does what its row says; the last table of this document names the tests
    that show each built key's effect (a test checks that each exists);
  - **reserved**: accepted and checked but not built yet (the row says what it waits for);
    setting it produces a warning when the configuration is validated, and `oracle-cdc run`
    logs the warning at start, so it is never silently ignored;
  - **refused**: known by name so that the error can say why, but any value given is a
    configuration error naming the key and what to use instead.
- A built or reserved key may accept more values than are built (`cdc.lob.mode=inline`):
  those values are refused with an error naming the key and the values that are built.
- Warnings are also given for `tasks.max` above 1 (one task always runs), for a key given
  twice (the last value is used), for keys that have no effect with the rest of the
  configuration (host and port when `cdc.database.url` is set, `cdc.sim.*` with
  `cdc.source=oracle`), and for a key that looks like a `cdc.` key without its prefix.

Rules across keys:

- With `cdc.source=oracle`: `cdc.database.url`, or `cdc.database.host` with exactly one of
  `cdc.database.service` and `cdc.database.sid`; and `cdc.database.user` and
  `cdc.database.password`.
- `name`, `cdc.topic.prefix` and `cdc.tables.include` are always required; `oracle-cdc run`
  also requires `bootstrap.servers` or `cdc.kafka.bootstrap.servers`.
- `exactly.once.support=required` needs `transaction.boundary=connector` (see the Kafka
  Connect keys).
- `cdc.database.wallet.location` goes with `cdc.database.host`, not with `cdc.database.url`
  (a connect string names its wallet itself).
- Every side topic (ops, signals, schema, DLQ, heartbeat, journal, transactions when enabled,
  offsets) must be a distinct topic.
- An empty value counts as not given, except for a key whose default is a literal value
  (an empty list is then an empty list).

## Value syntax

- **Properties files** follow `java.util.Properties`: `#` and `!` start comments; `key=value`,
  `key: value` and `key value` are the same; a line ending in `\\` continues on the next; `\\t`,
  `\\n`, `\\\\` and `\\uXXXX` are escapes. Leading blanks of values are dropped.
- **Numbers** are plain integers. Durations are milliseconds and sizes are bytes.
- **Choices** ignore case: `ONLINE` is `online`.
- **Lists** are comma-separated; blanks around items are ignored.
- **Regular expression lists** are comma-separated too, but a comma inside `()`, `[]` or `{}`,
  or written `\\,`, belongs to the expression. Each expression must match the whole name:
  `PDB.OWNER.TABLE` for tables (`OWNER.TABLE` in a non-CDB) and `[PDB.]OWNER.TABLE.COLUMN` for
  columns. They ignore case unless `cdc.tables.case.sensitive=true`.
- **Key columns** are `[PDB.]SCHEMA.TABLE:C1,C2` entries separated by `;`. An entry without a
  PDB applies in every PDB. Unless `cdc.tables.case.sensitive=true`, table and column names
  are compared in upper case, the case of unquoted Oracle identifiers.
- **Topic names** may contain `${prefix}`, replaced by `cdc.topic.prefix`. The topic template
  also knows `${pdb}` (the database name in a non-CDB), `${schema}`, `${table}` and
  `${database}`; characters Kafka does not allow in a rendered table topic become `_`.
- **Secrets** (`cdc.database.password`, `cdc.database.tls.truststore.password`, and any
  pass-through property whose name mentions a password, secret or credential, such as
  `cdc.kafka.sasl.password` or `cdc.kafka.sasl.jaas.config`) are never printed.
";
