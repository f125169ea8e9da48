//! Buffers and commits one huge transaction and reports peak memory and spill throughput.
//!
//! ```text
//! cargo run --release -p cdc-buffer --example big_txn -- --events N --budget-mib B \
//!     [--payload-bytes P] [--dir DIR] [--drop-caches]
//! ```
//!
//! The transaction's changes are inserts of about `P` bytes of text each (default 1000). The
//! heap budget is `B` MiB, so once the transaction outgrows it, it spills and every later
//! change goes to its file. The write rate is the spill bytes over the whole append phase
//! (building, measuring, encoding and writing each change; the last buffered MiB included)
//! and again with the file's fsync added, which is what `dd … conv=fdatasync` measures. The
//! read rate is the spill bytes over the commit (every frame read, CRC-checked and decoded);
//! `--drop-caches` (root) empties the page cache first so the read comes from the disk.
//! Peak memory is the process's VmHWM.

// A command-line tool: it reports on stdout.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use cdc_buffer::{BufferSettings, TransactionBuffer, change_heap_bytes};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{
    ChangeEvent, ConId, ConXid, Decimal, OracleDateTime, RedoAddr, RsId, Scn, TableId, Value, Xid,
};

struct Args {
    events: u64,
    budget_mib: u64,
    payload_bytes: usize,
    dir: PathBuf,
    drop_caches: bool,
}

fn parse_args() -> Result<Args, Box<dyn Error>> {
    let mut args = Args {
        events: 1_000_000,
        budget_mib: 256,
        payload_bytes: 1000,
        dir: BufferSettings::default_spill_dir("big_txn"),
        drop_caches: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--events" => args.events = value()?.parse()?,
            "--budget-mib" => args.budget_mib = value()?.parse()?,
            "--payload-bytes" => args.payload_bytes = value()?.parse()?,
            "--dir" => args.dir = PathBuf::from(value()?),
            "--drop-caches" => args.drop_caches = true,
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: big_txn --events N --budget-mib B \
                     [--payload-bytes P] [--dir DIR] [--drop-caches]"
                )
                .into());
            }
        }
    }
    Ok(args)
}

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn rate(bytes: u64, seconds: f64) -> f64 {
    mib(bytes) / seconds
}

fn template(payload_bytes: usize) -> Result<ChangeEvent, Box<dyn Error>> {
    let when = OracleDateTime::new(2026, 2, 28, 13, 45, 59, 123_456_000).ok_or("bad date")?;
    Ok(ChangeEvent {
        scn: Scn(0),
        addr: RedoAddr::new(RsId::new(1, 1, 16), 1)?,
        change: RowChange {
            op: ChangeOp::Insert,
            table: TableId::new("APP", "BIG_TXN").into(),
            schema_version: 1,
            before: None,
            after: Some(vec![
                ColumnValue {
                    column: 0,
                    value: Value::Number(Decimal::ZERO),
                },
                ColumnValue {
                    column: 1,
                    value: Value::Text("x".repeat(payload_bytes)),
                },
                ColumnValue {
                    column: 2,
                    value: Value::Timestamp(when),
                },
                ColumnValue {
                    column: 3,
                    value: Value::Raw(vec![0xab; 16]),
                },
            ]),
            row_id: None,
        },
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let settings = BufferSettings {
        memory_max_bytes: args.budget_mib << 20,
        spill_dir: args.dir.clone(),
        spill_max_bytes: u64::MAX,
    };
    let mut buffer = TransactionBuffer::open(settings)?;
    let key = ConXid::new(ConId(3), Xid::new(5, 12, 900));
    let template = template(args.payload_bytes)?;
    let baseline_kib = status_kib("VmRSS:").unwrap_or(0);

    let started = Instant::now();
    let mut heap_measure = 0u64;
    for n in 0..args.events {
        let mut event = template.clone();
        event.scn = Scn(1_000_000 + n);
        event.addr = RedoAddr::new(
            RsId::new(1 + (n >> 20) as u32, (n & 0xfffff) as u32 + 1, 16),
            n,
        )?;
        if let Some(after) = event.change.after.as_mut() {
            after[0].value = Value::Number(Decimal::new(i128::from(n), 0));
        }
        event.change.row_id = Some(format!("AAAR3sAAEAA{n:07}"));
        heap_measure += change_heap_bytes(&event);
        buffer.append(key, event)?;
    }
    let append_s = started.elapsed().as_secs_f64();
    let metrics = buffer.metrics();
    let view = buffer.transaction(key).ok_or("the transaction vanished")?;
    let spill_path = view.spill_path().map(PathBuf::from);
    let disk_bytes = view.disk_bytes();
    let sync_s = match &spill_path {
        Some(path) => {
            let t = Instant::now();
            std::fs::File::open(path)?.sync_all()?;
            t.elapsed().as_secs_f64()
        }
        None => 0.0,
    };
    let peak_after_append_kib = status_kib("VmHWM:").unwrap_or(0);
    if args.drop_caches {
        // Everything is synced above; dropping the cache makes the read-back come from disk.
        std::fs::write("/proc/sys/vm/drop_caches", "3\n")
            .map_err(|e| format!("--drop-caches needs root: {e}"))?;
    }

    let started = Instant::now();
    let mut committed = buffer.commit(key)?.ok_or("nothing to commit")?;
    let event_count = committed.event_count();
    let mut read = 0u64;
    while let Some(event) = committed.next_change()? {
        // the changes come back complete and in redo order
        if event.scn != Scn(1_000_000 + read) {
            return Err(format!("change {read} came back as SCN {}", event.scn).into());
        }
        read += 1;
    }
    committed.finish()?;
    let read_s = started.elapsed().as_secs_f64();
    if read != args.events || event_count != args.events {
        return Err(format!("read {read} of {} changes", args.events).into());
    }
    let file_gone = spill_path.as_ref().is_none_or(|p| !p.exists());

    let peak_kib = status_kib("VmHWM:").unwrap_or(0);
    println!("events                 {}", args.events);
    println!(
        "payload per change     {} bytes of text",
        args.payload_bytes
    );
    println!("heap budget            {} MiB", args.budget_mib);
    println!("transaction (heap measure) {:.1} MiB", mib(heap_measure));
    println!(
        "spill file             {:.1} MiB ({} spills)",
        mib(disk_bytes),
        metrics.spills
    );
    println!("heap after appends     {:.1} MiB", mib(metrics.heap_bytes));
    println!(
        "append phase           {append_s:.2} s  -> {:.0} MiB/s spill write",
        rate(disk_bytes, append_s)
    );
    println!(
        "fsync                  {sync_s:.2} s  -> {:.0} MiB/s write incl. fsync",
        rate(disk_bytes, append_s + sync_s)
    );
    println!(
        "commit read-back       {read_s:.2} s  -> {:.0} MiB/s spill read{}",
        rate(disk_bytes, read_s),
        if args.drop_caches {
            " (page cache dropped)"
        } else {
            ""
        }
    );
    println!(
        "write+read             {:.0} MiB/s (both phases, fsync included)",
        rate(2 * disk_bytes, append_s + sync_s + read_s)
    );
    println!(
        "baseline RSS           {:.1} MiB",
        baseline_kib as f64 / 1024.0
    );
    println!(
        "peak RSS after appends {:.1} MiB",
        peak_after_append_kib as f64 / 1024.0
    );
    println!("peak RSS (VmHWM)       {:.1} MiB", peak_kib as f64 / 1024.0);
    println!("spill file deleted     {file_gone}");
    Ok(())
}
