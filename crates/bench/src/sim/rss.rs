//! The resident memory a run adds, as the kernel counts it: the check of the model's own
//! accounting ([`nowa_flash::Ftl::memory_bytes`], which adds up its tables).
//!
//! A run reads the process's resident set before its setup, resets the kernel's peak after
//! it (so the future-knowledge stream's temporary table, freed by then, is not in the peak),
//! and reads the peak after its measured phase. What it added is the peak less the starting
//! resident set, less the write stream it holds for the schemes that read the future (the
//! workload's input, not the model's state). Linux only (`/proc/self`); elsewhere it says 0.

/// A field of `/proc/self/status` in bytes (its value is in KiB), 0 when absent.
pub(crate) fn status_bytes(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib.saturating_mul(1024))
}

/// The resident set of the process now, after handing the allocator's free memory back to
/// the kernel (an earlier run's freed tables would otherwise be reused without showing).
pub(crate) fn resident_now() -> u64 {
    trim_heap();
    status_bytes("VmRSS:")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_heap() {
    // SAFETY: malloc_trim only returns free heap memory to the kernel; it takes no pointer
    // and leaves every live allocation where it is. Exercised by every `run` (the test
    // `the_resident_memory_of_a_run_is_the_models_accounting`).
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() {}

/// Reset the kernel's peak resident set (VmHWM) to the current one. False when it cannot.
pub(crate) fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// What a run added: its peak since [`reset_peak`] less `before` ([`resident_now`] before its
/// setup) and less `stream` bytes of input it held; 0 when the kernel does not say.
pub(crate) fn added(before: u64, stream: u64, reset: bool) -> u64 {
    let peak = status_bytes("VmHWM:");
    if !reset || peak == 0 || before == 0 {
        return 0;
    }
    peak.saturating_sub(before).saturating_sub(stream)
}

#[cfg(test)]
mod tests {
    /// The status fields read back as bytes, the peak never below the current set; a missing
    /// field is 0.
    #[test]
    fn status_fields_are_bytes() {
        let rss = super::resident_now();
        let peak = super::status_bytes("VmHWM:");
        if cfg!(target_os = "linux") {
            assert!(rss > 0 && rss % 1024 == 0, "VmRSS {rss}");
            assert!(peak >= rss / 2, "peak {peak} and resident {rss}");
        }
        assert_eq!(super::status_bytes("NoSuchField:"), 0);
        assert_eq!(super::added(0, 0, true), 0, "no baseline: not measured");
        assert_eq!(super::added(1, 0, false), 0, "no reset: not measured");
    }
}
