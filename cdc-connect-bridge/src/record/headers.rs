//! Record headers of changes and their tombstones.
//!
//! Values are UTF-8 text as Kafka Connect's `SimpleHeaderConverter` writes them: numbers in
//! decimal, booleans `true`/`false`, strings as they are.
//!
//! | header | Connect type | value |
//! |---|---|---|
//! | `cdc.scn` | int64 | SCN of the change |
//! | `cdc.commit_scn` | int64 | SCN of its COMMIT |
//! | `cdc.xid` | string | `con:usn.slot.sqn` |
//! | `cdc.event_index` | int32 | 0-based index of the change in its transaction |
//! | `cdc.event_count` | int32 | changes the transaction publishes |
//! | `cdc.schema_version` | int32 | table schema version the change was decoded with |
//! | `cdc.split` | boolean | `true`, only on records of a split Oracle transaction |
//!
//! A snapshot row (`op=r`) carries `cdc.scn` (the SCN its chunk was read as of),
//! `cdc.snapshot` (`true`) and `cdc.schema_version`.

use cdc_logminer::engine::{ChangeRecord, SnapshotRecord};

use crate::record::{json, text};

pub const SCN: &str = "cdc.scn";
pub const COMMIT_SCN: &str = "cdc.commit_scn";
pub const XID: &str = "cdc.xid";
pub const EVENT_INDEX: &str = "cdc.event_index";
pub const EVENT_COUNT: &str = "cdc.event_count";
pub const SCHEMA_VERSION: &str = "cdc.schema_version";
pub const SPLIT: &str = "cdc.split";
pub const SNAPSHOT: &str = "cdc.snapshot";

/// One record header: a name and its value bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: &'static str,
    pub value: Vec<u8>,
}

impl Header {
    fn number(name: &'static str, value: u64) -> Header {
        let mut text = Vec::with_capacity(20);
        json::push_u64(&mut text, value);
        Header { name, value: text }
    }
}

/// The headers of a change's records. `split`: the bridge delivers this Oracle transaction
/// over several Kafka transactions.
pub fn change_headers(change: &ChangeRecord, split: bool) -> Vec<Header> {
    let mut headers = Vec::with_capacity(7);
    headers.push(Header::number(SCN, change.event.scn.0));
    headers.push(Header::number(COMMIT_SCN, change.commit.commit_scn.0));
    let mut xid = Vec::with_capacity(32);
    text::push_con_xid(&mut xid, change.commit.con_xid);
    headers.push(Header {
        name: XID,
        value: xid,
    });
    headers.push(Header::number(EVENT_INDEX, change.event_index));
    headers.push(Header::number(EVENT_COUNT, change.commit.event_count));
    headers.push(Header::number(
        SCHEMA_VERSION,
        u64::from(change.event.change.schema_version),
    ));
    if split {
        headers.push(Header {
            name: SPLIT,
            value: b"true".to_vec(),
        });
    }
    headers
}

/// The headers of a snapshot row's records.
pub fn snapshot_headers(row: &SnapshotRecord) -> Vec<Header> {
    vec![
        Header::number(SCN, row.scn.0),
        Header {
            name: SNAPSHOT,
            value: b"true".to_vec(),
        },
        Header::number(SCHEMA_VERSION, u64::from(row.layout.version)),
    ]
}
