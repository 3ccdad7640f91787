//! Ctrl-C for long runs: one process-wide stop flag, set by a SIGINT handler, that every
//! driver (`sim`, `ycsb`, `table1`, `ssdiq`) polls between units of work. A run that sees it
//! stops cleanly and reports what it measured so far; a second Ctrl-C kills the process (the
//! handler restores the default action).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Set by the SIGINT handler of [`install_sigint_handler`] (or by [`request`]).
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_sig: libc::c_int) {
    // Async-signal-safe: an atomic store, and restoring the default action so that a second
    // Ctrl-C kills the process.
    STOP.store(true, Relaxed);
    // SAFETY: signal() is async-signal-safe; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Installs a SIGINT (Ctrl-C) handler that sets [`STOP`].
pub fn install_sigint_handler() {
    // SAFETY: `on_sigint` only performs async-signal-safe operations (an atomic store and
    // signal()), and has the C ABI signal() expects.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// True once a stop was asked (Ctrl-C).
#[must_use]
pub fn requested() -> bool {
    STOP.load(Relaxed)
}

/// Asks every driver polling [`requested`] to stop, as Ctrl-C does.
pub fn request() {
    STOP.store(true, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler runs on a real SIGINT (the `unsafe` calls above): the flag is set and the
    /// default action restored, so a second Ctrl-C would kill the process.
    #[test]
    fn a_sigint_sets_the_flag_once() {
        STOP.store(false, Relaxed);
        install_sigint_handler();
        // SAFETY: raise() sends SIGINT to this thread; the handler installed above catches it.
        let rc = unsafe { libc::raise(libc::SIGINT) };
        assert_eq!(rc, 0);
        assert!(requested(), "the handler set the flag");
        // SAFETY: querying the disposition with signal() and putting it back.
        let before = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
        assert_eq!(before, libc::SIG_DFL, "a second Ctrl-C kills");
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    }
}
