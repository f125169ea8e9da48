//! Text forms written straight into a byte buffer, exactly as `format!` and the `Display` of
//! cdc-core's position types write them, without the formatting machinery: every change
//! record carries several (its headers, its `source` block, its transaction id).

use cdc_core::{ConXid, RsId, Xid};

use crate::record::json::push_u64;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `n` in lowercase hex, zero-padded to at least `width` digits: `format!("{n:0width$x}")`.
pub fn push_hex(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut digits = [0u8; 16];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = HEX[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    out.resize(out.len() + width.saturating_sub(digits.len()), b'0');
    out.extend_from_slice(digits);
}

/// `usn.slot.sqn`, as [`Xid`]'s `Display`.
pub fn push_xid(out: &mut Vec<u8>, xid: Xid) {
    push_u64(out, u64::from(xid.usn));
    out.push(b'.');
    push_u64(out, u64::from(xid.slot));
    out.push(b'.');
    push_u64(out, u64::from(xid.sqn));
}

/// `con:usn.slot.sqn`, as [`ConXid`]'s `Display`.
pub fn push_con_xid(out: &mut Vec<u8>, xid: ConXid) {
    push_u64(out, u64::from(xid.con.0));
    out.push(b':');
    push_xid(out, xid.xid);
}

/// LogMiner's RS_ID text, ` 0x000059.0000d6a1.0010 `, as [`RsId`]'s `Display`.
pub fn push_rs_id(out: &mut Vec<u8>, rs_id: RsId) {
    out.extend_from_slice(b" 0x");
    push_hex(out, u64::from(rs_id.seq), 6);
    out.push(b'.');
    push_hex(out, u64::from(rs_id.block), 8);
    out.push(b'.');
    push_hex(out, u64::from(rs_id.offset), 4);
    out.push(b' ');
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::ConId;
    use proptest::prelude::*;

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn padding_at_the_limits() {
        for (n, width) in [
            (0, 0),
            (0, 1),
            (0, 6),
            (0xabc, 2),
            (u64::MAX, 4),
            (u64::MAX, 20),
        ] {
            assert_eq!(text(|o| push_hex(o, n, width)), format!("{n:0width$x}"));
        }
        assert_eq!(
            text(|o| push_rs_id(o, RsId::new(0x59, 0xd6a1, 0x10))),
            " 0x000059.0000d6a1.0010 "
        );
    }

    proptest! {
        #[test]
        fn hex_pads_as_format_does(n in any::<u64>(), width in 0usize..24) {
            prop_assert_eq!(text(|o| push_hex(o, n, width)), format!("{n:0width$x}"));
        }

        #[test]
        fn positions_write_as_their_display(
            con in any::<u32>(), usn in any::<u16>(), slot in any::<u16>(), sqn in any::<u32>(),
            seq in any::<u32>(), block in any::<u32>(), offset in any::<u16>(),
        ) {
            let xid = ConXid::new(ConId(con), Xid { usn, slot, sqn });
            prop_assert_eq!(text(|o| push_xid(o, xid.xid)), xid.xid.to_string());
            prop_assert_eq!(text(|o| push_con_xid(o, xid)), xid.to_string());
            let rs_id = RsId::new(seq, block, offset);
            prop_assert_eq!(text(|o| push_rs_id(o, rs_id)), rs_id.to_string());
        }
    }
}
