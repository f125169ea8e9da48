//! `cargo x bench journal`: a restart with 1 000 journaled open transactions of 1 000 changes
//! each (a million changes) read back from the journal topic.
//!
//! 1. The bench journals the transactions (the writer's rules over a real buffer, as the engine
//!    does) and writes their chunks to a new compacted topic on `--bootstrap`, in the JSON the
//!    worker writes (with the schema envelope, Kafka Connect's default).
//! 2. It starts itself again as a fresh process (`--read`), which opens a buffer with the
//!    default budget (256 MiB) and rebuilds the transactions from the topic, as a task start
//!    does before mining: the time from that process's start to the end of the rebuild, and
//!    its peak RSS (VmHWM), are what it measures, three times.
//!
//! Target (issue 26): under 2 s, RSS within the buffer budget plus 64 MiB. Without a broker
//! (`--bootstrap` missing) it rebuilds from the in-process store and reports the time only.
//!
//! Run: `cargo x bench journal` (starts a Tansu), or
//! `cargo bench -p cdc-journal --bench rebuild -- --bootstrap HOST:PORT`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::process::Command;
use std::time::{Duration, Instant};

use cdc_buffer::{BufferSettings, TransactionBuffer};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{ChangeEvent, ConId, ConXid, Decimal, RedoAddr, RsId, Scn, TableId, Value, Xid};
use cdc_journal::kafka::KafkaJournal;
use cdc_journal::{
    EncodedRecord, JournalConverter, JournalSettings, JournalStore, JournalWriter, MemoryJournal,
    RebuildFrom, rebuild,
};
use cdc_offset::rules::JournalRule;
use cdc_offset::{DbIdentity, Position, ResumePoint};

const TRANSACTIONS: u32 = 1_000;
const CHANGES: u64 = 1_000;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn key(n: u32) -> ConXid {
    ConXid::new(
        ConId(0),
        Xid::new((n % 10 + 1) as u16, (n / 10 % 32) as u16, 600 + n / 320),
    )
}

/// The k-th change of transaction `n`: an update of a row of 6 columns, as an order line. The
/// transactions' changes interleave in the redo, one round of every transaction after another.
fn change(n: u32, k: u64) -> ChangeEvent {
    let seq = k * u64::from(TRANSACTIONS) + u64::from(n);
    let addr = RedoAddr::new(
        RsId::new(1 + (seq / 50_000) as u32, (seq % 50_000) as u32 + 1, 16),
        k,
    )
    .unwrap();
    let image = |v: u64| {
        Some(vec![
            ColumnValue {
                column: 0,
                value: Value::Number(Decimal::try_new(i128::from(seq), 0).unwrap()),
            },
            ColumnValue {
                column: 1,
                value: Value::Number(Decimal::try_new(i128::from(v * 37), 2).unwrap()),
            },
            ColumnValue {
                column: 2,
                value: Value::Text(format!("line {seq} of order {n}")),
            },
            ColumnValue {
                column: 3,
                value: Value::Text("SHIPPED".into()),
            },
            ColumnValue {
                column: 4,
                value: Value::Number(Decimal::try_new(i128::from(k), 0).unwrap()),
            },
            ColumnValue {
                column: 5,
                value: Value::Raw(vec![0xab; 16]),
            },
        ])
    };
    ChangeEvent {
        scn: Scn(1_000_000 + seq),
        addr,
        change: RowChange {
            op: ChangeOp::Update,
            table: TableId::new("APP", "ORDER_LINES").into(),
            schema_version: 1,
            before: image(k),
            after: image(k + 1),
            row_id: Some(format!("AAAR3sAAEAAAACX{:03}", k % 1000)),
        },
    }
}

/// Journals the transactions and returns their chunk records, as the worker writes them.
fn chunks(spill: &std::path::Path) -> Vec<EncodedRecord> {
    let mut buffer = TransactionBuffer::open(BufferSettings {
        memory_max_bytes: 256 << 20,
        spill_dir: spill.to_owned(),
        spill_max_bytes: 64 << 30,
    })
    .unwrap();
    let mut writer = JournalWriter::new(JournalSettings::new("bench"), 1);
    let mut out = Vec::new();
    for c in 0..CHANGES {
        for n in 0..TRANSACTIONS {
            buffer.append(key(n), change(n, c)).unwrap();
        }
    }
    for n in 0..TRANSACTIONS {
        let k = key(n);
        while let Some((record, mark)) = writer.next_chunk(&mut buffer, k).unwrap() {
            buffer.mark_journaled(k, mark);
            out.push(EncodedRecord::of(&record, true));
        }
        buffer.rollback(k).unwrap();
    }
    out
}

/// A restart's position: the hold of the transaction whose journal ends first (the last change
/// of transaction 0), as the resume rule makes it; the frames before it are used, the last
/// round is mined again.
fn rule() -> (JournalRule, RedoAddr) {
    let start = change(0, CHANGES - 1).addr;
    let mut position = Position::new(
        ResumePoint::from_scn(Scn(900_000_000)),
        DbIdentity::new(1, Scn(1)),
        1,
    );
    position.journal_generation = 1;
    (JournalRule::new(&position, start), start)
}

fn rebuild_from(store: &mut dyn JournalStore, spill: &std::path::Path) -> (usize, u64) {
    let mut buffer = TransactionBuffer::open(BufferSettings {
        memory_max_bytes: 256 << 20,
        spill_dir: spill.to_owned(),
        spill_max_bytes: 64 << 30,
    })
    .unwrap();
    let mut writer = JournalWriter::new(JournalSettings::new("bench"), 2);
    let (rule, start) = rule();
    let rebuilt = rebuild(
        store,
        RebuildFrom {
            server: "bench",
            converter: JournalConverter::Tolerant,
            rule: Some(&rule),
            mining_start: start,
            load_dir: spill,
        },
        &mut buffer,
        &mut writer,
    )
    .unwrap();
    assert_eq!(rebuilt.transactions.len() as u32, TRANSACTIONS);
    assert_eq!(rebuilt.frames_kept, u64::from(TRANSACTIONS) * (CHANGES - 1));
    // the frames went from the journal to the spill files, never through the heap
    assert_eq!(buffer.metrics().peak_heap_bytes, 0);
    (rebuilt.transactions.len(), rebuilt.frames_kept)
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The child: a fresh process that rebuilds from the topic and says how long and how much.
fn read(bootstrap: &str, topic: &str) {
    let started = Instant::now();
    let spill = tempfile::tempdir().unwrap();
    let mut store = KafkaJournal::new(bootstrap, &[], topic)
        .unwrap()
        .with_timeout(Duration::from_secs(60));
    let (transactions, frames) = rebuild_from(&mut store, spill.path());
    println!(
        "read {} {} {transactions} {frames}",
        started.elapsed().as_secs_f64(),
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if arg("--read").is_some() {
        let bootstrap = arg("--bootstrap").expect("--bootstrap");
        read(&bootstrap, &arg("--read").unwrap());
        return;
    }
    let spill = tempfile::tempdir().unwrap();
    let made = Instant::now();
    let records = chunks(spill.path());
    let bytes: usize = records
        .iter()
        .map(|r| r.key.len() + r.value.as_ref().map_or(0, Vec::len))
        .sum();
    println!(
        "journal: {TRANSACTIONS} transactions × {CHANGES} changes in {} chunks, {:.1} MiB of JSON ({:.1} s to journal)",
        records.len(),
        bytes as f64 / (1 << 20) as f64,
        made.elapsed().as_secs_f64()
    );
    let Some(bootstrap) = arg("--bootstrap") else {
        let mut store = MemoryJournal::new();
        store.write(&records).unwrap();
        let mut times = Vec::new();
        for _ in 0..3 {
            let started = Instant::now();
            rebuild_from(&mut store, spill.path());
            times.push(started.elapsed().as_secs_f64());
        }
        println!(
            "rebuild from the in-process store: median {:.3} s of {times:.3?} (no broker: --bootstrap)",
            median(&times)
        );
        return;
    };
    let topic = format!(
        "bench-journal-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    cdc_journal::kafka::create_compacted_topic(&bootstrap, &[], &topic, 1).unwrap();
    let mut store = KafkaJournal::new(&bootstrap, &[], &topic)
        .unwrap()
        .with_timeout(Duration::from_secs(120));
    let written = Instant::now();
    for batch in records.chunks(50) {
        store.write(batch).unwrap();
    }
    println!(
        "written to {topic} in {:.1} s",
        written.elapsed().as_secs_f64()
    );
    drop(records);
    let exe = std::env::current_exe().unwrap();
    let (mut times, mut rss) = (Vec::new(), Vec::new());
    for run in 0..3 {
        let started = Instant::now();
        let out = Command::new(&exe)
            .args(["--bootstrap", &bootstrap, "--read", &topic])
            .output()
            .unwrap();
        let spawned = started.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("read "))
            .unwrap_or_else(|| {
                panic!(
                    "the reader failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        let fields: Vec<&str> = line.split_whitespace().collect();
        let seconds: f64 = fields[1].parse().unwrap();
        let mib: f64 = fields[2].parse().unwrap();
        println!(
            "run {run}: rebuilt {} transactions, {} changes in {seconds:.3} s from process start ({spawned:.3} s with the spawn), peak RSS {mib:.0} MiB",
            fields[3], fields[4]
        );
        times.push(seconds);
        rss.push(mib);
    }
    println!(
        "rebuild of {TRANSACTIONS} × {CHANGES}: median {:.3} s (target < 2 s), peak RSS median {:.0} MiB (target ≤ 256 + 64 MiB)",
        median(&times),
        median(&rss)
    );
}
