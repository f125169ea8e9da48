//! The frame format of spill files and of transaction journal payloads: a buffered
//! change or undo row as a self-checking run of bytes.
//!
//! Pure: this module encodes into `Vec<u8>` and decodes from any [`Read`]; it opens no file.
//! The spill module writes its output to disk, and the journal (`cdc-journal`) carries the same
//! frames in its chunks, so the encoding is versioned by the payload's kind byte and pinned by the
//! golden file `tests/golden/frames_v1.bin`.
//!
//! ```text
//!  ChangeEvent / UndoRecord --encode--> payload --frame--> | len u32 LE | crc32 u32 LE | payload |
//!                                                              crc32 (IEEE, crc32fast) of payload
//!  | frame | frame | frame | ...   one spill file = the frames of one transaction, in redo order
//! ```
//!
//! # Payload, version 1
//!
//! Integers are unsigned LEB128 varints (`var`), the minimal encoding only; signed integers are
//! zigzag-mapped first (`zig`). A string is `var` byte length + UTF-8 bytes; bytes likewise. An
//! option is a byte `0` (none) or `1` followed by the value.
//!
//! ```text
//! change (kind 1)
//!   u8 1 | var scn | rs_id: var seq, var block, var offset | var ssn
//!   u8 op (0 insert, 1 update, 2 delete)
//!   table: opt string pdb, string owner, string table | var schema_version
//!   opt image before | opt image after | opt string row_id
//!   image  = var count, then count × (var column, value)
//!   value  = u8 tag + body:
//!     0 Null            1 Number: zig unscaled (i128), zig scale (i16), normalised
//!     2 BinaryFloat: 4 bytes LE IEEE bits       3 BinaryDouble: 8 bytes LE IEEE bits
//!     4 Text: string    5 Raw: bytes            6 Date: datetime      7 Timestamp: datetime
//!     8 TimestampTz: datetime, then u8 0 + zig minutes east of UTC, or u8 1 + string region
//!     9 TimestampLtz: datetime                  10 IntervalYm: zig months (i64)
//!     11 IntervalDs: zig nanoseconds (i128)     12 RowId: string
//!     13 EmptyLob       14 Unavailable          15 Unsupported
//!   datetime = zig year, u8 month, u8 day, u8 hour, u8 minute, u8 second, var nanos
//!
//! undo (kind 2): a ROLLBACK=1 row against the transaction
//!   u8 2 | var scn | rs_id: var seq, var block, var offset | var ssn | string row_id
//! ```
//!
//! The all-zero RS_ID is encoded like any other; it decodes only together with SSN 0, as
//! [`RedoAddr::MIN`]. Decoding checks everything it reads — lengths, tags, UTF-8, varint form,
//! ranges, trailing bytes — so that a payload decodes to exactly one value and re-encodes to
//! the same bytes.

use std::io::{self, Read};

use cdc_core::change::{ChangeOp, ColumnValue, RowChange};
use cdc_core::{
    ChangeEvent, Decimal, OracleDateTime, RedoAddr, RsId, Scn, TableId, TimeZone, Value,
};

/// Bytes of the frame header: payload length and CRC32, both little-endian `u32`.
pub const FRAME_HEADER_LEN: usize = 8;
/// Payload kind byte of a change (format version 1).
pub const KIND_CHANGE: u8 = 1;
/// Payload kind byte of an undo row (format version 1).
pub const KIND_UNDO: u8 = 2;

/// A ROLLBACK=1 row: it removes the latest earlier change of its transaction with the same
/// ROWID: Oracle gives an undo row an RS_ID of its own, so the ROWID is what pairs it with
/// the change it reverses (`docs/decisions.md`, D15). The address is the undo row's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRecord {
    pub scn: Scn,
    pub addr: RedoAddr,
    pub row_id: String,
}

/// A decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Change(ChangeEvent),
    Undo(UndoRecord),
}

/// A frame to encode, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum FrameRef<'a> {
    Change(&'a ChangeEvent),
    Undo(&'a UndoRecord),
}

/// Why a run of frames could not be read back. Every variant means the bytes are not what
/// was written; a caller never treats a shorter run as complete.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error(
        "the frame at byte {frame_offset} is cut short: it needs {needed} bytes, {available} remain"
    )]
    Truncated {
        frame_offset: u64,
        needed: u64,
        available: u64,
    },
    #[error(
        "the frame at byte {frame_offset} fails its CRC32 (stored {stored:#010x}, computed {computed:#010x})"
    )]
    Crc {
        frame_offset: u64,
        stored: u32,
        computed: u32,
    },
    #[error(
        "the frame at byte {frame_offset} has a malformed payload at payload byte {at}: {reason}"
    )]
    Malformed {
        frame_offset: u64,
        at: usize,
        reason: &'static str,
    },
    #[error("reading the frame at byte {frame_offset} failed: {source}")]
    Io {
        frame_offset: u64,
        #[source]
        source: io::Error,
    },
}

/// Why a payload could not be decoded: the byte within the payload, and what was wrong there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed payload at byte {at}: {reason}")]
pub struct PayloadError {
    pub at: usize,
    pub reason: &'static str,
}

/// Appends one whole frame (header and payload) to `out` and returns its length in bytes.
pub fn append_frame(frame: FrameRef<'_>, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0u8; FRAME_HEADER_LEN]);
    match frame {
        FrameRef::Change(event) => encode_change_payload(event, out),
        FrameRef::Undo(undo) => encode_undo_payload(undo, out),
    }
    let payload = &out[start + FRAME_HEADER_LEN..];
    // A single change larger than 4 GiB cannot be framed; the decoder caps values far below.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let crc = crc32fast::hash(payload);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    out.len() - start
}

/// Appends the payload of a change (kind 1).
pub fn encode_change_payload(event: &ChangeEvent, out: &mut Vec<u8>) {
    out.push(KIND_CHANGE);
    put_var(out, event.scn.get());
    put_addr(out, event.addr);
    let change = &event.change;
    out.push(match change.op {
        ChangeOp::Insert => 0,
        ChangeOp::Update => 1,
        ChangeOp::Delete => 2,
    });
    put_opt_str(out, change.table.pdb.as_deref());
    put_str(out, &change.table.owner);
    put_str(out, &change.table.table);
    put_var(out, u64::from(change.schema_version));
    put_opt_image(out, change.before.as_deref());
    put_opt_image(out, change.after.as_deref());
    put_opt_str(out, change.row_id.as_deref());
}

/// Appends the payload of an undo row (kind 2).
pub fn encode_undo_payload(undo: &UndoRecord, out: &mut Vec<u8>) {
    out.push(KIND_UNDO);
    put_var(out, undo.scn.get());
    put_addr(out, undo.addr);
    put_str(out, &undo.row_id);
}

/// Decodes one payload (without its header).
pub fn decode_payload(payload: &[u8]) -> Result<Frame, PayloadError> {
    let mut r = Cursor {
        bytes: payload,
        at: 0,
    };
    let frame = match r.u8()? {
        KIND_CHANGE => Frame::Change(decode_change(&mut r)?),
        KIND_UNDO => {
            let scn = Scn(r.var_u64()?);
            let addr = r.addr()?;
            let row_id = r.string()?;
            Frame::Undo(UndoRecord { scn, addr, row_id })
        }
        _ => return Err(r.error_before(1, "unknown payload kind")),
    };
    if r.at != payload.len() {
        return Err(r.error("bytes after the end of the payload"));
    }
    Ok(frame)
}

/// What every payload begins with: its kind, and the SCN and redo address of its row. The
/// journal reads this much of each frame to place it, and copies the frame's bytes whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    /// [`KIND_CHANGE`] or [`KIND_UNDO`].
    pub kind: u8,
    pub scn: Scn,
    pub addr: RedoAddr,
}

/// The head of a payload (without its header), the rest unread.
pub fn payload_head(payload: &[u8]) -> Result<FrameHead, PayloadError> {
    let mut r = Cursor {
        bytes: payload,
        at: 0,
    };
    let kind = r.u8()?;
    if kind != KIND_CHANGE && kind != KIND_UNDO {
        return Err(r.error_before(1, "unknown payload kind"));
    }
    let scn = Scn(r.var_u64()?);
    let addr = r.addr()?;
    Ok(FrameHead { kind, scn, addr })
}

/// Decodes a whole run of frames held in memory.
pub fn decode_frames(bytes: &[u8]) -> Result<Vec<Frame>, CodecError> {
    let mut reader = FrameReader::new(bytes, bytes.len() as u64);
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame()? {
        frames.push(frame);
    }
    Ok(frames)
}

/// The frames of bytes in memory (a spill file's layout), each with its head and its whole
/// bytes (header and payload) borrowed, its CRC32 checked; nothing is copied. A damaged frame
/// ends the iteration with its error.
#[derive(Debug, Clone)]
pub struct SliceFrames<'a> {
    bytes: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a> SliceFrames<'a> {
    pub fn new(bytes: &'a [u8]) -> SliceFrames<'a> {
        SliceFrames {
            bytes,
            at: 0,
            failed: false,
        }
    }

    /// The offset of the next frame in the bytes.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// The bytes from offset `from` to `to` (frames the iteration passed).
    pub fn bytes(&self, from: usize, to: usize) -> &'a [u8] {
        self.bytes.get(from..to).unwrap_or_default()
    }

    fn frame(&mut self) -> Result<(FrameHead, &'a [u8]), CodecError> {
        let frame_offset = self.at as u64;
        let rest = &self.bytes[self.at..];
        let truncated = |needed: u64| CodecError::Truncated {
            frame_offset,
            needed,
            available: rest.len() as u64,
        };
        let Some((header, after)) = rest.split_first_chunk::<FRAME_HEADER_LEN>() else {
            return Err(truncated(FRAME_HEADER_LEN as u64));
        };
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let stored = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some(payload) = after.get(..len as usize) else {
            return Err(truncated(FRAME_HEADER_LEN as u64 + u64::from(len)));
        };
        let computed = crc32fast::hash(payload);
        if computed != stored {
            return Err(CodecError::Crc {
                frame_offset,
                stored,
                computed,
            });
        }
        let head = payload_head(payload).map_err(|e| CodecError::Malformed {
            frame_offset,
            at: e.at,
            reason: e.reason,
        })?;
        let whole = FRAME_HEADER_LEN + len as usize;
        let frame = &rest[..whole];
        self.at += whole;
        Ok((head, frame))
    }
}

impl<'a> Iterator for SliceFrames<'a> {
    type Item = Result<(FrameHead, &'a [u8]), CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let frame = self.frame();
        self.failed = frame.is_err();
        Some(frame)
    }
}

/// Reads frames one at a time from a source of known length, so that a length field damaged
/// into a huge number is reported as truncation instead of allocating for it.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    offset: u64,
    len: u64,
    payload: Vec<u8>,
    /// The CRC32 of `payload`.
    crc: u32,
}

impl<R: Read> FrameReader<R> {
    /// A reader of `len` bytes of frames from `inner`.
    pub fn new(inner: R, len: u64) -> Self {
        FrameReader {
            inner,
            offset: 0,
            len,
            payload: Vec::new(),
            crc: 0,
        }
    }

    /// The byte offset of the next frame.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Gives the source back, e.g. to rewind a file.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The next frame; `None` exactly at the end of the `len` bytes.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, CodecError> {
        let Some((frame_offset, needed)) = self.next_payload()? else {
            return Ok(None);
        };
        let frame = decode_payload(&self.payload).map_err(|e| CodecError::Malformed {
            frame_offset,
            at: e.at,
            reason: e.reason,
        })?;
        self.offset = frame_offset + needed;
        Ok(Some(frame))
    }

    /// The next frame's head, its whole bytes (header and payload) appended to `out`, its
    /// CRC32 checked; `None` exactly at the end. The rest of the payload is not decoded.
    pub fn next_raw(&mut self, out: &mut Vec<u8>) -> Result<Option<FrameHead>, CodecError> {
        let Some((frame_offset, needed)) = self.next_payload()? else {
            return Ok(None);
        };
        let head = payload_head(&self.payload).map_err(|e| CodecError::Malformed {
            frame_offset,
            at: e.at,
            reason: e.reason,
        })?;
        let len = self.payload.len() as u32;
        out.extend_from_slice(&len.to_le_bytes());
        // the CRC32 the header holds, which `next_payload` checked
        out.extend_from_slice(&self.crc.to_le_bytes());
        out.extend_from_slice(&self.payload);
        self.offset = frame_offset + needed;
        Ok(Some(head))
    }

    /// Reads the next payload into `self.payload` and checks its CRC32: the frame's offset
    /// and whole length, or `None` at the end.
    fn next_payload(&mut self) -> Result<Option<(u64, u64)>, CodecError> {
        let frame_offset = self.offset;
        let available = self.len - self.offset;
        if available == 0 {
            return Ok(None);
        }
        let truncated = |needed: u64| CodecError::Truncated {
            frame_offset,
            needed,
            available,
        };
        if available < FRAME_HEADER_LEN as u64 {
            return Err(truncated(FRAME_HEADER_LEN as u64));
        }
        let mut header = [0u8; FRAME_HEADER_LEN];
        self.read_exact_at(&mut header, frame_offset, available)?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let stored = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let needed = FRAME_HEADER_LEN as u64 + u64::from(len);
        if needed > available {
            return Err(truncated(needed));
        }
        let mut payload = std::mem::take(&mut self.payload);
        payload.clear();
        payload.resize(len as usize, 0);
        let read = self.read_exact_at(&mut payload, frame_offset, available);
        self.payload = payload;
        read?;
        let computed = crc32fast::hash(&self.payload);
        if computed != stored {
            return Err(CodecError::Crc {
                frame_offset,
                stored,
                computed,
            });
        }
        self.crc = computed;
        Ok(Some((frame_offset, needed)))
    }

    fn read_exact_at(
        &mut self,
        buf: &mut [u8],
        frame_offset: u64,
        available: u64,
    ) -> Result<(), CodecError> {
        match self.inner.read_exact(buf) {
            Ok(()) => Ok(()),
            // The source ended before the length it was said to have: bytes are missing.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(CodecError::Truncated {
                frame_offset,
                needed: buf.len() as u64,
                available,
            }),
            Err(source) => Err(CodecError::Io {
                frame_offset,
                source,
            }),
        }
    }
}

fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_var128(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zig64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn zig128(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzig64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn unzig128(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

fn put_addr(out: &mut Vec<u8>, addr: RedoAddr) {
    let rs = addr.rs_id();
    put_var(out, u64::from(rs.seq));
    put_var(out, u64::from(rs.block));
    put_var(out, u64::from(rs.offset));
    put_var(out, addr.ssn());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_var(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
    }
}

fn put_opt_image(out: &mut Vec<u8>, image: Option<&[ColumnValue]>) {
    match image {
        None => out.push(0),
        Some(columns) => {
            out.push(1);
            put_var(out, columns.len() as u64);
            for c in columns {
                put_var(out, u64::from(c.column));
                put_value(out, &c.value);
            }
        }
    }
}

fn put_datetime(out: &mut Vec<u8>, d: &OracleDateTime) {
    put_var(out, zig64(i64::from(d.year)));
    out.extend_from_slice(&[d.month, d.day, d.hour, d.minute, d.second]);
    put_var(out, u64::from(d.nanos));
}

fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0),
        Value::Number(d) => {
            out.push(1);
            put_var128(out, zig128(d.unscaled()));
            put_var(out, zig64(i64::from(d.scale())));
        }
        Value::BinaryFloat(f) => {
            out.push(2);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::BinaryDouble(f) => {
            out.push(3);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Text(s) => {
            out.push(4);
            put_str(out, s);
        }
        Value::Raw(b) => {
            out.push(5);
            put_bytes(out, b);
        }
        Value::Date(d) => {
            out.push(6);
            put_datetime(out, d);
        }
        Value::Timestamp(d) => {
            out.push(7);
            put_datetime(out, d);
        }
        Value::TimestampTz(d, tz) => {
            out.push(8);
            put_datetime(out, d);
            match tz {
                TimeZone::Offset(minutes) => {
                    out.push(0);
                    put_var(out, zig64(i64::from(*minutes)));
                }
                TimeZone::Region(name) => {
                    out.push(1);
                    put_str(out, name);
                }
            }
        }
        Value::TimestampLtz(d) => {
            out.push(9);
            put_datetime(out, d);
        }
        Value::IntervalYm(months) => {
            out.push(10);
            put_var(out, zig64(*months));
        }
        Value::IntervalDs(nanos) => {
            out.push(11);
            put_var128(out, zig128(nanos.get()));
        }
        Value::RowId(s) => {
            out.push(12);
            put_str(out, s);
        }
        Value::EmptyLob => out.push(13),
        Value::Unavailable => out.push(14),
        Value::Unsupported => out.push(15),
    }
}

fn decode_change(r: &mut Cursor<'_>) -> Result<ChangeEvent, PayloadError> {
    let scn = Scn(r.var_u64()?);
    let addr = r.addr()?;
    let op = match r.u8()? {
        0 => ChangeOp::Insert,
        1 => ChangeOp::Update,
        2 => ChangeOp::Delete,
        _ => return Err(r.error_before(1, "unknown change operation")),
    };
    let pdb = r.opt_string()?;
    let owner = r.string()?;
    let table = r.string()?;
    let schema_version = r.var_u32()?;
    let before = r.opt_image()?;
    let after = r.opt_image()?;
    let row_id = r.opt_string()?;
    Ok(ChangeEvent {
        scn,
        addr,
        change: RowChange {
            op,
            table: TableId { pdb, owner, table }.into(),
            schema_version,
            before,
            after,
            row_id,
        },
    })
}

/// A read position in one payload; every error names the byte it happened at.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn error(&self, reason: &'static str) -> PayloadError {
        PayloadError {
            at: self.at,
            reason,
        }
    }

    fn error_before(&self, back: usize, reason: &'static str) -> PayloadError {
        PayloadError {
            at: self.at.saturating_sub(back),
            reason,
        }
    }

    fn u8(&mut self) -> Result<u8, PayloadError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| self.error("payload ends inside a field"))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&[u8], PayloadError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.error("a length runs past the end of the payload"))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// A minimal LEB128 varint of at most `bits` significant bits.
    fn var(&mut self, bits: u32) -> Result<u128, PayloadError> {
        let start = self.at;
        let mut value: u128 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            let chunk = u128::from(b & 0x7f);
            let out_of_range = shift >= bits || (bits - shift < 7 && chunk >> (bits - shift) != 0);
            if out_of_range {
                return Err(PayloadError {
                    at: start,
                    reason: "varint out of range",
                });
            }
            value |= chunk << shift;
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 {
                    return Err(PayloadError {
                        at: start,
                        reason: "varint not in its shortest form",
                    });
                }
                return Ok(value);
            }
            shift += 7;
        }
    }

    fn var_u64(&mut self) -> Result<u64, PayloadError> {
        Ok(self.var(64)? as u64)
    }

    fn var_u32(&mut self) -> Result<u32, PayloadError> {
        Ok(self.var(32)? as u32)
    }

    fn var_u16(&mut self) -> Result<u16, PayloadError> {
        Ok(self.var(16)? as u16)
    }

    fn zig_i64(&mut self) -> Result<i64, PayloadError> {
        Ok(unzig64(self.var_u64()?))
    }

    fn zig_i128(&mut self) -> Result<i128, PayloadError> {
        Ok(unzig128(self.var(128)?))
    }

    fn zig_i16(&mut self) -> Result<i16, PayloadError> {
        let at = self.at;
        i16::try_from(self.zig_i64()?).map_err(|_| PayloadError {
            at,
            reason: "16-bit integer out of range",
        })
    }

    fn addr(&mut self) -> Result<RedoAddr, PayloadError> {
        let at = self.at;
        let seq = self.var_u32()?;
        let block = self.var_u32()?;
        let offset = self.var_u16()?;
        let ssn = self.var_u64()?;
        let rs_id = RsId::new(seq, block, offset);
        if rs_id.is_none() && ssn == 0 {
            return Ok(RedoAddr::MIN);
        }
        RedoAddr::new(rs_id, ssn).map_err(|_| PayloadError {
            at,
            reason: "the all-zero RS_ID with a non-zero SSN is no address",
        })
    }

    fn bytes_field(&mut self) -> Result<Vec<u8>, PayloadError> {
        let len = self.var_u64()?;
        let len = usize::try_from(len).map_err(|_| self.error("length too large"))?;
        Ok(self.take(len)?.to_vec())
    }

    fn string(&mut self) -> Result<String, PayloadError> {
        let at = self.at;
        String::from_utf8(self.bytes_field()?).map_err(|_| PayloadError {
            at,
            reason: "text is not UTF-8",
        })
    }

    fn flag(&mut self) -> Result<bool, PayloadError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.error_before(1, "option flag is neither 0 nor 1")),
        }
    }

    fn opt_string(&mut self) -> Result<Option<String>, PayloadError> {
        if self.flag()? {
            Ok(Some(self.string()?))
        } else {
            Ok(None)
        }
    }

    fn opt_image(&mut self) -> Result<Option<Vec<ColumnValue>>, PayloadError> {
        if !self.flag()? {
            return Ok(None);
        }
        let count = self.var_u64()?;
        // Every column takes at least two bytes, which bounds the allocation by the payload.
        let remaining = (self.bytes.len() - self.at) as u64;
        if count > remaining / 2 {
            return Err(self.error("column count larger than the payload can hold"));
        }
        let mut columns = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let column = self.var_u16()?;
            let value = self.value()?;
            columns.push(ColumnValue { column, value });
        }
        Ok(Some(columns))
    }

    fn datetime(&mut self) -> Result<OracleDateTime, PayloadError> {
        let year = self.zig_i16()?;
        let f = self.take(5)?;
        let (month, day, hour, minute, second) = (f[0], f[1], f[2], f[3], f[4]);
        let nanos = self.var_u32()?;
        // Built field by field, not through `OracleDateTime::new`: the frame must give back
        // exactly the value that was buffered, and the CRC already vouches for the bytes.
        Ok(OracleDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
        })
    }

    fn value(&mut self) -> Result<Value, PayloadError> {
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => {
                let at = self.at;
                let unscaled = self.zig_i128()?;
                let scale = self.zig_i16()?;
                let d = Decimal::new(unscaled, scale);
                if d.unscaled() != unscaled || d.scale() != scale {
                    return Err(PayloadError {
                        at,
                        reason: "decimal not in normalised form",
                    });
                }
                Value::Number(d)
            }
            2 => {
                let b = self.take(4)?;
                Value::BinaryFloat(f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            }
            3 => {
                let b = self.take(8)?;
                let mut raw = [0u8; 8];
                raw.copy_from_slice(b);
                Value::BinaryDouble(f64::from_bits(u64::from_le_bytes(raw)))
            }
            4 => Value::Text(self.string()?),
            5 => Value::Raw(self.bytes_field()?),
            6 => Value::Date(self.datetime()?),
            7 => Value::Timestamp(self.datetime()?),
            8 => {
                let d = self.datetime()?;
                let tz = match self.u8()? {
                    0 => TimeZone::Offset(self.zig_i16()?),
                    1 => TimeZone::Region(self.string()?.into()),
                    _ => return Err(self.error_before(1, "unknown time zone form")),
                };
                Value::TimestampTz(d, tz)
            }
            9 => Value::TimestampLtz(self.datetime()?),
            10 => Value::IntervalYm(self.zig_i64()?),
            11 => Value::IntervalDs(self.zig_i128()?.into()),
            12 => Value::RowId(self.string()?),
            13 => Value::EmptyLob,
            14 => Value::Unavailable,
            15 => Value::Unsupported,
            _ => return Err(self.error_before(1, "unknown value tag")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_var(bits: u32, v: u128) {
        let mut out = Vec::new();
        put_var128(&mut out, v);
        let mut c = Cursor { bytes: &out, at: 0 };
        assert_eq!(c.var(bits).unwrap(), v, "{v} in {bits} bits");
        assert_eq!(c.at, out.len());
    }

    #[test]
    fn varints_round_trip_at_their_limits() {
        for v in [0u128, 1, 127, 128, 16383, 16384, u16::MAX as u128] {
            round_trip_var(16, v);
        }
        for v in [u32::MAX as u128, u32::MAX as u128 - 1] {
            round_trip_var(32, v);
        }
        for v in [u64::MAX as u128, 1 << 63] {
            round_trip_var(64, v);
        }
        round_trip_var(128, u128::MAX);
        for v in [0i128, -1, 1, i128::MIN, i128::MAX] {
            assert_eq!(unzig128(zig128(v)), v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzig64(zig64(v)), v);
        }
    }

    #[test]
    fn varints_out_of_range_or_overlong_are_refused() {
        let mut out = Vec::new();
        put_var128(&mut out, u16::MAX as u128 + 1);
        assert!(Cursor { bytes: &out, at: 0 }.var(16).is_err());
        let mut out = Vec::new();
        put_var128(&mut out, u64::MAX as u128 + 1);
        assert!(Cursor { bytes: &out, at: 0 }.var(64).is_err());
        // 0 written in two bytes
        assert!(
            Cursor {
                bytes: &[0x80, 0x00],
                at: 0
            }
            .var(64)
            .is_err()
        );
        // 1 written with a trailing zero group
        assert!(
            Cursor {
                bytes: &[0x81, 0x00],
                at: 0
            }
            .var(64)
            .is_err()
        );
        // runs off the end
        assert!(
            Cursor {
                bytes: &[0x80],
                at: 0
            }
            .var(64)
            .is_err()
        );
        // eleven bytes for a u64
        let long = [0xffu8; 10];
        assert!(
            Cursor {
                bytes: &long,
                at: 0
            }
            .var(64)
            .is_err()
        );
    }

    #[test]
    fn unknown_kind_and_trailing_bytes_are_malformed() {
        assert_eq!(
            decode_payload(&[9]).unwrap_err().reason,
            "unknown payload kind"
        );
        assert!(decode_payload(&[]).is_err());
        let undo = UndoRecord {
            scn: Scn(5),
            addr: RedoAddr::new(RsId::new(1, 2, 3), 4).unwrap(),
            row_id: "AAAR".into(),
        };
        let mut payload = Vec::new();
        encode_undo_payload(&undo, &mut payload);
        assert_eq!(decode_payload(&payload).unwrap(), Frame::Undo(undo));
        payload.push(0);
        assert_eq!(
            decode_payload(&payload).unwrap_err().reason,
            "bytes after the end of the payload"
        );
    }

    #[test]
    fn frame_reader_reports_truncation_at_every_byte() {
        let undo = UndoRecord {
            scn: Scn(5),
            addr: RedoAddr::new(RsId::new(1, 2, 3), 4).unwrap(),
            row_id: "AAARowAAEAAAAFbAAA".into(),
        };
        let mut bytes = Vec::new();
        append_frame(FrameRef::Undo(&undo), &mut bytes);
        assert_eq!(decode_frames(&bytes).unwrap(), vec![Frame::Undo(undo)]);
        for cut in 1..bytes.len() {
            // the source is shorter than the length the reader was given
            let mut reader = FrameReader::new(&bytes[..cut], bytes.len() as u64);
            assert!(
                matches!(reader.next_frame(), Err(CodecError::Truncated { .. })),
                "{cut}"
            );
            // the reader is told the true, shorter length
            assert!(
                matches!(
                    decode_frames(&bytes[..cut]),
                    Err(CodecError::Truncated { .. })
                ),
                "{cut}"
            );
        }
    }

    #[test]
    fn a_huge_length_field_does_not_allocate() {
        let mut bytes = vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        bytes.extend_from_slice(&[1, 2, 3]);
        assert!(matches!(
            decode_frames(&bytes),
            Err(CodecError::Truncated { needed, .. }) if needed == 8 + u32::MAX as u64
        ));
    }
}
