//! Transparent huge pages for per-page tables (the FTL's mapping, a placement scheme's
//! per-page state).
//!
//! These tables are indexed at random; with 4 KiB pages nearly every lookup in a table of tens
//! of MiB also misses the TLB. Linux here runs THP in `madvise` mode, so we ask for it, before
//! the table is first touched (the kernel picks the page size at the first fault).

/// Advise the kernel to back `buf` with huge pages. Purely advisory: failures are ignored.
pub fn advise<T>(buf: &mut [T]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let aligned = start.next_multiple_of(HUGE);
    if end <= aligned + HUGE {
        return;
    }
    let len = (end - aligned) / HUGE * HUGE;
    // SAFETY: [aligned, aligned + len) lies inside `buf`, which we borrow mutably, so no other
    // reference observes the range while the call runs. MADV_HUGEPAGE only changes how the
    // kernel backs those pages; it never changes their contents, so the slice's invariants
    // hold.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

/// `n` copies of `value` in a table backed by huge pages: allocated zeroed (untouched, so the
/// kernel has not chosen a page size yet), advised, then filled. `vec![value; n]` with a
/// non-zero value would write every page first and get 4 KiB pages.
pub fn filled<T: Copy + Default + PartialEq>(n: usize, value: T) -> Vec<T> {
    // `vec![zero; n]` of an integer is a zeroed allocation (calloc): nothing touched yet.
    let mut v = vec![T::default(); n];
    advise(&mut v);
    if value != T::default() {
        v.fill(value);
    }
    debug_assert!(v.iter().take(1).all(|&x| x == value), "table filled");
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn advise_keeps_contents() {
        let mut v: Vec<u32> = (0..(3u32 << 20)).collect();
        super::advise(&mut v);
        assert!(v.iter().zip(0u32..).all(|(&x, i)| x == i));
        let mut small = vec![1u32; 10];
        super::advise(&mut small);
        assert_eq!(small, vec![1; 10]);
    }

    /// A filled table holds exactly the value asked for, zero or not, large or small.
    #[test]
    fn filled_holds_the_value_everywhere() {
        let big = super::filled(3 << 20, u32::MAX);
        assert_eq!(big.len(), 3 << 20);
        assert!(big.iter().all(|&x| x == u32::MAX));
        let zero = super::filled(5, 0u8);
        assert_eq!(zero, vec![0u8; 5]);
        let small = super::filled(3, 7u64);
        assert_eq!(small, vec![7u64; 3]);
        assert!(super::filled::<u16>(0, 9).is_empty());
    }
}
