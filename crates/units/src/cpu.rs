//! The one CPU clock: process and thread CPU time in seconds. Speed figures on this shared,
//! noisy machine are stated per CPU second, so every command reads the same clock.

/// CPU time (user + system) the whole process has used so far, in seconds (`getrusage`).
///
/// # Panics
/// Never in practice: `getrusage(RUSAGE_SELF)` fails only on a bad pointer.
#[must_use]
pub fn process_cpu_secs() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` through the pointer, which points to properly
    // aligned, zero-initialized memory of that type; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
    assert_eq!(
        rc, 0,
        "getrusage(RUSAGE_SELF) cannot fail with a valid pointer"
    );
    // SAFETY: getrusage returned 0, so it wrote the whole struct (and it was zeroed before).
    let u = unsafe { u.assume_init() };
    #[expect(
        clippy::cast_precision_loss,
        reason = "seconds and microseconds of CPU time, far below 2^53"
    )]
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// CPU time the calling thread has used so far, in seconds (`CLOCK_THREAD_CPUTIME_ID`).
///
/// # Panics
/// Never in practice: the clock exists on every Linux since 2.6.12.
#[must_use]
pub fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call; the clock id
    // is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID is always available");
    #[expect(clippy::cast_precision_loss, reason = "seconds of CPU time")]
    let s = ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(secs: f64) -> u64 {
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
        x
    }

    #[test]
    fn clocks_advance_with_work_and_thread_is_within_process() {
        let (p0, t0) = (process_cpu_secs(), thread_cpu_secs());
        std::hint::black_box(spin(0.05));
        let (p1, t1) = (process_cpu_secs(), thread_cpu_secs());
        assert!(t1 > t0 && p1 > p0, "thread {t0}->{t1}, process {p0}->{p1}");
        // The process clock (getrusage, microseconds) covers this thread's time.
        assert!(p1 + 1e-3 >= t1, "process {p1} < thread {t1}");
    }

    #[test]
    fn another_thread_does_not_advance_this_threads_clock() {
        let t0 = thread_cpu_secs();
        let other = std::thread::spawn(|| {
            let s = thread_cpu_secs();
            std::hint::black_box(spin(0.05));
            thread_cpu_secs() - s
        })
        .join()
        .unwrap();
        let mine = thread_cpu_secs() - t0;
        assert!(other > 0.0);
        // Joining costs some microseconds, the other thread's spin 50 ms of wall time.
        assert!(mine < other, "mine {mine} vs other {other}");
    }
}
