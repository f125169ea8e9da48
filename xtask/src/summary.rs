//! The summary `cargo x bench` prints after the criterion benches: each measured rate beside
//! its reference in the same run, as a percentage. Absolute rates depend on the machine; a
//! rate over the memory-bandwidth pass of the same bytes (`…/touch`), or the engine over the
//! decoder alone on the same rows, means the same on any machine.
//!
//! It reads criterion's own results (`<target>/criterion/<group>/<bench>/new/estimates.json`,
//! the median) and prints only the pairs whose two sides were measured.

use std::fs;
use std::path::Path;

/// (bench, reference, what the percentage says): the bench's median time over the reference's
/// is the bench's rate as a percentage of the reference's, both over the same input.
pub const RATIOS: &[(&str, &str, &str)] = &[
    ("decode/rows", "decode/touch", "of the bandwidth pass"),
    (
        "decode_small/rows",
        "decode_small/touch",
        "of the bandwidth pass",
    ),
    ("parse_only/rows", "decode/touch", "of the bandwidth pass"),
    ("engine/changes", "engine/touch", "of the bandwidth pass"),
    (
        "engine/changes",
        "engine/decode_only_rows",
        "of decoding alone",
    ),
    (
        "engine/changes_decode_threads_2",
        "engine/decode_only_rows",
        "of decoding alone",
    ),
    (
        "decode_lag/generic",
        "decode_lag/named",
        "of the same rows named (target: 50 %)",
    ),
];

/// The median time of a criterion bench, in nanoseconds, if it was measured.
pub fn median_ns(criterion_dir: &Path, bench: &str) -> Option<f64> {
    let text = fs::read_to_string(criterion_dir.join(bench).join("new/estimates.json")).ok()?;
    point_estimate(&text, "median")
}

/// `point_estimate` of the `field` object of criterion's estimates JSON.
fn point_estimate(json: &str, field: &str) -> Option<f64> {
    let at = json.find(&format!("\"{field}\""))?;
    let rest = &json[at..];
    let value = &rest[rest.find("\"point_estimate\"")? + "\"point_estimate\"".len()..];
    let value = value.trim_start().strip_prefix(':')?.trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .unwrap_or(value.len());
    value[..end].parse().ok()
}

/// The table's lines: one per ratio whose two benches were measured.
pub fn lines(criterion_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (bench, reference, meaning) in RATIOS {
        let (Some(t), Some(r)) = (
            median_ns(criterion_dir, bench),
            median_ns(criterion_dir, reference),
        ) else {
            continue;
        };
        if t > 0.0 {
            out.push(format!(
                "{bench:<34} {:>12.3} ms  {:>6.1} % {meaning} ({reference})",
                t / 1e6,
                100.0 * r / t
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ESTIMATES: &str = r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":10.0,"upper_bound":12.0},"point_estimate":11.0,"standard_error":0.5},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":9.0,"upper_bound":10.0},"point_estimate":9.5e6,"standard_error":0.1}}"#;

    #[test]
    fn the_median_is_read_not_the_mean() {
        assert_eq!(point_estimate(ESTIMATES, "median"), Some(9.5e6));
        assert_eq!(point_estimate(ESTIMATES, "mean"), Some(11.0));
        assert_eq!(point_estimate("{}", "median"), None);
    }

    #[test]
    fn a_ratio_needs_both_sides_and_is_the_reference_time_over_the_bench_time() {
        let dir = std::env::temp_dir().join(format!("xtask-summary-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let write = |bench: &str, ns: f64| {
            let at = dir.join(bench).join("new");
            assert!(fs::create_dir_all(&at).is_ok());
            let json = format!(r#"{{"median":{{"point_estimate":{ns}}}}}"#);
            assert!(fs::write(at.join("estimates.json"), json).is_ok());
        };
        write("decode_small/rows", 4e6);
        write("decode_small/touch", 1e6);
        write("engine/changes", 2e6);
        let lines = lines(&dir);
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("decode_small/rows"), "{lines:?}");
        assert!(
            lines[0].contains("25.0 % of the bandwidth pass"),
            "{lines:?}"
        );
    }
}
