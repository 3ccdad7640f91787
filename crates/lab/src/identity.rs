//! Run identity: the `"nowa"` object at the top of every JSON result and the first line of
//! every CSV, so a result says which code ran which complete spec, with which seed, when.

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// Which run produced a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// nowa's version.
    pub version: String,
    /// The git commit the binary was built from ("unknown" outside a checkout).
    pub commit: String,
    /// The command (`sim`, `ycsb`, `compare`): with `spec`, what `nowa run` needs to run it again.
    pub command: String,
    /// The complete resolved spec (every default and every auto-sized value).
    pub spec: serde_json::Value,
    /// The run's seed (also in `spec`).
    pub seed: u64,
    /// When the run started, UTC, RFC 3339 (`2026-11-29T03:04:05Z`).
    pub started: String,
}

impl Identity {
    /// The identity of a run of `command` with `spec` starting now.
    ///
    /// # Panics
    /// If the spec does not serialize (every spec type does: tested by the round trips).
    #[must_use]
    pub fn now<S: Serialize>(command: &str, spec: &S, seed: u64) -> Identity {
        let spec = serde_json::to_value(spec).expect("a spec serializes");
        assert!(spec.is_object(), "a spec is a JSON object");
        Identity {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: env!("NOWA_COMMIT").to_owned(),
            command: command.to_owned(),
            spec,
            seed,
            started: rfc3339(SystemTime::now()),
        }
    }

    /// The identity as one commented CSV line (`# nowa {...}`), the first line of a CSV.
    ///
    /// # Panics
    /// Never: an identity serializes to one line of a JSON object.
    #[must_use]
    pub fn csv_comment(&self) -> String {
        let json = serde_json::to_string(self).expect("an identity serializes");
        assert!(!json.contains('\n'), "one line");
        assert!(json.starts_with('{'), "the identity is a JSON object");
        format!("# nowa {json}\n")
    }
}

/// Whether the binary's source (the workspace's `crates/` and `Cargo.*`) differed from
/// [`Identity::commit`] when it was built; None: unknown (no git, or `NOWA_DIRTY` set to
/// something else than true / false).
#[must_use]
pub fn source_dirty() -> Option<bool> {
    match env!("NOWA_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Result keys that measure the machine, not the run: when it started, resident memory, and
/// what bound it (judged on the wall clock).
pub const MACHINE_KEYS: [&str; 3] = ["started", "rss_bytes", "bound"];
/// Key endings of the same: durations and rates, by the wall clock or the CPU.
pub const MACHINE_SUFFIXES: [&str; 3] = ["_secs", "_per_sec", "_per_cpu_sec"];

/// True for a result key (or a flattened column `a.b`) that measures the machine: two runs of
/// one spec and seed agree on every other key. The one rule for the Rust tests and Python's
/// `nowa.is_machine`.
#[must_use]
pub fn is_machine_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    MACHINE_KEYS.contains(&last) || MACHINE_SUFFIXES.iter().any(|s| last.ends_with(s))
}

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (UTC): days to a civil date by Howard Hinnant's algorithm.
fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    assert!((1..=12).contains(&month) && (1..=31).contains(&day));
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661);
        assert_eq!(rfc3339(t), "2000-02-29T01:01:01Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(rfc3339(t), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn machine_keys_are_named_by_key_or_ending_at_any_depth() {
        for k in [
            "started",
            "rss_bytes",
            "bound",
            "wall_secs",
            "host_writes_per_cpu_sec",
        ] {
            assert!(is_machine_key(k), "{k}");
            assert!(is_machine_key(&format!("engine.{k}")), "nested {k}");
        }
        for k in [
            "waf",
            "seed",
            "host_writes",
            "secs_total",
            "spec.bound_by",
            "nowa.commit",
        ] {
            assert!(!is_machine_key(k), "{k}");
        }
    }

    #[test]
    fn the_csv_line_is_one_commented_json_line() {
        let id = Identity::now("sim", &serde_json::json!({"seed": 7}), 7);
        let line = id.csv_comment();
        assert!(line.starts_with("# nowa {") && line.ends_with("}\n"));
        let back: Identity =
            serde_json::from_str(line.trim_start_matches("# nowa ")).expect("parses");
        assert_eq!(back, id);
    }
}
