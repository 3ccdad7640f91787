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
    hint::<T, { std::arch::x86_64::_MM_HINT_T0 }>(table, i);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, i);
}

/// Bring the cache line of `table[i]` into the L2 cache only (no-op past the end, or off
/// x86-64): for a line needed many iterations later. A prefetch into L1 holds one of the
/// core's few L1 fill buffers until the line arrives, so a loop that asks for many lines
/// stalls on the prefetch instruction itself once they are all busy; a prefetch into L2
/// is tracked by the L2's more numerous miss entries, so more misses overlap (the load
/// then hits L2). Measured on the GC copy loop (docs/simulator.md, "Round 9").
#[inline(always)]
pub fn line_l2<T>(table: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    hint::<T, { std::arch::x86_64::_MM_HINT_T1 }>(table, i);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, i);
}

/// `_mm_prefetch` with hint `H` of `table[i]`, if `i` is in range.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hint<T, const H: i32>(table: &[T], i: usize) {
    use std::arch::x86_64::{_MM_HINT_T0, _MM_HINT_T1};
    const {
        assert!(
            H == _MM_HINT_T0 || H == _MM_HINT_T1,
            "a read hint into L1 or L2"
        )
    };
    if let Some(x) = table.get(i) {
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is in the target's
        // baseline). It is only a hint: it never faults, writes nothing and returns nothing,
        // and the address is that of a live element of `table`, borrowed for the call.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<H>(std::ptr::from_ref(x).cast::<i8>());
        }
    }
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
            super::line_l2(&table, i);
            super::line_l2(&wide, i);
        }
        super::line::<u32>(&[], 0);
        super::line_l2::<u32>(&[], 0);
        assert!(table.iter().zip(0u32..).all(|(&x, i)| x == i));
        assert!(wide.iter().zip(0u64..).all(|(&x, i)| x == i));
    }
}
