//! A heap buffer with a chosen memory alignment, for O_DIRECT I/O (the kernel DMAs straight
//! into user memory, so the buffer address must be aligned like the device's logical block).

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A zero-initialized, fixed-size byte buffer whose address is a multiple of `align`.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively (like Box<[u8]>); no interior mutability.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give `&[u8]`, which is Sync.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` zero bytes aligned to `align` (a power of two).
    ///
    /// # Panics
    /// If `align` is not a power of two or the size overflows (programming errors); aborts on
    /// out-of-memory like `Vec`.
    #[must_use]
    pub fn zeroed(len: usize, align: usize) -> Self {
        // A zero-sized allocation is undefined for `alloc`: allocate at least one byte.
        let layout =
            Layout::from_size_align(len.max(1), align).expect("AlignedBuf: bad size or alignment");
        // SAFETY: `layout` has a non-zero size (checked above) and a valid power-of-two
        // alignment (Layout::from_size_align verified it). The memory is zeroed, so every byte
        // is initialized before we hand out `&[u8]`.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        assert!(
            is_aligned(ptr.as_ptr(), align),
            "the allocator honoured the alignment"
        );
        AlignedBuf { ptr, len, layout }
    }

    /// A copy of `data` in an aligned buffer.
    #[must_use]
    pub fn from_slice(data: &[u8], align: usize) -> Self {
        let mut b = Self::zeroed(data.len(), align);
        b.copy_from_slice(data);
        b
    }

    /// The alignment of the buffer's address.
    #[must_use]
    pub fn align(&self) -> usize {
        self.layout.align()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `layout.size() >= len` initialized bytes owned by self and
        // valid for the lifetime of `&self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed(self.layout)` and is freed exactly once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("align", &self.align())
            .finish()
    }
}

/// True if `p` is a multiple of `align` (a power of two).
#[inline]
pub(crate) fn is_aligned(p: *const u8, align: usize) -> bool {
    (p as usize) & (align - 1) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_writable() {
        for &align in &[512usize, 4096, 65536] {
            for &len in &[0usize, 1, 4096, 3 * 4096 + 7] {
                let mut b = AlignedBuf::zeroed(len, align);
                assert_eq!(b.len(), len);
                assert!(is_aligned(b.as_ptr(), align), "len {len} align {align}");
                assert!(b.iter().all(|&x| x == 0));
                b.iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = i.to_le_bytes()[0]);
                assert!(b.iter().enumerate().all(|(i, &x)| x == i.to_le_bytes()[0]));
            }
        }
        let c = AlignedBuf::from_slice(&[1, 2, 3], 4096);
        assert_eq!(&c[..], &[1, 2, 3]);
        // Moving to another thread and dropping there is fine (Send).
        std::thread::spawn(move || drop(c)).join().unwrap();
    }

    #[test]
    #[should_panic]
    fn non_power_of_two_alignment_panics() {
        let _ = AlignedBuf::zeroed(4096, 3000);
    }
}
