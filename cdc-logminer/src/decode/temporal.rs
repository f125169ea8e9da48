//! Reads the date, timestamp and interval texts that LogMiner writes under the NLS formats the
//! engine sets at session start (see `docs/decoding.md`):
//!
//! ```text
//!  NLS_DATE_FORMAT          SYYYY-MM-DD HH24:MI:SS            ' 2026-02-28 13:45:59'
//!  NLS_TIMESTAMP_FORMAT     SYYYY-MM-DD HH24:MI:SS.FF9        ' 2026-03-29 01:30:00.123456000'
//!  NLS_TIMESTAMP_TZ_FORMAT  SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM ' 2026-03-29 01:30:00.1 +05:30'
//!  INTERVAL YEAR TO MONTH   (fixed)                           '+0012-03'
//!  INTERVAL DAY TO SECOND   (fixed)                           '+00005 04:03:02.123456'
//! ```
//!
//! The year's sign position (`SYYYY`: a blank or `-`, never `+`) is optional, so the `YYYY`
//! forms that Debezium-style sessions produce read the same; a text written with `YYYY` (a
//! `TO_DATE` format argument) has no sign position, so one with a sign is refused. The
//! fraction takes 0 to 9 digits and may be a bare trailing dot (`'2020-02-01 00:00:00.'`).
//! Nothing else is guessed: `DD-MON-RR`, the default that loses the time of day, is refused.

use cdc_core::value::{OracleDateTime, TimeZone};

use super::convert::leading_digits;

/// The date format arguments of `TO_DATE` this decoder reads.
pub const DATE_FORMATS: [&str; 2] = ["SYYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD HH24:MI:SS"];

/// What may stand before the year, by the format a text was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum YearSign {
    /// `SYYYY` (the session's formats): a blank, or `-` for a year before Christ; none is
    /// read too, as it reads the same for a year after Christ.
    Signed,
    /// `YYYY`: nothing. It has no sign position, so a text with one was not written with it.
    Unsigned,
}

impl YearSign {
    /// The sign rule of a `TO_DATE` format argument (one of [`DATE_FORMATS`], any case).
    pub(super) fn of_date_format(format: &str) -> YearSign {
        if format
            .as_bytes()
            .first()
            .is_some_and(|b| b.eq_ignore_ascii_case(&b'S'))
        {
            YearSign::Signed
        } else {
            YearSign::Unsigned
        }
    }
}

type Result<T> = std::result::Result<T, &'static str>;

/// `str::trim`, answered without a Unicode scan when the text is empty or starts and ends
/// with an ASCII byte that is not blank (the common case: LogMiner pads nothing here).
#[inline]
pub(super) fn trim(text: &str) -> &str {
    let b = text.as_bytes();
    match (b.first(), b.last()) {
        (None, _) => text,
        (Some(&first), Some(&last))
            if first.is_ascii()
                && last.is_ascii()
                && !matches!(first, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
                && !matches!(last, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') =>
        {
            text
        }
        _ => text.trim(),
    }
}

fn digits(b: &[u8], at: usize, n: usize) -> Result<u32> {
    let slice = b.get(at..at + n).ok_or("too short")?;
    let mut v = 0u32;
    for &d in slice {
        if !d.is_ascii_digit() {
            return Err("a digit was expected");
        }
        v = v * 10 + u32::from(d - b'0');
    }
    Ok(v)
}

/// `[ |-]YYYY-MM-DD HH24:MI:SS[.F{0,9}]` (the sign position only as `sign` allows it);
/// returns the value and the rest of the text.
fn parse_datetime(
    text: &str,
    allow_fraction: bool,
    sign: YearSign,
) -> Result<(OracleDateTime, &str)> {
    let b = text.as_bytes();
    let (negative, start) = match (b.first(), sign) {
        (Some(b'-'), YearSign::Signed) => (true, 1),
        (Some(b' '), YearSign::Signed) => (false, 1),
        (Some(b'-' | b' ' | b'+'), YearSign::Unsigned) => {
            return Err("a sign before the year, which the format YYYY does not write");
        }
        (Some(b'+'), YearSign::Signed) => {
            return Err("'+' before the year, which SYYYY does not write (a blank or '-')");
        }
        _ => (false, 0),
    };
    if let Some(fixed) = fixed_datetime(b, start) {
        return finish_datetime(text, negative, fixed, start + 19, allow_fraction);
    }
    let year = digits(b, start, 4)?;
    let p = start + 4;
    if b.get(p) != Some(&b'-') || b.get(p + 3) != Some(&b'-') || b.get(p + 6) != Some(&b' ') {
        return Err("not in the session's date format");
    }
    let month = digits(b, p + 1, 2)?;
    let day = digits(b, p + 4, 2)?;
    let t = p + 7;
    if b.get(t + 2) != Some(&b':') || b.get(t + 5) != Some(&b':') {
        return Err("not in the session's date format");
    }
    let hour = digits(b, t, 2)?;
    let minute = digits(b, t + 3, 2)?;
    let second = digits(b, t + 6, 2)?;
    finish_datetime(
        text,
        negative,
        [year, month, day, hour, minute, second],
        t + 8,
        allow_fraction,
    )
}

/// `YYYY-MM-DD HH24:MI:SS` at `at` with every digit and separator in place (the form the
/// session's NLS formats write): its six fields, read at fixed positions. `None` for anything
/// else, which the field-by-field path then reads and reports.
///
/// The 19 bytes are read as three overlapping little-endian words (bytes 0–7, 8–15 and
/// 11–18), each checked and combined a word at a time.
#[inline]
fn fixed_datetime(b: &[u8], at: usize) -> Option<[u32; 6]> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // the digit bytes of each word: `YYYY-MM-`, then `DD HH:MI` and `HH:MI:SS` alike
    const DIGITS_0: u64 = 0x00ff_ff00_ffff_ffff;
    const DIGITS_1: u64 = 0xffff_00ff_ff00_ffff;
    // the separators, where they stand in each word
    const SEPARATORS_0: u64 = !DIGITS_0;
    const SEPARATORS_1: u64 = !DIGITS_1;
    const DASHES: u64 = 0x2d00_002d_0000_0000;
    const BLANK_COLON: u64 = 0x0000_3a00_0020_0000;
    const COLONS: u64 = 0x0000_3a00_003a_0000;
    let word = |i: usize| {
        b.get(at + i..at + i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_le_bytes)
    };
    let (w0, w1, w2) = (word(0)?, word(8)?, word(11)?);
    if w0 & SEPARATORS_0 != DASHES
        || w1 & SEPARATORS_1 != BLANK_COLON
        || w2 & SEPARATORS_1 != COLONS
    {
        return None;
    }
    // the separators (checked) read as `0`, so that every byte is a digit when the text is
    // well formed and no subtraction below borrows across a byte
    let fill = |w: u64, digits: u64| (w & digits) | ((0x30 * ONES) & !digits);
    let (v0, v1, v2) = (fill(w0, DIGITS_0), fill(w1, DIGITS_1), fill(w2, DIGITS_1));
    // a byte's high bit is set when it is not a digit; the lowest such byte always is (see
    // convert::leading_digits), which is all a yes/no answer needs
    let not_digit =
        |w: u64| (w.wrapping_sub(0x30 * ONES) | w.wrapping_add(0x46 * ONES)) & (0x80 * ONES);
    if not_digit(v0) | not_digit(v1) | not_digit(v2) != 0 {
        return None;
    }
    // each byte's digit, then each byte holds 10 × itself + the next (at most 99: no carry)
    let pairs = |v: u64| {
        let d = v.wrapping_sub(0x30 * ONES);
        d.wrapping_mul(10).wrapping_add(d >> 8)
    };
    let (p0, p1, p2) = (pairs(v0), pairs(v1), pairs(v2));
    let byte = |p: u64, k: u32| ((p >> (8 * k)) & 0xff) as u32;
    Some([
        byte(p0, 0) * 100 + byte(p0, 2),
        byte(p0, 5),
        byte(p1, 0),
        byte(p1, 3),
        byte(p1, 6),
        byte(p2, 6),
    ])
}

/// `YYYY-MM-DD HH24:MI:SS` at the start of `b` followed, when `fraction` allows, by `.` and 1
/// to 9 digits: the value and the length read. `None` for any other text (the general reading
/// then decides); for what it accepts, [`parse_datetime`] gives the same value.
#[inline]
pub(super) fn plain_datetime(b: &[u8], fraction: bool) -> Option<(OracleDateTime, usize)> {
    let [year, month, day, hour, minute, second] = fixed_datetime(b, 0)?;
    let mut end = 19;
    let mut nanos = 0u32;
    if fraction && b.get(end) == Some(&b'.') {
        end += 1;
        // up to eight digits in one word operation, the rest (a ninth, or all of a text too
        // short for a word) one by one
        let mut value = 0u64;
        if let Some(w) = b.get(20..28).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            let (eight, n) = leading_digits(u64::from_le_bytes(w));
            value = eight;
            end += n;
        }
        while let Some(d) = b.get(end).map(|d| d.wrapping_sub(b'0')).filter(|&d| d < 10) {
            if end == 29 {
                return None;
            }
            value = value * 10 + u64::from(d);
            end += 1;
        }
        if end == 20 {
            return None;
        }
        // at most nine digits: below 10^9, which a u32 holds
        nanos = (value * super::convert::TENS.get(29 - end).copied().unwrap_or(0)) as u32;
    }
    let value = OracleDateTime::new(
        year as i16,
        month as u8,
        day as u8,
        hour as u8,
        minute as u8,
        second as u8,
        nanos,
    )?;
    Some((value, end))
}

/// `±HH:MM` at the start of `b`, as the session's `TZH:TZM` writes it, in range: the offset in
/// minutes (what [`parse_zone`] gives for it).
#[inline]
pub(super) fn plain_offset(b: &[u8]) -> Option<i16> {
    let z: &[u8; 6] = b.get(..6)?.try_into().ok()?;
    let d = |i: usize| z[i].wrapping_sub(b'0');
    if z[3] != b':' || d(1).max(d(2)).max(d(4)).max(d(5)) >= 10 {
        return None;
    }
    let h = i16::from(d(1)) * 10 + i16::from(d(2));
    let m = i16::from(d(4)) * 10 + i16::from(d(5));
    if h > 14 || m > 59 {
        return None;
    }
    match z[0] {
        b'+' => Some(h * 60 + m),
        b'-' => Some(-(h * 60 + m)),
        _ => None,
    }
}

/// The optional fraction after the seconds at `end`, and the value.
fn finish_datetime(
    text: &str,
    negative: bool,
    [year, month, day, hour, minute, second]: [u32; 6],
    mut end: usize,
    allow_fraction: bool,
) -> Result<(OracleDateTime, &str)> {
    let b = text.as_bytes();
    let mut nanos = 0u32;
    if b.get(end) == Some(&b'.') {
        if !allow_fraction {
            return Err("a DATE carries no fraction of a second");
        }
        end += 1;
        let mut n = 0;
        while let Some(&d) = b.get(end) {
            if !d.is_ascii_digit() {
                break;
            }
            if n == 9 {
                return Err("more than 9 fractional digits");
            }
            nanos = nanos * 10 + u32::from(d - b'0');
            n += 1;
            end += 1;
        }
        for _ in n..9 {
            nanos *= 10;
        }
    }
    let year = year as i16;
    let year = if negative { -year } else { year };
    let value = OracleDateTime::new(
        year,
        month as u8,
        day as u8,
        hour as u8,
        minute as u8,
        second as u8,
        nanos,
    )
    .ok_or("not a valid date or time")?;
    Ok((value, &text[end..]))
}

/// A DATE literal (no fraction, nothing after it) written with a format of sign rule `sign`.
pub(super) fn parse_date(text: &str, sign: YearSign) -> Result<OracleDateTime> {
    let (value, rest) = parse_datetime(text, false, sign)?;
    if !trim(rest).is_empty() {
        return Err("text after the time of day");
    }
    Ok(value)
}

/// A TIMESTAMP literal (fraction allowed, nothing after it).
pub fn parse_timestamp(text: &str) -> Result<OracleDateTime> {
    let (value, rest) = parse_datetime(text, true, YearSign::Signed)?;
    if !trim(rest).is_empty() {
        return Err("text after the time of day");
    }
    Ok(value)
}

/// A TIMESTAMP WITH TIME ZONE literal; the zone is `None` when the text has none (as for
/// TIMESTAMP WITH LOCAL TIME ZONE).
pub fn parse_timestamp_tz(text: &str) -> Result<(OracleDateTime, Option<TimeZone>)> {
    let (value, rest) = parse_datetime(text, true, YearSign::Signed)?;
    let zone = trim(rest);
    if zone.is_empty() {
        return Ok((value, None));
    }
    if !rest.starts_with(' ') {
        return Err("a blank before the time zone");
    }
    Ok((value, Some(parse_zone(zone)?)))
}

/// `+05:30`, `-08:00`, `+5:30` or a region name such as `Europe/Paris`.
fn parse_zone(zone: &str) -> Result<TimeZone> {
    let b = zone.as_bytes();
    match b.first() {
        // `+05:30`, as the session's TZH:TZM writes it
        Some(&sign @ (b'+' | b'-'))
            if b.len() == 6
                && b[3] == b':'
                && [b[1], b[2], b[4], b[5]].iter().all(u8::is_ascii_digit) =>
        {
            let h = i16::from(b[1] - b'0') * 10 + i16::from(b[2] - b'0');
            let m = i16::from(b[4] - b'0') * 10 + i16::from(b[5] - b'0');
            if h > 14 || m > 59 {
                return Err("a time zone offset out of range");
            }
            let total = h * 60 + m;
            Ok(TimeZone::Offset(if sign == b'-' { -total } else { total }))
        }
        Some(&sign @ (b'+' | b'-')) => {
            let colon = zone.find(':').ok_or("a time zone offset without ':'")?;
            let hours = zone.get(1..colon).ok_or("a bad time zone offset")?;
            let minutes = zone.get(colon + 1..).ok_or("a bad time zone offset")?;
            if hours.is_empty()
                || hours.len() > 2
                || minutes.len() != 2
                || !hours
                    .bytes()
                    .chain(minutes.bytes())
                    .all(|d| d.is_ascii_digit())
            {
                return Err("a bad time zone offset");
            }
            let h: i16 = hours.parse().map_err(|_| "a bad time zone offset")?;
            let m: i16 = minutes.parse().map_err(|_| "a bad time zone offset")?;
            if h > 14 || m > 59 {
                return Err("a time zone offset out of range");
            }
            let total = h * 60 + m;
            Ok(TimeZone::Offset(if sign == b'-' { -total } else { total }))
        }
        Some(_)
            if zone.bytes().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, b'/' | b'_' | b'-' | b'+' | b' ')
            }) =>
        {
            Ok(TimeZone::Region(zone.into()))
        }
        _ => Err("a bad time zone"),
    }
}

/// Moves a wall-clock time by `minutes` (used to read a TIMESTAMP WITH LOCAL TIME ZONE that
/// carries an offset as UTC).
pub fn shift_minutes(value: OracleDateTime, minutes: i64) -> Result<OracleDateTime> {
    let secs = value.days_since_epoch() * 86_400
        + i64::from(value.hour) * 3600
        + i64::from(value.minute) * 60
        + i64::from(value.second)
        + minutes * 60;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let year = i16::try_from(year).map_err(|_| "a date out of range")?;
    OracleDateTime::new(
        year,
        month,
        day,
        (rem / 3600) as u8,
        (rem % 3600 / 60) as u8,
        (rem % 60) as u8,
        value.nanos,
    )
    .ok_or("a date out of range")
}

/// Howard Hinnant's civil_from_days (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn sign_and_rest(text: &str) -> (bool, &str) {
    let text = trim(text);
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

fn small_number(text: &str, max_len: usize) -> Result<i64> {
    if text.is_empty() || text.len() > max_len || !text.bytes().all(|d| d.is_ascii_digit()) {
        return Err("not an interval");
    }
    // at most `max_len` (≤ 9 here) plain digits: no overflow, and what `str::parse` gives
    Ok(text.bytes().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
}

/// `+YYYY-MM` → months.
pub fn parse_interval_ym(text: &str) -> Result<i64> {
    match interval_ym_canonical(text) {
        Some(result) => result,
        None => interval_ym_general(text),
    }
}

#[cold]
#[inline(never)]
fn interval_ym_general(text: &str) -> Result<i64> {
    let (negative, rest) = sign_and_rest(text);
    // a one-byte search: `split_once` sets up a pattern searcher for a one-byte needle
    let dash = rest
        .bytes()
        .position(|b| b == b'-')
        .ok_or("not an interval year to month")?;
    let (years, months) = (&rest[..dash], &rest[dash + 1..]);
    let years = small_number(years, 9)?;
    let months = small_number(months, 2)?;
    if months > 11 {
        return Err("months out of range");
    }
    let total = years * 12 + months;
    Ok(if negative { -total } else { total })
}

/// The form LogMiner writes, `[+-]Y{1,9}-M{1,2}` with nothing around it, read in one pass.
/// `None` for any other text: [`parse_interval_ym`]'s general path decides then (it reads
/// this form identically).
#[inline]
fn interval_ym_canonical(text: &str) -> Option<Result<i64>> {
    let b = text.as_bytes();
    let (negative, mut i) = match b.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let years = digits_at(b, &mut i, 9)?;
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let months = digits_at(b, &mut i, 2)?;
    if i != b.len() {
        return None;
    }
    if months > 11 {
        return Some(Err("months out of range"));
    }
    let total = i64::from(years) * 12 + i64::from(months);
    Some(Ok(if negative { -total } else { total }))
}

/// `+DDDDD HH:MI:SS[.F{0,9}]` → nanoseconds.
pub fn parse_interval_ds(text: &str) -> Result<i128> {
    match interval_ds_canonical(text) {
        Some(result) => result,
        None => interval_ds_general(text),
    }
}

#[cold]
#[inline(never)]
fn interval_ds_general(text: &str) -> Result<i128> {
    let (negative, rest) = sign_and_rest(text);
    let (days, time) = rest
        .split_once(' ')
        .ok_or("not an interval day to second")?;
    let days = small_number(days, 9)?;
    let (hms, fraction) = match time.split_once('.') {
        Some((hms, f)) => (hms, f),
        None => (time, ""),
    };
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not an interval day to second");
    };
    let (h, m, s) = (
        small_number(h, 2)?,
        small_number(m, 2)?,
        small_number(s, 2)?,
    );
    if h > 23 || m > 59 || s > 59 {
        return Err("interval field out of range");
    }
    if fraction.len() > 9 || !fraction.bytes().all(|d| d.is_ascii_digit()) {
        return Err("not an interval day to second");
    }
    let mut nanos: i128 = 0;
    for d in fraction.bytes() {
        nanos = nanos * 10 + i128::from(d - b'0');
    }
    for _ in fraction.len()..9 {
        nanos *= 10;
    }
    let secs = i128::from(days) * 86_400 + i128::from(h * 3600 + m * 60 + s);
    let total = secs * 1_000_000_000 + nanos;
    Ok(if negative { -total } else { total })
}

/// A run of 1 to `max` (at most 9) ASCII digits at `*i`, which moves past the run: its
/// value; `None` for no digit or more than `max`.
#[inline(always)]
fn digits_at(b: &[u8], i: &mut usize, max: usize) -> Option<u32> {
    let start = *i;
    let mut value = 0u32;
    while let Some(&c) = b.get(*i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        // a longer run than `max` wraps here, and is refused below
        value = value.wrapping_mul(10).wrapping_add(u32::from(d));
        *i += 1;
    }
    let n = *i - start;
    (n != 0 && n <= max).then_some(value)
}

/// `HH:MM:SS` at `*i`, two digits to each field (as LogMiner writes them), which moves past
/// it: the three fields; `None` for any other text there.
#[inline(always)]
fn fixed_hms(b: &[u8], i: &mut usize) -> Option<[u32; 3]> {
    let w: &[u8; 8] = b.get(*i..*i + 8)?.try_into().ok()?;
    let d = |k: usize| u32::from(w[k].wrapping_sub(b'0'));
    if w[2] != b':' || w[5] != b':' || d(0).max(d(1)).max(d(3)).max(d(4)).max(d(6)).max(d(7)) > 9 {
        return None;
    }
    *i += 8;
    Some([d(0) * 10 + d(1), d(3) * 10 + d(4), d(6) * 10 + d(7)])
}

/// The form LogMiner writes, `[+-]D{1,9} H{1,2}:M{1,2}:S{1,2}[.F{0,9}]` with nothing around
/// it, read in one pass. `None` for any other text: [`parse_interval_ds`]'s general path
/// decides then (it reads this form identically).
#[inline]
fn interval_ds_canonical(text: &str) -> Option<Result<i128>> {
    /// Nanoseconds per unit of a fraction's last digit, by the number of digits less one.
    const SCALE: [u64; 9] = [
        100_000_000,
        10_000_000,
        1_000_000,
        100_000,
        10_000,
        1_000,
        100,
        10,
        1,
    ];
    let b = text.as_bytes();
    let (negative, mut i) = match b.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let days = digits_at(b, &mut i, 9)?;
    if b.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let [h, m, s] = match fixed_hms(b, &mut i) {
        Some(hms) => hms,
        None => {
            let h = digits_at(b, &mut i, 2)?;
            if b.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            let m = digits_at(b, &mut i, 2)?;
            if b.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            [h, m, digits_at(b, &mut i, 2)?]
        }
    };
    let mut nanos = 0u64;
    if i < b.len() {
        if b.get(i) != Some(&b'.') {
            return None;
        }
        i += 1;
        let start = i;
        if i < b.len() {
            let f = digits_at(b, &mut i, 9)?;
            if i != b.len() {
                return None;
            }
            nanos = u64::from(f) * SCALE.get((i - start).wrapping_sub(1)).copied()?;
        }
    }
    if h > 23 || m > 59 || s > 59 {
        return Some(Err("interval field out of range"));
    }
    // at most 999 999 999 days: the seconds fit 64 bits, the nanoseconds do not
    let secs = u64::from(days) * 86_400 + u64::from(h * 3600 + m * 60 + s);
    let total = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    Some(Ok(if negative { -total } else { total }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `YYYY-MM-DD HH24:MI:SS` at `at` with every digit and separator in place (the form the
    /// session's NLS formats write): its six fields, read at fixed positions. `None` for anything
    /// else, which the field-by-field path then reads and reports.
    fn fixed_datetime_bytewise(b: &[u8], at: usize) -> Option<[u32; 6]> {
        let f: &[u8; 19] = b.get(at..at + 19)?.try_into().ok()?;
        if f[4] != b'-' || f[7] != b'-' || f[10] != b' ' || f[13] != b':' || f[16] != b':' {
            return None;
        }
        let d = |i: usize| u32::from(f[i].wrapping_sub(b'0'));
        // a byte that is not a digit wraps to 10 or more; written out so that it compiles to
        // straight-line compares
        let widest = d(0)
            .max(d(1))
            .max(d(2))
            .max(d(3))
            .max(d(5))
            .max(d(6))
            .max(d(8))
            .max(d(9))
            .max(d(11))
            .max(d(12))
            .max(d(14))
            .max(d(15))
            .max(d(17))
            .max(d(18));
        if widest >= 10 {
            return None;
        }
        Some([
            d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3),
            d(5) * 10 + d(6),
            d(8) * 10 + d(9),
            d(11) * 10 + d(12),
            d(14) * 10 + d(15),
            d(17) * 10 + d(18),
        ])
    }

    #[test]
    fn fixed_datetime_reads_as_byte_by_byte() {
        let mut texts: Vec<Vec<u8>> = vec![
            b"2026-02-28 13:45:59".to_vec(),
            b"0000-00-00 00:00:00".to_vec(),
            b"9999-99-99 99:99:99".to_vec(),
            b"2026-02-28 13:45:5".to_vec(),
            b"2026-02-28T13:45:59".to_vec(),
            b" 2026-02-28 13:45:59".to_vec(),
        ];
        let mut next = crate::test_support::xorshift(0x1234_5678_9abc_def1u64);
        let base = b"2026-02-28 13:45:59.123";
        for _ in 0..200_000 {
            let mut t = base.to_vec();
            for _ in 0..1 + next() % 2 {
                let at = (next() % t.len() as u64) as usize;
                t[at] = match next() % 4 {
                    0 => b'0' + (next() % 10) as u8,
                    1 => [b'-', b':', b' ', b'/', b'.', b'0' - 1, b'9' + 1][(next() % 7) as usize],
                    _ => next() as u8,
                };
            }
            texts.push(t);
        }
        for t in &texts {
            for at in [0, 1] {
                assert_eq!(
                    fixed_datetime(t, at),
                    fixed_datetime_bytewise(t, at),
                    "{t:?} {at}"
                );
            }
        }
    }

    fn dt(y: i16, mo: u8, d: u8, h: u8, mi: u8, s: u8, n: u32) -> OracleDateTime {
        OracleDateTime::new(y, mo, d, h, mi, s, n).unwrap()
    }

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(
            parse_date("2026-02-28 13:45:59", YearSign::Signed),
            Ok(dt(2026, 2, 28, 13, 45, 59, 0))
        );
        assert_eq!(
            parse_date(" 9999-12-31 23:59:59", YearSign::Signed),
            Ok(dt(9999, 12, 31, 23, 59, 59, 0))
        );
        assert_eq!(
            parse_date("-4712-01-01 00:00:00", YearSign::Signed),
            Ok(dt(-4712, 1, 1, 0, 0, 0, 0))
        );
        assert!(parse_date("28-FEB-26", YearSign::Signed).is_err());
        assert!(parse_date("2026-02-30 00:00:00", YearSign::Signed).is_err());
        assert_eq!(
            parse_timestamp("2026-03-29 01:30:00.123456000"),
            Ok(dt(2026, 3, 29, 1, 30, 0, 123_456_000))
        );
        assert_eq!(
            parse_timestamp("2020-02-01 00:00:00."),
            Ok(dt(2020, 2, 1, 0, 0, 0, 0))
        );
        assert_eq!(
            parse_timestamp("2020-02-01 00:00:00.5"),
            Ok(dt(2020, 2, 1, 0, 0, 0, 500_000_000))
        );
        assert!(parse_timestamp("2020-02-01 00:00:00.1234567891").is_err());
        assert_eq!(
            parse_timestamp_tz("2026-03-29 01:30:00.123456789 +05:30"),
            Ok((
                dt(2026, 3, 29, 1, 30, 0, 123_456_789),
                Some(TimeZone::Offset(330))
            ))
        );
        assert_eq!(
            parse_timestamp_tz("2026-03-29 01:30:00.000000000 -08:00"),
            Ok((dt(2026, 3, 29, 1, 30, 0, 0), Some(TimeZone::Offset(-480))))
        );
        assert_eq!(
            parse_timestamp_tz("2026-03-29 01:30:00 Europe/Paris"),
            Ok((
                dt(2026, 3, 29, 1, 30, 0, 0),
                Some(TimeZone::Region("Europe/Paris".into()))
            ))
        );
        assert_eq!(
            parse_timestamp_tz("2026-03-29 01:30:00.1"),
            Ok((dt(2026, 3, 29, 1, 30, 0, 100_000_000), None))
        );
    }

    #[test]
    fn trim_agrees_with_str_trim() {
        for text in [
            "",
            " ",
            "a",
            " a",
            "a ",
            "\ta\n",
            "+05:30",
            "\u{a0}x",
            "x\u{a0}",
            "\u{2003}",
            "é",
            "\x0b1\x0c",
            "\x1c1",
        ] {
            assert_eq!(trim(text), text.trim(), "{text:?}");
        }
    }

    #[test]
    fn fixed_positions_agree_with_the_fields() {
        // every one-byte change of a canonical timestamp reads (or fails) as the field-by-field
        // path reads it
        let canonical = "2026-02-28 13:45:59.123";
        for at in 0..canonical.len() {
            for replacement in [b'0', b'9', b'-', b' ', b':', b'.', b'x', b'/'] {
                let mut bytes = canonical.as_bytes().to_vec();
                bytes[at] = replacement;
                let text = String::from_utf8(bytes).unwrap();
                let fixed = fixed_datetime(text.as_bytes(), 0);
                let fields = (|| {
                    let b = text.as_bytes();
                    if b[4] != b'-'
                        || b[7] != b'-'
                        || b[10] != b' '
                        || b[13] != b':'
                        || b[16] != b':'
                    {
                        return None;
                    }
                    let n = |r: std::ops::Range<usize>| text.get(r)?.parse::<u32>().ok();
                    Some([
                        n(0..4)?,
                        n(5..7)?,
                        n(8..10)?,
                        n(11..13)?,
                        n(14..16)?,
                        n(17..19)?,
                    ])
                })();
                assert_eq!(fixed, fields, "{text}");
            }
        }
    }

    #[test]
    fn shifting() {
        let v = dt(2026, 1, 1, 1, 0, 0, 7);
        assert_eq!(shift_minutes(v, -330), Ok(dt(2025, 12, 31, 19, 30, 0, 7)));
        assert_eq!(shift_minutes(v, 0), Ok(v));
        assert!(shift_minutes(dt(9999, 12, 31, 23, 0, 0, 0), 120).is_err());
    }

    #[test]
    fn intervals() {
        assert_eq!(parse_interval_ym("+0012-03"), Ok(147));
        assert_eq!(parse_interval_ym("-0001-11"), Ok(-23));
        assert!(parse_interval_ym("+0001-12").is_err());
        assert_eq!(
            parse_interval_ds("+00005 04:03:02.123456"),
            Ok(((5 * 86_400 + 4 * 3600 + 3 * 60 + 2) as i128) * 1_000_000_000 + 123_456_000)
        );
        assert_eq!(parse_interval_ds("-00000 00:00:01"), Ok(-1_000_000_000));
        assert!(parse_interval_ds("+00005 24:00:00").is_err());
    }

    #[test]
    fn canonical_interval_ym_agrees_with_the_general_path() {
        // LogMiner's own form takes the fast path
        assert!(interval_ym_canonical("+000000012-03").is_some());
        assert!(interval_ym_canonical("-0001-11").is_some());
        for text in [
            "+0012-03",
            "-0001-11",
            "+0001-12",
            "12-3",
            "-0-0",
            "+123456789-11",
            "+1234567890-01",
            "+1-123",
            "+1-",
            "+-1",
            "+1--1",
            "+1-1-1",
            "+1 -1",
            " +1-1",
            "+1-1 ",
            "++1-1",
            "+1.5-1",
            "-",
            "",
            "+99999999999999999999-1",
        ] {
            if let Some(fast) = interval_ym_canonical(text) {
                assert_eq!(fast, interval_ym_general(text), "{text:?}");
            }
            assert_eq!(
                parse_interval_ym(text),
                interval_ym_general(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn canonical_interval_ds_agrees_with_the_general_path() {
        // LogMiner's own form takes the fast path
        assert!(interval_ds_canonical("+00005 04:03:02.123456").is_some());
        assert!(interval_ds_canonical("-000000000 00:00:01").is_some());
        for text in [
            "+00005 04:03:02.123456",
            "-00000 00:00:01",
            "+00005 24:00:00",
            "5 4:3:2",
            "+5 4:3:2.",
            "+123456789 23:59:59.999999999",
            "+1234567890 00:00:00",
            "+1 00:00:00.1234567890",
            "+1 00:60:00",
            "+1 00:00:60",
            "+1 000:00:00",
            "+1 00:00",
            "+1 00:00:00:00",
            "+1 00:00:00.12a",
            "+1  00:00:00",
            " +1 00:00:00",
            "+1 00:00:00 ",
            "++1 00:00:00",
            "-",
            "",
            "+1 00:00:00..5",
            "+1 00:00:00.",
            "+99999999999999999999 00:00:00",
            "+1 00:00:00.99999999999999999999",
            "-999999999 23:59:59.999999999",
            "+1 00:00:000",
            "+1 0:00:00.5",
            "+1 00:0:00",
            "+1 00:00:0",
            "+1 00:00:0.5",
            "+1 00:00:00:",
            "+1 0a:00:00",
            "+1 00-00:00",
        ] {
            if let Some(fast) = interval_ds_canonical(text) {
                assert_eq!(fast, interval_ds_general(text), "{text:?}");
            }
            assert_eq!(
                parse_interval_ds(text),
                interval_ds_general(text),
                "{text:?}"
            );
        }
    }
}
