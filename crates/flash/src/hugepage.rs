//! Transparent huge pages for the mapping tables.
//!
//! The FTL's tables are indexed at random; with 4 KiB pages nearly every lookup in a 64 MiB
//! table also misses the TLB. Linux here runs THP in `madvise` mode, so we ask for it.

/// Advise the kernel to back `buf` with huge pages. Purely advisory: failures are ignored.
pub(crate) fn advise(buf: &mut [u32]) {
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
    // kernel backs those pages; it never changes their contents, so the Vec's invariants hold.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
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
}
