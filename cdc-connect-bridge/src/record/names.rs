//! Schema and field name adjustment (`cdc.schema.name.adjustment.mode`,
//! `cdc.field.name.adjustment.mode`; `docs/decisions.md`, D24): Avro allows
//! `[A-Za-z_][A-Za-z0-9_]*`.
//!
//! | mode | bad character | leading digit | `_` |
//! |---|---|---|---|
//! | `none` | kept | kept | kept |
//! | `avro` | `_` | `_` before it | kept |
//! | `avro_unicode` | `_uXXXX` | `_uXXXX` | `_u005f` |
//!
//! `XXXX` is the UTF-16 code unit in lower-case hex (a character outside the BMP gives two).
//! Schema names are adjusted per dot-separated part; topics are never adjusted.

use cdc_core::config::NameAdjustment;

/// One name (a field, or one part of a schema name) adjusted.
pub fn adjust_name(name: &str, mode: NameAdjustment) -> String {
    match mode {
        NameAdjustment::None => name.to_owned(),
        NameAdjustment::Avro => {
            let mut out = String::with_capacity(name.len() + 1);
            if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
                out.push('_');
            }
            out.extend(name.chars().map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            }));
            out
        }
        NameAdjustment::AvroUnicode => {
            let mut out = String::with_capacity(name.len() + 8);
            if name.is_empty() {
                out.push('_');
            }
            for (i, c) in name.chars().enumerate() {
                let keep = c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit());
                if keep {
                    out.push(c);
                } else {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("_u{unit:04x}"));
                    }
                }
            }
            out
        }
    }
}

/// A dotted schema name adjusted part by part.
pub fn adjust_schema_name(name: &str, mode: NameAdjustment) -> String {
    if mode == NameAdjustment::None {
        return name.to_owned();
    }
    name.split('.')
        .map(|part| adjust_name(part, mode))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_examples() {
        for (name, avro, unicode) in [
            ("my-cdc", "my_cdc", "my_u002dcdc"),
            ("1ST", "_1ST", "_u0031ST"),
            ("ORDER_LINES", "ORDER_LINES", "ORDER_u005fLINES"),
            ("Größe", "Gr__e", "Gr_u00f6_u00dfe"),
            ("A😀", "A_", "A_ud83d_ude00"),
            ("", "_", "_"),
        ] {
            assert_eq!(adjust_name(name, NameAdjustment::Avro), avro, "{name}");
            assert_eq!(
                adjust_name(name, NameAdjustment::AvroUnicode),
                unicode,
                "{name}"
            );
            assert_eq!(adjust_name(name, NameAdjustment::None), name);
        }
        assert_eq!(
            adjust_schema_name("my-cdc.APP.1ST.Key", NameAdjustment::Avro),
            "my_cdc.APP._1ST.Key"
        );
    }
}
