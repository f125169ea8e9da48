//! Positions in the redo stream and the identifiers that key transactions.
//!
//! Each meaning has its own newtype so that an SCN and a redo address never convert silently
//! into one another. Every position derives `Ord`; the derived order depends on field order,
//! which `tests::field_order_is_redo_order` pins.
//!
//! ```text
//!   SCN            -- chooses logs (Scn)
//!   RS_ID + SSN    -- the cursor: redo byte address, append-only order (RedoAddr)
//!   USN.SLOT.SQN   -- the transaction, unique per container (Xid, ConXid)
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a position or identifier could not be read from its text form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("malformed RS_ID {text:?}: {reason}")]
    RsId { text: String, reason: &'static str },
    #[error("malformed XID {text:?}: {reason}")]
    Xid { text: String, reason: &'static str },
    #[error("the all-zero RS_ID is no redo address and cannot be used as a position")]
    NoAddress,
}

/// A system change number.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Scn(pub u64);

impl Scn {
    pub const ZERO: Scn = Scn(0);

    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Scn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// LogMiner's record set id: the redo byte address (log sequence, block, byte offset) of the
/// redo record that produced a row.
///
/// Text form: `' 0x' + hex6(seq) + '.' + hex8(block) + '.' + hex4(offset) + ' '`. Parsing accepts
/// the surrounding blanks or not and hex digits in either case. The all-zero value is what
/// Oracle writes on some ROLLBACK rows; it is "no address" ([`RsId::is_none`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RsId {
    /// RBASQN: the log sequence number.
    pub seq: u32,
    /// RBABLK: the block within the log.
    pub block: u32,
    /// RBABYTE: the byte offset within the block.
    pub offset: u16,
}

impl RsId {
    pub const NONE: RsId = RsId {
        seq: 0,
        block: 0,
        offset: 0,
    };

    pub fn new(seq: u32, block: u32, offset: u16) -> RsId {
        RsId { seq, block, offset }
    }

    /// True for the all-zero RS_ID, which is not an address.
    pub fn is_none(self) -> bool {
        self == RsId::NONE
    }

    /// Reads LogMiner's text form, e.g. `" 0x000059.0000d6a1.0010 "`.
    pub fn parse(text: &str) -> Result<RsId, PositionError> {
        let err = |reason| PositionError::RsId {
            text: text.to_owned(),
            reason,
        };
        let body = text.trim_matches(' ');
        let body = body
            .strip_prefix("0x")
            .or_else(|| body.strip_prefix("0X"))
            .ok_or_else(|| err("expected the 0x prefix"))?;
        let mut parts = body.split('.');
        let (Some(seq), Some(block), Some(offset), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err("expected three dot-separated hex parts"));
        };
        let seq = parse_hex(seq, 8).ok_or_else(|| err("log sequence is not 1-8 hex digits"))?;
        let block = parse_hex(block, 8).ok_or_else(|| err("block is not 1-8 hex digits"))?;
        let offset =
            parse_hex(offset, 4).ok_or_else(|| err("byte offset is not 1-4 hex digits"))?;
        Ok(RsId {
            seq,
            block,
            offset: offset as u16,
        })
    }
}

fn parse_hex(text: &str, max_digits: usize) -> Option<u32> {
    if text.is_empty() || text.len() > max_digits || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// LogMiner's padded text form, lowercase hex.
impl fmt::Display for RsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            " 0x{:06x}.{:08x}.{:04x} ",
            self.seq, self.block, self.offset
        )
    }
}

impl FromStr for RsId {
    type Err = PositionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RsId::parse(s)
    }
}

impl Serialize for RsId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RsId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        RsId::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A redo byte address: (RS_ID, SSN). Its derived `Ord` is redo order, the order in which the
/// append-only log holds the rows. This is the cursor between steps and in the offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RedoAddr {
    rs_id: RsId,
    ssn: u64,
}

impl RedoAddr {
    /// A redo address; the all-zero RS_ID is refused because it is no address.
    pub fn new(rs_id: RsId, ssn: u64) -> Result<RedoAddr, PositionError> {
        if rs_id.is_none() {
            return Err(PositionError::NoAddress);
        }
        Ok(RedoAddr { rs_id, ssn })
    }

    /// The address before every real one: mining "after" it starts at the log's beginning.
    pub const MIN: RedoAddr = RedoAddr {
        rs_id: RsId::NONE,
        ssn: 0,
    };

    pub fn rs_id(self) -> RsId {
        self.rs_id
    }

    pub fn ssn(self) -> u64 {
        self.ssn
    }

    /// The log sequence holding this address.
    pub fn log_seq(self) -> u32 {
        self.rs_id.seq
    }
}

impl fmt::Display for RedoAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.rs_id.to_string().trim(), self.ssn)
    }
}

/// A container id (CON_ID / SRC_CON_ID). 0 in a non-container database.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ConId(pub u32);

impl fmt::Display for ConId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A logical object id (DATA_OBJ#): the table, partition or IOT segment a row was written to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ObjectId(pub u32);

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A redo thread (THREAD#). Only one enabled thread is supported.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct RedoThread(pub u16);

impl fmt::Display for RedoThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A transaction id: undo segment number, slot, sequence (`XIDUSN.XIDSLT.XIDSQN`).
///
/// Unique only within a container; see [`ConXid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Xid {
    pub usn: u16,
    pub slot: u16,
    pub sqn: u32,
}

impl Xid {
    /// LogMiner reports the all-zero XID for some internal operations; it never owns changes.
    pub const ZERO: Xid = Xid {
        usn: 0,
        slot: 0,
        sqn: 0,
    };

    /// The XIDSQN some rollback and undo rows carry instead of the real sequence
    /// (`docs/decisions.md`, D16).
    pub const UNKNOWN_SQN: u32 = 0xFFFF_FFFF;

    pub fn new(usn: u16, slot: u16, sqn: u32) -> Xid {
        Xid { usn, slot, sqn }
    }

    pub fn is_zero(self) -> bool {
        self == Xid::ZERO
    }

    /// True when the row names its transaction only by (USN, slot): it belongs to the
    /// transaction open in the same container, USN and slot.
    pub fn has_unknown_sqn(self) -> bool {
        self.sqn == Xid::UNKNOWN_SQN
    }

    /// Reads `usn.slot.sqn` in decimal, e.g. `5.12.900`.
    pub fn parse(text: &str) -> Result<Xid, PositionError> {
        let err = |reason| PositionError::Xid {
            text: text.to_owned(),
            reason,
        };
        let mut parts = text.split('.');
        let (Some(usn), Some(slot), Some(sqn), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err("expected usn.slot.sqn"));
        };
        Ok(Xid {
            usn: parse_dec(usn).ok_or_else(|| err("usn is not a number below 65536"))?,
            slot: parse_dec(slot).ok_or_else(|| err("slot is not a number below 65536"))?,
            sqn: parse_dec(sqn).ok_or_else(|| err("sqn is not a 32-bit number"))?,
        })
    }

    /// Reads the RAW(8) XID column as LogMiner returns it, in hex: a 2-byte USN, a 2-byte slot
    /// and a 4-byte sequence, each little-endian (e.g. `0A000600A4020000` is `10.6.676`).
    pub fn from_raw_hex(text: &str) -> Result<Xid, PositionError> {
        let err = |reason| PositionError::Xid {
            text: text.to_owned(),
            reason,
        };
        if text.len() != 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err("expected 16 hex digits"));
        }
        let mut bytes = [0u8; 8];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                .map_err(|_| err("expected 16 hex digits"))?;
        }
        Ok(Xid::from_raw(bytes))
    }

    /// The RAW(8) bytes of the XID column.
    pub fn from_raw(bytes: [u8; 8]) -> Xid {
        Xid {
            usn: u16::from_le_bytes([bytes[0], bytes[1]]),
            slot: u16::from_le_bytes([bytes[2], bytes[3]]),
            sqn: u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
        }
    }

    /// The RAW(8) bytes, the inverse of [`Xid::from_raw`].
    pub fn to_raw(self) -> [u8; 8] {
        let mut out = [0u8; 8];
        out[0..2].copy_from_slice(&self.usn.to_le_bytes());
        out[2..4].copy_from_slice(&self.slot.to_le_bytes());
        out[4..8].copy_from_slice(&self.sqn.to_le_bytes());
        out
    }

    /// The RAW(8) form as uppercase hex, as SQL*Plus prints it.
    pub fn to_raw_hex(self) -> String {
        self.to_raw().iter().map(|b| format!("{b:02X}")).collect()
    }
}

fn parse_dec<T: FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.usn, self.slot, self.sqn)
    }
}

impl FromStr for Xid {
    type Err = PositionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Xid::parse(s)
    }
}

impl Serialize for Xid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Xid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Xid::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A transaction qualified by its container: the key of the transaction buffer, and the
/// `con:usn.slot.sqn` form of `last_commit_xid` in the offset (e.g. `3:5.12.900`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ConXid {
    pub con: ConId,
    pub xid: Xid,
}

impl ConXid {
    pub fn new(con: ConId, xid: Xid) -> ConXid {
        ConXid { con, xid }
    }

    /// Reads `con:usn.slot.sqn`; a bare `usn.slot.sqn` means container 0 (a non-CDB).
    pub fn parse(text: &str) -> Result<ConXid, PositionError> {
        match text.split_once(':') {
            Some((con, xid)) => {
                let con = parse_dec::<u32>(con).ok_or_else(|| PositionError::Xid {
                    text: text.to_owned(),
                    reason: "container id is not a number",
                })?;
                let xid = Xid::parse(xid).map_err(|_| PositionError::Xid {
                    text: text.to_owned(),
                    reason: "expected con:usn.slot.sqn",
                })?;
                Ok(ConXid::new(ConId(con), xid))
            }
            None => Ok(ConXid::new(ConId(0), Xid::parse(text)?)),
        }
    }
}

impl fmt::Display for ConXid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.con, self.xid)
    }
}

impl FromStr for ConXid {
    type Err = PositionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ConXid::parse(s)
    }
}

impl Serialize for ConXid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ConXid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ConXid::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rs_id_reads_logminer_text() {
        let id = RsId::parse(" 0x000059.0000d6a1.0010 ").unwrap();
        assert_eq!(id, RsId::new(0x59, 0xd6a1, 0x10));
        assert_eq!(id.to_string(), " 0x000059.0000d6a1.0010 ");
        // the example from the reference: RBASQN 4, RBABLK 38478, RBABYTE 156
        assert_eq!(
            RsId::new(4, 38478, 156).to_string(),
            " 0x000004.0000964e.009c "
        );
        assert_eq!(
            RsId::parse("0X000059.0000D6A1.0010").unwrap(),
            RsId::new(0x59, 0xd6a1, 0x10)
        );
        assert!(RsId::parse(" 0x000000.00000000.0000 ").unwrap().is_none());
    }

    #[test]
    fn rs_id_rejects_malformed_text() {
        for bad in [
            "",
            " ",
            "0x",
            "000059.0000d6a1.0010",
            "0x000059.0000d6a1",
            "0x000059.0000d6a1.0010.1",
            "0x00005g.0000d6a1.0010",
            "0x000059.0000d6a1.00100",
            "0x000059..0010",
            "0x+00059.0000d6a1.0010",
            "0x123456789.0.0",
        ] {
            assert!(RsId::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn zero_rs_id_is_no_position() {
        assert_eq!(RedoAddr::new(RsId::NONE, 7), Err(PositionError::NoAddress));
        assert!(RedoAddr::new(RsId::new(1, 0, 0), 0).is_ok());
    }

    #[test]
    fn field_order_is_redo_order() {
        // seq dominates block, block dominates offset
        assert!(RsId::new(1, 0xffff_ffff, 0xffff) < RsId::new(2, 0, 0));
        assert!(RsId::new(1, 1, 0xffff) < RsId::new(1, 2, 0));
        assert!(RsId::new(1, 1, 1) < RsId::new(1, 1, 2));
        // rs_id dominates ssn
        let a = RedoAddr::new(RsId::new(1, 1, 1), 99).unwrap();
        let b = RedoAddr::new(RsId::new(1, 1, 2), 0).unwrap();
        assert!(a < b);
        let c = RedoAddr::new(RsId::new(1, 1, 2), 1).unwrap();
        assert!(b < c);
        assert!(RedoAddr::MIN < a);
        // xid: usn, slot, sqn; ConXid: container first
        assert!(Xid::new(1, 9, 9) < Xid::new(2, 0, 0));
        assert!(Xid::new(1, 1, 9) < Xid::new(1, 2, 0));
        assert!(ConXid::new(ConId(1), Xid::new(9, 9, 9)) < ConXid::new(ConId(2), Xid::ZERO));
    }

    #[test]
    fn xid_forms() {
        assert_eq!(Xid::parse("5.12.900").unwrap(), Xid::new(5, 12, 900));
        assert_eq!(
            Xid::from_raw_hex("0A000600A4020000").unwrap(),
            Xid::new(10, 6, 676)
        );
        assert_eq!(
            Xid::from_raw_hex("0a00070084220000").unwrap(),
            Xid::new(10, 7, 0x2284)
        );
        assert_eq!(Xid::new(10, 6, 676).to_raw_hex(), "0A000600A4020000");
        assert_eq!(
            ConXid::parse("3:5.12.900").unwrap(),
            ConXid::new(ConId(3), Xid::new(5, 12, 900))
        );
        assert_eq!(
            ConXid::parse("5.12.900").unwrap(),
            ConXid::new(ConId(0), Xid::new(5, 12, 900))
        );
        assert_eq!(
            ConXid::new(ConId(3), Xid::new(5, 12, 900)).to_string(),
            "3:5.12.900"
        );
        assert!(Xid::ZERO.is_zero());
        assert!(Xid::parse("5.0.4294967295").unwrap().has_unknown_sqn());
        for bad in [
            "",
            "5.12",
            "5.12.900.1",
            "-5.12.900",
            "5.70000.1",
            "5.1.4294967296",
            "a.b.c",
            "5..1",
        ] {
            assert!(Xid::parse(bad).is_err(), "{bad:?}");
        }
        for bad in [
            "",
            "0A000600A402000",
            "0A000600A402000G",
            "0A000600A40200000",
        ] {
            assert!(Xid::from_raw_hex(bad).is_err(), "{bad:?}");
        }
        for bad in ["x:5.12.900", "3:5.12", ":5.1.1", "3:"] {
            assert!(ConXid::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn serde_uses_text_forms() {
        let addr = RedoAddr::new(RsId::new(0x59, 0xd6a1, 0x10), 5).unwrap();
        let json = serde_json::to_string(&addr).unwrap();
        assert_eq!(json, r#"{"rs_id":" 0x000059.0000d6a1.0010 ","ssn":5}"#);
        assert_eq!(serde_json::from_str::<RedoAddr>(&json).unwrap(), addr);
        assert_eq!(
            serde_json::to_string(&ConXid::new(ConId(3), Xid::new(5, 12, 900))).unwrap(),
            r#""3:5.12.900""#
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn rs_id_text_round_trips(seq: u32, block: u32, offset: u16) {
            let id = RsId::new(seq, block, offset);
            let text = id.to_string();
            prop_assert_eq!(RsId::parse(&text).unwrap(), id);
            prop_assert_eq!(RsId::parse(&text.to_uppercase()).unwrap(), id);
            prop_assert_eq!(RsId::parse(text.trim()).unwrap(), id);
        }

        #[test]
        fn xid_text_and_raw_round_trip(usn: u16, slot: u16, sqn: u32, con: u32) {
            let xid = Xid::new(usn, slot, sqn);
            prop_assert_eq!(Xid::parse(&xid.to_string()).unwrap(), xid);
            prop_assert_eq!(Xid::from_raw_hex(&xid.to_raw_hex()).unwrap(), xid);
            prop_assert_eq!(Xid::from_raw_hex(&xid.to_raw_hex().to_lowercase()).unwrap(), xid);
            let cx = ConXid::new(ConId(con), xid);
            prop_assert_eq!(ConXid::parse(&cx.to_string()).unwrap(), cx);
        }

        #[test]
        fn redo_addr_order_is_log_order(a: (u32, u32, u16, u64), b: (u32, u32, u16, u64)) {
            prop_assume!(a.0 | a.1 | a.2 as u32 != 0 && b.0 | b.1 | b.2 as u32 != 0);
            let x = RedoAddr::new(RsId::new(a.0, a.1, a.2), a.3).unwrap();
            let y = RedoAddr::new(RsId::new(b.0, b.1, b.2), b.3).unwrap();
            // redo order: sequence, then block, then byte offset, then SSN, as LogMiner's
            // zero-padded hex text sorts
            let text = |t: (u32, u32, u16, u64)| format!("{:08x}.{:08x}.{:04x}/{:020}", t.0, t.1, t.2, t.3);
            prop_assert_eq!(x.cmp(&y), text(a).cmp(&text(b)));
        }

        #[test]
        fn malformed_text_never_panics(text in "\\PC{0,40}") {
            let _ = RsId::parse(&text);
            let _ = Xid::parse(&text);
            let _ = Xid::from_raw_hex(&text);
            let _ = ConXid::parse(&text);
        }

        #[test]
        fn near_miss_text_never_panics(text in "[ 0xX.:a-fA-F0-9g-]{0,30}") {
            let _ = RsId::parse(&text);
            let _ = Xid::parse(&text);
            let _ = Xid::from_raw_hex(&text);
            let _ = ConXid::parse(&text);
        }
    }
}
