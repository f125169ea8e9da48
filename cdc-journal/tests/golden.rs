//! Golden tests of the journal's record format (version 1): a key and a chunk, in the JSON a
//! worker writes with and without the schema envelope, pinned by files; a chunk from before
//! the optional heap undo fields still reads; every converter reads back what it should and
//! refuses what it should; any chunk metadata round-trips.
//!
//! To write the files: `CDC_BLESS=1 cargo test -p cdc-journal --test main golden`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use cdc_buffer::UndoRecord;
use cdc_buffer::codec::{FrameRef, append_frame};
use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{ChangeEvent, ConId, ConXid, Decimal, RedoAddr, RsId, Scn, TableId, Value, Xid};
use cdc_journal::format::{chunk_json, key_json, read_payload};
use cdc_journal::{Chunk, ChunkMeta, JournalConverter, JournalKey, PayloadBuilder};
use cdc_offset::RedoMark;
use proptest::prelude::*;

fn addr(seq: u32, block: u32, offset: u16, ssn: u64) -> RedoAddr {
    RedoAddr::new(RsId::new(seq, block, offset), ssn).unwrap()
}

fn key() -> JournalKey {
    JournalKey {
        server: "orders".into(),
        tx: ConXid::new(ConId(3), Xid::new(5, 12, 900)),
        chunk: 2,
        generation: 7,
    }
}

/// A chunk of two frames: a change and an undo row.
fn chunk() -> Chunk {
    let change = ChangeEvent {
        scn: Scn(4_711_000),
        addr: addr(0x59, 0xd6a1, 0x10, 3),
        change: RowChange {
            op: ChangeOp::Insert,
            table: TableId::new("APP", "ORDERS").in_pdb("FREEPDB1").into(),
            schema_version: 2,
            before: None,
            after: Some(vec![
                ColumnValue {
                    column: 0,
                    value: Value::Number(Decimal::parse("42").unwrap()),
                },
                ColumnValue {
                    column: 1,
                    value: Value::Text("Zürich ✓".into()),
                },
            ]),
            row_id: Some("AAAR3sAAEAAAACXAAA".into()),
        },
    };
    let undo = UndoRecord {
        scn: Scn(4_711_002),
        addr: addr(0x59, 0xd6a2, 0x1c, 4),
        row_id: "AAAR3sAAEAAAACXAAA".into(),
    };
    let mut payload = PayloadBuilder::new();
    append_frame(FrameRef::Change(&change), payload.frames_mut());
    payload.counted();
    append_frame(FrameRef::Undo(&undo), payload.frames_mut());
    payload.counted();
    Chunk {
        meta: ChunkMeta {
            first: RedoMark::new(change.addr, change.scn),
            last: RedoMark::new(undo.addr, undo.scn),
            first_captured: Some(RedoMark::new(addr(0x58, 0x10, 0x10, 0), Scn(4_700_000))),
            events: 1,
            undos: 1,
            start_scn: Some(Scn(4_699_990)),
            start_addr: Some(addr(0x58, 0x0f, 0x1d0, 0)),
            thread: 1,
            username: Some("APP".into()),
            client_id: Some("batch-7".into()),
            heap_undo: Some(RedoMark::new(addr(0x58, 0x11, 0x1c, 1), Scn(4_700_001))),
        },
        payload: payload.finish(),
    }
}

fn golden(name: &str, bytes: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    // one JSON document per file, pretty for review; compared as JSON values
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&text).unwrap())
            .unwrap()
            + "\n";
    if std::env::var_os("CDC_BLESS").is_some() {
        std::fs::write(&path, &pretty).unwrap();
    }
    let stored = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (CDC_BLESS=1 writes it)", path.display()));
    assert_eq!(
        pretty,
        stored,
        "{} differs from the encoding: version 1 of the journal format changed",
        path.display()
    );
}

#[test]
fn the_key_and_the_chunk_are_pinned_with_and_without_the_envelope() {
    golden("key_v1.json", &key_json(&key(), false));
    golden("key_v1.envelope.json", &key_json(&key(), true));
    golden("chunk_v1.json", &chunk_json(&chunk(), false));
    golden("chunk_v1.envelope.json", &chunk_json(&chunk(), true));
}

#[test]
fn a_chunk_without_the_heap_undo_fields_reads_as_one_without_a_heap_undo_row() {
    let mut expected = chunk();
    expected.meta.heap_undo = None;
    for envelope in [false, true] {
        // the form written before the optional fields were added: no field, no schema entry
        let mut value: serde_json::Value =
            serde_json::from_slice(&chunk_json(&chunk(), envelope)).unwrap();
        let fields = if envelope {
            let schema = value["schema"]["fields"].as_array_mut().unwrap();
            schema.retain(|f| !f["field"].as_str().unwrap().starts_with("heap_undo"));
            &mut value["payload"]
        } else {
            &mut value
        };
        let fields = fields.as_object_mut().unwrap();
        for name in ["heap_undo_scn", "heap_undo_rs_id", "heap_undo_ssn"] {
            assert!(fields.remove(name).is_some(), "{name}");
        }
        let bytes = serde_json::to_vec(&value).unwrap();
        assert_eq!(
            JournalConverter::Tolerant.chunk(&bytes).unwrap(),
            expected,
            "envelope {envelope}"
        );
        // and null fields are none
        assert_eq!(
            JournalConverter::Tolerant
                .chunk(&chunk_json(&expected, envelope))
                .unwrap(),
            expected
        );
    }
}

#[test]
fn converters_read_what_they_should_and_refuse_the_rest() {
    let plain = JournalConverter::Json {
        schemas_enable: false,
    };
    let enveloped = JournalConverter::Json {
        schemas_enable: true,
    };
    for envelope in [false, true] {
        let k = key_json(&key(), envelope);
        let c = chunk_json(&chunk(), envelope);
        assert_eq!(JournalConverter::Tolerant.key(&k).unwrap(), key());
        assert_eq!(JournalConverter::Tolerant.chunk(&c).unwrap(), chunk());
        let strict = if envelope { enveloped } else { plain };
        let other = if envelope { plain } else { enveloped };
        assert_eq!(strict.key(&k).unwrap(), key());
        assert_eq!(strict.chunk(&c).unwrap(), chunk());
        assert!(other.key(&k).is_err(), "{other:?} reads {envelope}");
        assert!(other.chunk(&c).is_err(), "{other:?} reads {envelope}");
    }
    // the payload's frames: a change and an undo row, CRCs checked
    let mut kinds = Vec::new();
    let count = read_payload(&chunk().payload, |head, _| {
        kinds.push(head.kind);
        Ok(())
    })
    .unwrap();
    assert_eq!((count, kinds), (2, vec![1, 2]));
    // the configuration's converters
    let config = |pairs: &[(&str, &str)]| {
        let mut config = cdc_core::config::Config::from_pairs([
            ("name", "journal-test"),
            ("cdc.source", "sim"),
            ("cdc.topic.prefix", "shop"),
            ("cdc.tables.include", ".*"),
        ]);
        for (k, v) in pairs {
            config.set(*k, *v);
        }
        JournalConverter::from_config(&config.validate().unwrap())
    };
    assert_eq!(config(&[]), JournalConverter::Tolerant);
    let json = "org.apache.kafka.connect.json.JsonConverter";
    assert_eq!(config(&[("cdc.journal.converter", json)]), enveloped);
    assert_eq!(
        config(&[
            ("cdc.journal.converter", json),
            ("cdc.journal.converter.schemas.enable", "false")
        ]),
        plain
    );
    let mut refused = cdc_core::config::Config::from_pairs([
        ("name", "journal-test"),
        ("cdc.source", "sim"),
        ("cdc.tables.include", ".*"),
        (
            "cdc.journal.converter",
            "io.confluent.connect.avro.AvroConverter",
        ),
    ]);
    refused.set("cdc.topic.prefix", "shop");
    let errors = refused.validate().unwrap_err().to_string();
    assert!(
        errors.contains("cdc.journal.converter") && errors.contains("TolerantJsonConverter"),
        "{errors}"
    );
}

#[test]
fn damaged_or_foreign_values_are_errors() {
    let c = String::from_utf8(chunk_json(&chunk(), false)).unwrap();
    let t = JournalConverter::Tolerant;
    let cases = [
        ("not json", "{".to_owned()),
        ("an array", "[1]".to_owned()),
        ("a newer version", c.replace("\"v\":1", "\"v\":2")),
        (
            "a heap undo row without its address",
            c.replace("\"heap_undo_rs_id\"", "\"heap_undo_rsid\""),
        ),
        ("no payload", c.replace("\"payload\"", "\"payloads\"")),
        ("bad base64", c.replace("\"payload\":\"", "\"payload\":\"!")),
        ("a bad rs_id", c.replace("0x000059", "0xzz0059")),
        (
            "a negative count",
            c.replace("\"events\":1", "\"events\":-1"),
        ),
    ];
    for (what, text) in cases {
        assert!(t.chunk(text.as_bytes()).is_err(), "{what}: {text}");
    }
    // a payload whose frame count disagrees, or a frame whose CRC fails
    let mut short = chunk();
    short.payload[0] = 3;
    assert!(read_payload(&short.payload, |_, _| Ok(())).is_err());
    let mut flipped = chunk();
    let last = flipped.payload.len() - 1;
    flipped.payload[last] ^= 0x40;
    assert!(read_payload(&flipped.payload, |_, _| Ok(())).is_err());
    assert!(t.key(b"{\"server\":\"s\"}").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Any chunk's metadata and payload bytes come back as written, in both forms.
    #[test]
    fn chunks_round_trip(
        scns in proptest::array::uniform4(0u64..i64::MAX as u64),
        seqs in proptest::array::uniform4(1u32..0xff_ffff),
        counts in (0u64..1 << 40, 0u64..1 << 40),
        start in proptest::option::of(0u64..1 << 50),
        heap_undo: bool,
        names in (proptest::option::of("[a-zA-Z0-9_ äß✓\"\\\\]{0,12}"),
                  proptest::option::of("[ -~]{0,12}")),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        envelope: bool,
        xid in (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>()),
        chunk_no: u32,
        generation in 0u64..i64::MAX as u64,
    ) {
        let mark = |i: usize| RedoMark::new(addr(seqs[i], seqs[(i + 1) % 4], seqs[i] as u16, scns[i] % 1000), Scn(scns[i]));
        let chunk = Chunk {
            meta: ChunkMeta {
                first: mark(0),
                last: mark(1),
                first_captured: start.map(|_| mark(2)),
                events: counts.0,
                undos: counts.1,
                start_scn: start.map(Scn),
                start_addr: start.map(|_| mark(3).addr),
                thread: 1,
                username: names.0.clone(),
                client_id: names.1.clone(),
                heap_undo: heap_undo.then(|| mark(3)),
            },
            payload,
        };
        let bytes = chunk_json(&chunk, envelope);
        prop_assert_eq!(JournalConverter::Tolerant.chunk(&bytes).unwrap(), chunk);
        let key = JournalKey {
            server: "srv".into(),
            tx: ConXid::new(ConId(xid.3), Xid::new(xid.0, xid.1, xid.2)),
            chunk: chunk_no,
            generation,
        };
        prop_assert_eq!(JournalConverter::Tolerant.key(&key_json(&key, envelope)).unwrap(), key);
    }
}
