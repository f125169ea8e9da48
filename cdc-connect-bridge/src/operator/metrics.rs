//! The `/metrics` page: one [`MetricsSnapshot`] rendered in the OpenMetrics text format that
//! Prometheus scrapes.
//!
//! ```text
//!  ConnectorControl::metrics() ─► MetricsSnapshot { server, engine, buffer, delivery }
//!     │ SERIES: name, type, help, which field it reads
//!     ▼
//!  fresh Registry (prefix oracle_cdc, label server="<prefix>") of ConstGauge / ConstCounter
//!     │ prometheus_client::encoding::text::encode
//!     ▼
//!  # HELP oracle_cdc_rows_mined Rows read from V$LOGMNR_CONTENTS.
//!  # TYPE oracle_cdc_rows_mined counter
//!  oracle_cdc_rows_mined_total{server="cdc"} 4711
//!  …
//!  # EOF
//! ```
//!
//! A fresh registry per scrape keeps the counters where they live (the engine, the buffer, the
//! producer) instead of mirroring them into registry state that could fall out of step. The
//! one table [`SERIES`] feeds both the page and the table in `docs/rest.md`
//! ([`metrics_markdown`]), so the two cannot drift apart.

use std::borrow::Cow;
use std::fmt::Write as _;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::operator::control::MetricsSnapshot;

/// The `Content-Type` of what [`render`] produces (the OpenMetrics text format, which
/// prometheus-client's encoder writes, ending with `# EOF`).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The prefix of every series name.
pub const PREFIX: &str = "oracle_cdc";

/// How a series reads its value from a snapshot. A counter only grows (its exposed name ends
/// in `_total`); a gauge goes up and down, and −1 marks "none" where the list says so.
#[derive(Clone, Copy)]
pub enum Read {
    Counter(fn(&MetricsSnapshot) -> u64),
    Gauge(fn(&MetricsSnapshot) -> i64),
}

impl std::fmt::Debug for Read {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl Read {
    /// The OpenMetrics type name.
    pub fn kind(&self) -> &'static str {
        match self {
            Read::Counter(_) => "counter",
            Read::Gauge(_) => "gauge",
        }
    }
}

/// One series of the page.
#[derive(Debug, Clone, Copy)]
pub struct Series {
    /// The name without the `oracle_cdc_` prefix and without the `_total` of a counter (the
    /// encoder adds it).
    pub name: &'static str,
    /// The HELP text, without a final full stop (the encoder adds one).
    pub help: &'static str,
    pub read: Read,
}

impl Series {
    /// The name as a scrape shows it: `oracle_cdc_rows_mined_total`.
    pub fn exposed_name(&self) -> String {
        match self.read {
            Read::Counter(_) => format!("{PREFIX}_{}_total", self.name),
            Read::Gauge(_) => format!("{PREFIX}_{}", self.name),
        }
    }
}

/// A gauge read from an unsigned field: no value the connector holds comes near `i64::MAX`,
/// and saturating keeps the page valid if one ever did.
fn gauge(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

const fn counter(
    name: &'static str,
    help: &'static str,
    read: fn(&MetricsSnapshot) -> u64,
) -> Series {
    Series {
        name,
        help,
        read: Read::Counter(read),
    }
}

const fn gauge_of(
    name: &'static str,
    help: &'static str,
    read: fn(&MetricsSnapshot) -> i64,
) -> Series {
    Series {
        name,
        help,
        read: Read::Gauge(read),
    }
}

/// Every series of `/metrics`, in the order of the connector's metrics list (alphabetical,
/// capture side first, then the Kafka side).
pub const SERIES: &[Series] = &[
    gauge_of(
        "buffer_heap_bytes",
        "Bytes of changes the transaction buffer holds in memory",
        |s| gauge(s.buffer.heap_bytes),
    ),
    gauge_of(
        "buffer_memory_max_bytes",
        "Heap budget of the transaction buffer (cdc.buffer.memory.max.bytes)",
        |s| gauge(s.buffer.memory_max_bytes),
    ),
    gauge_of(
        "buffered_events",
        "Changes held by open transactions, in memory or spilled",
        |s| gauge(s.buffer.buffered_events),
    ),
    counter(
        "decode_failures",
        "Rows whose SQL_REDO could not be decoded",
        |s| s.engine.decode_failures,
    ),
    counter(
        "lag_replays",
        "Mining steps mined again with a redo dictionary for rows older than a DDL",
        |s| s.engine.lag_replays,
    ),
    gauge_of(
        "journaled_transactions",
        "Open transactions journaled to the journal topic",
        |s| gauge(s.engine.journaled_transactions),
    ),
    counter(
        "journal_chunks",
        "Chunks of journaled transactions sent to the journal topic",
        |s| s.engine.journal_chunks,
    ),
    counter(
        "journal_tombstones",
        "Tombstones sent to the journal topic for chunks of transactions that ended",
        |s| s.engine.journal_tombstones,
    ),
    counter(
        "dlq_records",
        "Records written to the dead letter topic",
        |s| s.engine.dlq_records,
    ),
    counter(
        "events_applied",
        "Changes applied to open transactions in the buffer",
        |s| s.engine.events_applied,
    ),
    counter("heartbeats_sent", "Heartbeat records emitted", |s| {
        s.engine.heartbeats_sent
    }),
    gauge_of(
        "last_commit_timestamp_millis",
        "Commit time (ms since the epoch) of the last delivered Oracle transaction; -1 for none",
        |s| s.delivery.last_commit_timestamp_ms,
    ),
    gauge_of(
        "last_step_millis",
        "Duration of the last mining step in ms",
        |s| gauge(s.engine.last_step_ms),
    ),
    gauge_of(
        "millis_behind_source",
        "How far the last delivered commit is behind the wall clock in ms; -1 for none",
        |s| s.delivery.millis_behind_source,
    ),
    gauge_of(
        "mined_to_scn",
        "SCN up to which the redo has been mined",
        |s| gauge(s.engine.mined_to_scn),
    ),
    gauge_of(
        "oldest_open_scn",
        "Smallest first SCN of an open transaction; -1 for none",
        |s| s.buffer.oldest_open_scn.map_or(-1, |scn| gauge(scn.get())),
    ),
    gauge_of(
        "open_transactions",
        "Oracle transactions open in the buffer",
        |s| gauge(s.buffer.open_transactions),
    ),
    counter("ops_events", "Events written to the ops topic", |s| {
        s.engine.ops_events
    }),
    counter(
        "orphans_released",
        "Transactions released by orphan detection",
        |s| s.engine.orphans_released,
    ),
    gauge_of(
        "queue_depth",
        "Engine records waiting between the engine and the producer",
        |s| gauge(s.delivery.queue_depth),
    ),
    counter(
        "reconnects",
        "Database sessions reopened after a transient error",
        |s| s.engine.reconnects,
    ),
    counter(
        "rolled_back_transactions",
        "Oracle transactions that rolled back",
        |s| s.engine.rolled_back_transactions,
    ),
    gauge_of(
        "resume_log_age_seconds",
        "Age of the redo log holding the resume point (now minus its FIRST_TIME), in seconds; -1 when unknown",
        |s| s.engine.resume_log_age_ms.map_or(-1, |ms| gauge(ms / 1000)),
    ),
    gauge_of(
        "resume_log_is_oldest",
        "1 when the resume point needs the oldest redo log still available for its thread, else 0; -1 when unknown",
        |s| s.engine.resume_log_is_oldest.map_or(-1, i64::from),
    ),
    counter("rows_mined", "Rows read from V$LOGMNR_CONTENTS", |s| {
        s.engine.rows_mined
    }),
    gauge_of(
        "scn_lag",
        "Current SCN of the database minus the SCN mined to; -1 when unknown",
        |s| s.delivery.scn_lag,
    ),
    counter(
        "session_recycles",
        "LogMiner sessions restarted after cdc.mining.session.max.age.ms",
        |s| s.engine.session_recycles,
    ),
    counter(
        "snapshot_chunk_retries",
        "Snapshot chunk reads that failed and were read again (smaller after ORA-01555/08181)",
        |s| s.engine.snapshot.chunk_retries,
    ),
    gauge_of(
        "snapshot_chunks_pending",
        "Snapshot chunks read and not published yet",
        |s| gauge(s.engine.snapshot.chunks_pending),
    ),
    counter(
        "snapshot_chunks_published",
        "Snapshot chunks whose rows were published",
        |s| s.engine.snapshot.chunks_published,
    ),
    counter("snapshot_chunks_read", "Snapshot chunks read", |s| {
        s.engine.snapshot.chunks_read
    }),
    counter(
        "snapshot_rows_published",
        "Rows published by snapshots (op=r records)",
        |s| s.engine.snapshot.rows_published,
    ),
    gauge_of(
        "snapshot_tables_remaining",
        "Tables of the running snapshot not done yet",
        |s| gauge(s.engine.snapshot.tables_remaining),
    ),
    gauge_of(
        "spill_max_bytes",
        "Disk budget of the spill files (cdc.buffer.spill.max.bytes)",
        |s| gauge(s.buffer.spill_max_bytes),
    ),
    gauge_of("spilled_bytes", "Bytes in spill files", |s| {
        gauge(s.buffer.spilled_bytes)
    }),
    gauge_of(
        "spilled_transactions",
        "Open transactions whose changes are on disk",
        |s| gauge(s.buffer.spilled_transactions),
    ),
    counter(
        "step_cuts",
        "Mining steps ended early at a DDL that changes the captured set",
        |s| s.engine.step_cuts,
    ),
    counter(
        "pipelined_steps",
        "Mining steps decoded on a thread of their own while they were applied",
        |s| s.engine.pipelined_steps,
    ),
    counter(
        "step_retries",
        "Mining steps mined again from the same cursor after an error",
        |s| s.engine.step_retries,
    ),
    counter(
        "step_timeouts",
        "Mining steps cancelled at cdc.mining.query.timeout.ms",
        |s| s.engine.step_timeouts,
    ),
    counter("steps", "Mining steps run", |s| s.engine.steps),
    counter(
        "transactions_committed",
        "Oracle transactions committed and emitted",
        |s| s.engine.transactions_committed,
    ),
    counter(
        "transactions_discarded",
        "Transactions discarded by the age policy",
        |s| s.engine.transactions_discarded,
    ),
    counter(
        "transactions_skipped",
        "Committed transactions skipped on restart as already delivered",
        |s| s.engine.transactions_skipped,
    ),
    counter(
        "undone_events",
        "Changes removed by undo rows (rollback to savepoint)",
        |s| s.buffer.undone_events,
    ),
    counter(
        "unmatched_undo",
        "Undo rows that matched no buffered change",
        |s| s.buffer.unmatched_undo,
    ),
    gauge_of(
        "window_logs",
        "Logs the adaptive mining window covers per step",
        |s| gauge(s.engine.window_logs),
    ),
    counter(
        "records_sent",
        "Kafka records handed to the producer",
        |s| s.delivery.records_sent,
    ),
    counter(
        "records_acknowledged",
        "Kafka records acknowledged by the broker or held by a committed Kafka transaction",
        |s| s.delivery.records_acknowledged,
    ),
    counter(
        "bytes_sent",
        "Bytes of keys and values handed to the producer",
        |s| s.delivery.bytes_sent,
    ),
    counter(
        "kafka_transactions_committed",
        "Kafka transactions committed",
        |s| s.delivery.kafka_transactions_committed,
    ),
    counter(
        "kafka_transactions_aborted",
        "Kafka transactions aborted",
        |s| s.delivery.kafka_transactions_aborted,
    ),
    counter(
        "offsets_committed",
        "Offsets written to the offsets topic",
        |s| s.delivery.offsets_committed,
    ),
    counter(
        "split_transactions",
        "Oracle transactions split over several Kafka transactions",
        |s| s.delivery.split_transactions,
    ),
    counter(
        "records_already_delivered",
        "Kafka records mined again after an at-least-once restart and not sent, because they \
         were found in their topics",
        |s| s.delivery.records_already_delivered,
    ),
];

/// The OpenMetrics text of one snapshot, every series labelled `server="<prefix>"`.
pub fn render(snapshot: &MetricsSnapshot) -> String {
    let labels = [(
        Cow::Borrowed("server"),
        Cow::Owned(escape_label_value(&snapshot.server)),
    )];
    let mut registry = Registry::with_prefix_and_labels(PREFIX, labels.into_iter());
    for series in SERIES {
        match series.read {
            Read::Counter(read) => {
                registry.register(series.name, series.help, ConstCounter::new(read(snapshot)))
            }
            Read::Gauge(read) => {
                registry.register(series.name, series.help, ConstGauge::new(read(snapshot)))
            }
        }
    }
    let mut text = String::new();
    if encode(&mut text, &registry).is_err() {
        // Writing to a String cannot fail and every value is in range, so this is a bug in
        // the encoder; a partial page would be misread as zeros, so say so instead.
        tracing::error!("the metrics page could not be encoded");
        return "# EOF\n".to_owned();
    }
    text
}

/// Escapes a label value as the text format requires (the encoder writes it verbatim). A
/// topic prefix never holds these characters, but the page must stay parseable if one did.
fn escape_label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The metrics table of `docs/rest.md`, generated from [`SERIES`].
pub fn metrics_markdown() -> String {
    let mut out = String::new();
    out.push_str("| Series | Type | Meaning |\n");
    out.push_str("|---|---|---|\n");
    for series in SERIES {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            series.exposed_name(),
            series.read.kind(),
            series.help
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use cdc_buffer::BufferMetrics;
    use cdc_core::position::Scn;
    use cdc_logminer::engine::EngineMetrics;

    use super::*;
    use crate::operator::control::DeliveryMetrics;

    fn snapshot() -> MetricsSnapshot {
        MetricsSnapshot {
            server: "cdc".to_owned(),
            engine: EngineMetrics {
                rows_mined: 4711,
                steps: 12,
                mined_to_scn: 9_000_123,
                ..EngineMetrics::default()
            },
            buffer: BufferMetrics {
                open_transactions: 3,
                oldest_open_scn: Some(Scn(8_999_000)),
                ..BufferMetrics::default()
            },
            delivery: DeliveryMetrics {
                records_sent: 99,
                last_commit_timestamp_ms: -1,
                millis_behind_source: -1,
                scn_lag: 42,
                ..DeliveryMetrics::default()
            },
        }
    }

    /// A sample line of the text format: `name{labels} value`.
    struct Sample {
        name: String,
        labels: BTreeMap<String, String>,
        value: String,
    }

    /// Parses the sample lines back (comment lines skipped); fails on any line it cannot read,
    /// so a malformed page fails the test.
    fn parse(text: &str) -> Vec<Sample> {
        let mut samples = Vec::new();
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("no value: {line}"));
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (
                    name,
                    rest.strip_suffix('}')
                        .unwrap_or_else(|| panic!("unclosed labels: {line}")),
                ),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair
                        .split_once('=')
                        .unwrap_or_else(|| panic!("bad label: {line}"));
                    let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
                    (
                        key.to_owned(),
                        value
                            .unwrap_or_else(|| panic!("unquoted label: {line}"))
                            .to_owned(),
                    )
                })
                .collect();
            samples.push(Sample {
                name: name.to_owned(),
                labels,
                value: value.to_owned(),
            });
        }
        samples
    }

    fn value_of<'a>(samples: &'a [Sample], name: &str) -> &'a str {
        &samples
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .value
    }

    #[test]
    fn render_parses_back_with_the_values_and_the_server_label() {
        let text = render(&snapshot());
        assert!(text.ends_with("# EOF\n"), "{text}");
        let samples = parse(&text);
        assert_eq!(samples.len(), SERIES.len(), "{text}");
        for sample in &samples {
            assert_eq!(
                sample.labels.get("server").map(String::as_str),
                Some("cdc"),
                "{}",
                sample.name
            );
        }
        assert_eq!(value_of(&samples, "oracle_cdc_rows_mined_total"), "4711");
        assert_eq!(value_of(&samples, "oracle_cdc_steps_total"), "12");
        assert_eq!(value_of(&samples, "oracle_cdc_mined_to_scn"), "9000123");
        assert_eq!(value_of(&samples, "oracle_cdc_oldest_open_scn"), "8999000");
        assert_eq!(value_of(&samples, "oracle_cdc_open_transactions"), "3");
        assert_eq!(value_of(&samples, "oracle_cdc_records_sent_total"), "99");
        assert_eq!(
            value_of(&samples, "oracle_cdc_last_commit_timestamp_millis"),
            "-1"
        );
        assert_eq!(value_of(&samples, "oracle_cdc_scn_lag"), "42");
    }

    #[test]
    fn every_series_has_help_and_type() {
        let text = render(&snapshot());
        for series in SERIES {
            let family = format!("{PREFIX}_{}", series.name);
            assert!(
                text.contains(&format!("# HELP {family} {}.\n", series.help)),
                "{family}"
            );
            assert!(
                text.contains(&format!("# TYPE {family} {}\n", series.read.kind())),
                "{family}"
            );
            assert!(
                text.contains(&format!("\n{}{{server=\"cdc\"}} ", series.exposed_name())),
                "{family}"
            );
        }
    }

    #[test]
    fn no_open_transaction_is_minus_one() {
        let mut snapshot = snapshot();
        snapshot.buffer.oldest_open_scn = None;
        let samples = parse(&render(&snapshot));
        assert_eq!(value_of(&samples, "oracle_cdc_oldest_open_scn"), "-1");
    }

    #[test]
    fn the_redo_retention_gauges_are_minus_one_when_unknown() {
        let samples = parse(&render(&snapshot()));
        assert_eq!(
            value_of(&samples, "oracle_cdc_resume_log_age_seconds"),
            "-1"
        );
        assert_eq!(value_of(&samples, "oracle_cdc_resume_log_is_oldest"), "-1");
        let mut known = snapshot();
        known.engine.resume_log_age_ms = Some(7_200_999);
        known.engine.resume_log_is_oldest = Some(true);
        let samples = parse(&render(&known));
        assert_eq!(
            value_of(&samples, "oracle_cdc_resume_log_age_seconds"),
            "7200"
        );
        assert_eq!(value_of(&samples, "oracle_cdc_resume_log_is_oldest"), "1");
        known.engine.resume_log_is_oldest = Some(false);
        let samples = parse(&render(&known));
        assert_eq!(value_of(&samples, "oracle_cdc_resume_log_is_oldest"), "0");
    }

    #[test]
    fn series_names_are_unique_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for series in SERIES {
            assert!(seen.insert(series.name), "{} twice", series.name);
            assert!(
                series
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                series.name
            );
            assert!(
                !series.name.ends_with("_total"),
                "{}: the encoder adds _total",
                series.name
            );
            assert!(
                !series.help.ends_with('.'),
                "{}: the encoder adds the full stop",
                series.name
            );
        }
    }

    #[test]
    fn a_quote_in_the_server_label_is_escaped() {
        let mut snapshot = snapshot();
        snapshot.server = "a\"b\\c".to_owned();
        let text = render(&snapshot);
        assert!(
            text.contains(r#"oracle_cdc_steps_total{server="a\"b\\c"} 12"#),
            "{text}"
        );
    }

    const TABLE_START: &str =
        "<!-- metrics table: generated by cdc_connect_bridge::metrics::metrics_markdown() -->\n";
    const TABLE_END: &str = "<!-- end of metrics table -->\n";

    fn rest_doc() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/rest.md")
    }

    /// `docs/rest.md` holds the table between two markers; regenerate it with
    /// `CDC_BLESS=1 cargo test -p cdc-connect-bridge --lib metrics`.
    #[test]
    fn rest_doc_metrics_table_matches_the_series() {
        let path = rest_doc();
        let doc = std::fs::read_to_string(&path).unwrap();
        let start = doc.find(TABLE_START).expect("the start marker is missing") + TABLE_START.len();
        let end = start
            + doc[start..]
                .find(TABLE_END)
                .expect("the end marker is missing");
        let expected = metrics_markdown();
        if std::env::var_os("CDC_BLESS").is_some_and(|value| value == "1") {
            std::fs::write(&path, format!("{}{expected}{}", &doc[..start], &doc[end..])).unwrap();
            return;
        }
        assert!(
            doc[start..end] == expected,
            "the metrics table of {} is out of date. Regenerate it with\n    \
             CDC_BLESS=1 cargo test -p cdc-connect-bridge --lib metrics\nor paste:\n{expected}",
            path.display(),
        );
    }
}
