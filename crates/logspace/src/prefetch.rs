//! Software prefetch of a table's random line (the FTL's mapping, a placement scheme's
//! per-page state).
//!
//! A host write and a GC copy each touch random lines of per-page tables (the mapping, and
//! with a placement scheme its state: SepBIT's last write times, FK's death times): DRAM
//! misses. Asking for a line a few writes ahead lets those misses overlap with the work in
//! between instead of stalling it. A prefetch is only a hint: it reads nothing the program
//! sees, so it cannot change a result.

/// Bring the cache line of `table[i]` towards the core (no-op past the end, or off x86-64).
#[inline(always)]
pub fn line<T>(table: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = table.get(i) {
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is in the target's
        // baseline). It is only a hint: it never faults, writes nothing and returns nothing,
        // and the address is that of a live element of `table`, borrowed for the call.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(x).cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, i);
}

#[cfg(test)]
mod tests {
    /// The prefetch runs on the table's first, last and a middle element, and past its end,
    /// for two element sizes, and leaves the table as it was (a hint changes nothing).
    #[test]
    fn prefetch_changes_nothing() {
        let table: Vec<u32> = (0..100_000).collect();
        let wide: Vec<u64> = (0..1000).collect();
        for i in [0, 1, 50_000, 99_999, 100_000, usize::MAX] {
            super::line(&table, i);
            super::line(&wide, i);
        }
        super::line::<u32>(&[], 0);
        assert!(table.iter().zip(0u32..).all(|(&x, i)| x == i));
        assert!(wide.iter().zip(0u64..).all(|(&x, i)| x == i));
    }
}
