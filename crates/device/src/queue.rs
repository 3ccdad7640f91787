//! [`IoQueue`]: asynchronous submit / complete on a device, for callers that keep many I/Os in
//! flight and time each one (benchmarks). A queue owns `slots` fixed buffers of `slot_bytes`
//! each; a request names its slot, and the slot's buffer belongs to the kernel (or the
//! simulator) until the request's completion is reaped.
//!
//! Three implementations, one interface, so the benchmark's job runner is the same on every
//! target:
//! - [`FileDevice::queue`] with [`IoEngine::Uring`]: one io_uring per queue (create one per
//!   thread), buffers and file registered when the kernel allows (fio's `fixedbufs` and
//!   `registerfiles`), `SINGLE_ISSUER | COOP_TASKRUN`, every request submitted at once (fio's
//!   `iodepth_batch_submit=1`: batching submissions delays requests and cost ~20% IOPS on a
//!   virtio disk). Latency is measured from just before submission to the reap.
//! - [`FileDevice::queue`] with [`IoEngine::Sync`]: pread/pwrite, one slot, the request runs
//!   inside `submit`.
//! - [`crate::SimDevice::timed_queue`]: a simulated SSD in virtual time, timed by
//!   [`crate::timing::Timing`].

use crate::align::AlignedBuf;
use crate::error::{DeviceError, Result};
use crate::file::{FileDevice, IoEngine};
use io_uring::{opcode, types, IoUring};
use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Nanoseconds since a queue's epoch (wall clock for files, virtual time for a simulated SSD).
pub type Nanos = u64;

/// One I/O request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Returned with the completion.
    pub user_data: u64,
    /// The queue buffer the data comes from (write) or goes to (read).
    pub slot: usize,
    /// Byte offset on the device (a multiple of 4096).
    pub offset: u64,
    /// Bytes (a multiple of 4096, at most the slot size).
    pub len: u32,
    /// Write (else read).
    pub write: bool,
}

/// A finished request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The request's `user_data`.
    pub user_data: u64,
    /// The request's slot, free again.
    pub slot: usize,
    /// Bytes transferred (the request's length unless `error` is set).
    pub bytes: u32,
    /// The OS error number if the request failed.
    pub error: Option<i32>,
    /// When the request was submitted.
    pub submitted: Nanos,
    /// When its completion was reaped.
    pub completed: Nanos,
}

/// Asynchronous I/O with fixed buffers; see the module documentation.
pub trait IoQueue {
    /// Number of slots (requests that can be in flight at once).
    fn slots(&self) -> usize;
    /// Bytes per slot buffer.
    fn slot_bytes(&self) -> usize;
    /// The buffer of a slot that is not in flight (e.g. to fill it with a payload).
    ///
    /// # Panics
    /// If the slot is out of range or in flight.
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8];
    /// Time now on this queue's clock.
    fn now(&self) -> Nanos;
    /// Requests submitted and not reaped yet.
    fn in_flight(&self) -> usize;
    /// Submit a request on a free slot.
    ///
    /// # Errors
    /// A request out of the device's range, unaligned or longer than its slot, or a
    /// submission the kernel refused.
    ///
    /// # Panics
    /// If the slot is out of range or already in flight (a caller bug).
    fn submit(&mut self, req: Request) -> Result<()>;
    /// Append completed requests to `out`. With requests in flight, waits for at least one
    /// unless `deadline` comes first (a real queue may also return early with none). With none
    /// in flight, waits until `deadline` (a virtual clock jumps there) or, without one,
    /// returns at once.
    ///
    /// # Errors
    /// The kernel's wait failed.
    fn reap(&mut self, deadline: Option<Nanos>, out: &mut Vec<Completion>) -> Result<()>;
}

/// Nanoseconds from `epoch` to now.
fn since(epoch: Instant) -> Nanos {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Sleeps until `deadline` (nanoseconds since `epoch`), if given and in the future.
fn sleep_until(epoch: Instant, deadline: Option<Nanos>) {
    if let Some(d) = deadline {
        let wait = d.saturating_sub(since(epoch));
        if wait > 0 {
            std::thread::sleep(Duration::from_nanos(wait));
        }
    }
}

/// Checks a request against the device geometry and the queue's slot size.
pub(crate) fn check_request(
    geo: &crate::Geometry,
    req: &Request,
    slots: usize,
    slot_bytes: usize,
) -> Result<()> {
    assert!(req.slot < slots, "slot {} of {slots}", req.slot);
    let len = req.len as usize;
    crate::check_io(geo, req.offset, len)?;
    if len == 0 || len > slot_bytes {
        return Err(DeviceError::Unaligned {
            offset: req.offset,
            len,
            align: crate::BLOCK_SIZE,
        });
    }
    Ok(())
}

impl FileDevice {
    /// A queue of `slots` buffers of `slot_bytes`, timed from `epoch`, using the device's
    /// engine ([`IoEngine::Sync`]: one slot whatever `slots` says). Create one per thread.
    ///
    /// # Errors
    /// The ring cannot be created, or `slots` / `slot_bytes` is zero or not aligned.
    pub fn queue(
        &self,
        slots: usize,
        slot_bytes: usize,
        epoch: Instant,
    ) -> Result<Box<dyn IoQueue + '_>> {
        if slots == 0 || slot_bytes == 0 || slot_bytes % crate::BLOCK_SIZE != 0 {
            return Err(DeviceError::Unaligned {
                offset: 0,
                len: slot_bytes,
                align: crate::BLOCK_SIZE,
            });
        }
        Ok(match self.engine() {
            IoEngine::Uring => Box::new(UringQueue::new(self, slots, slot_bytes, epoch)?),
            IoEngine::Sync => Box::new(SyncQueue::new(self, slot_bytes, epoch)),
        })
    }
}

/// pread/pwrite: the request runs inside `submit`.
struct SyncQueue<'a> {
    dev: &'a FileDevice,
    buf: AlignedBuf,
    epoch: Instant,
    done: VecDeque<Completion>,
}

impl<'a> SyncQueue<'a> {
    fn new(dev: &'a FileDevice, slot_bytes: usize, epoch: Instant) -> Self {
        SyncQueue {
            dev,
            buf: AlignedBuf::zeroed(slot_bytes, crate::BLOCK_SIZE),
            epoch,
            done: VecDeque::new(),
        }
    }
}

impl IoQueue for SyncQueue<'_> {
    fn slots(&self) -> usize {
        1
    }
    fn slot_bytes(&self) -> usize {
        self.buf.len()
    }
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            slot == 0 && self.done.is_empty(),
            "slot {slot} busy or absent"
        );
        &mut self.buf
    }
    fn now(&self) -> Nanos {
        since(self.epoch)
    }
    fn in_flight(&self) -> usize {
        self.done.len()
    }
    fn submit(&mut self, req: Request) -> Result<()> {
        assert!(self.done.is_empty() && req.slot == 0, "slot 0 is in flight");
        check_request(self.dev.geometry_ref(), &req, 1, self.buf.len())?;
        let len = req.len as usize;
        let submitted = since(self.epoch);
        let file = self.dev.file();
        let r = if req.write {
            file.write_all_at(&self.buf[..len], req.offset)
        } else {
            file.read_exact_at(&mut self.buf[..len], req.offset)
        };
        let completed = since(self.epoch);
        let error = r.err().map(|e| e.raw_os_error().unwrap_or(libc::EIO));
        if error.is_none() {
            self.dev.count_io(req.write, u64::from(req.len));
        }
        self.done.push_back(Completion {
            user_data: req.user_data,
            slot: 0,
            bytes: if error.is_none() { req.len } else { 0 },
            error,
            submitted,
            completed,
        });
        Ok(())
    }
    fn reap(&mut self, deadline: Option<Nanos>, out: &mut Vec<Completion>) -> Result<()> {
        if self.done.is_empty() {
            sleep_until(self.epoch, deadline);
        }
        out.extend(self.done.drain(..));
        Ok(())
    }
}

/// One io_uring with registered buffers (see the module documentation).
struct UringQueue<'a> {
    dev: &'a FileDevice,
    /// Declared before `bufs`: dropped (and the buffers unregistered) before they are freed.
    ring: IoUring,
    bufs: AlignedBuf,
    slot_bytes: usize,
    fixed_buf: bool,
    fixed_file: bool,
    /// Per slot: the request in flight and when it was submitted.
    inflight: Vec<Option<(Request, Nanos)>>,
    count: usize,
    epoch: Instant,
}

impl<'a> UringQueue<'a> {
    fn new(dev: &'a FileDevice, slots: usize, slot_bytes: usize, epoch: Instant) -> Result<Self> {
        let entries = u32::try_from(slots.next_power_of_two())
            .map_err(|_| DeviceError::BadQueueDepth { got: u32::MAX })?;
        // COOP_TASKRUN (Linux 5.19+): completions do not interrupt this thread with an IPI,
        // they run when it next enters the kernel. Fall back to a plain ring on older kernels.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        let mut bufs = AlignedBuf::zeroed(slots * slot_bytes, crate::BLOCK_SIZE);
        let iov = libc::iovec {
            iov_base: bufs.as_mut_ptr().cast(),
            iov_len: bufs.len(),
        };
        // SAFETY: the registered memory is `bufs`, which the queue owns and frees only after
        // the ring is dropped (field order) and never moves (a heap allocation).
        let fixed_buf =
            bufs.len() <= 1 << 30 && unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
        let fixed_file = ring
            .submitter()
            .register_files(&[dev.file().as_raw_fd()])
            .is_ok();
        Ok(UringQueue {
            dev,
            ring,
            bufs,
            slot_bytes,
            fixed_buf,
            fixed_file,
            inflight: vec![None; slots],
            count: 0,
            epoch,
        })
    }

    fn entry(&mut self, req: &Request) -> io_uring::squeue::Entry {
        // Slot pointers come from one base pointer: no Rust reference to the buffer is
        // created while the kernel may be writing into other slots.
        // SAFETY: slot < slots, so [slot * slot_bytes, +len) lies inside `bufs`.
        let ptr = unsafe { self.bufs.as_mut_ptr().add(req.slot * self.slot_bytes) };
        let (off, len) = (req.offset, req.len);
        macro_rules! op {
            ($fd:expr) => {
                match (req.write, self.fixed_buf) {
                    (true, true) => opcode::WriteFixed::new($fd, ptr, len, 0)
                        .offset(off)
                        .build(),
                    (true, false) => opcode::Write::new($fd, ptr, len).offset(off).build(),
                    (false, true) => opcode::ReadFixed::new($fd, ptr, len, 0).offset(off).build(),
                    (false, false) => opcode::Read::new($fd, ptr, len).offset(off).build(),
                }
            };
        }
        let e = if self.fixed_file {
            op!(types::Fixed(0))
        } else {
            op!(types::Fd(self.dev.file().as_raw_fd()))
        };
        e.user_data(req.slot as u64)
    }

    /// Turn the completion queue's entries into [`Completion`]s.
    fn drain_cq(&mut self, out: &mut Vec<Completion>) {
        let completed = since(self.epoch);
        let UringQueue {
            ring,
            inflight,
            count,
            dev,
            ..
        } = self;
        for cqe in ring.completion() {
            let slot = usize::try_from(cqe.user_data()).expect("user_data is a slot index");
            let (req, submitted) = inflight[slot]
                .take()
                .expect("a completion for a slot in flight");
            assert!(*count > 0, "completion with nothing in flight");
            *count -= 1;
            let res = cqe.result();
            let (bytes, error) = match u32::try_from(res) {
                Ok(n) if n == req.len => (n, None),
                Ok(n) => (n, Some(libc::EIO)), // short transfer
                Err(_) => (0, Some(-res)),
            };
            if error.is_none() {
                dev.count_io(req.write, u64::from(bytes));
            }
            out.push(Completion {
                user_data: req.user_data,
                slot,
                bytes,
                error,
                submitted,
                completed,
            });
        }
    }
}

impl IoQueue for UringQueue<'_> {
    fn slots(&self) -> usize {
        self.inflight.len()
    }
    fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(self.inflight[slot].is_none(), "slot {slot} is in flight");
        let s = slot * self.slot_bytes;
        &mut self.bufs[s..s + self.slot_bytes]
    }
    fn now(&self) -> Nanos {
        since(self.epoch)
    }
    fn in_flight(&self) -> usize {
        self.count
    }
    fn submit(&mut self, req: Request) -> Result<()> {
        check_request(self.dev.geometry_ref(), &req, self.slots(), self.slot_bytes)?;
        assert!(
            self.inflight[req.slot].is_none(),
            "slot {} in flight",
            req.slot
        );
        let sqe = self.entry(&req);
        // SAFETY: the slot's buffer stays alive and untouched until its completion is reaped
        // (the queue drains on drop before freeing it), and the ring has >= slots entries, so
        // the submission queue has room with at most `slots` requests in flight.
        unsafe { self.ring.submission().push(&sqe) }.expect("ring has room for every slot");
        self.inflight[req.slot] = Some((req, since(self.epoch)));
        self.count += 1;
        // Submit each I/O at once; EINTR/EAGAIN leave it queued for the next enter.
        match self.ring.submit() {
            Err(e) if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {
                Err(e.into())
            }
            _ => Ok(()),
        }
    }
    fn reap(&mut self, deadline: Option<Nanos>, out: &mut Vec<Completion>) -> Result<()> {
        if self.count == 0 {
            sleep_until(self.epoch, deadline);
            return Ok(());
        }
        let r = match deadline {
            // Ahead of a schedule: do not block on a completion that may come after the next
            // request is due.
            Some(d) => {
                let r = self.ring.submit();
                if self.ring.completion().is_empty() {
                    let wait = d.saturating_sub(self.now()).min(50_000);
                    std::thread::sleep(Duration::from_nanos(wait));
                }
                r
            }
            None => self.ring.submit_and_wait(1),
        };
        match r {
            Err(e) if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {
                return Err(e.into());
            }
            _ => {}
        }
        self.drain_cq(out);
        debug_assert_eq!(
            self.count,
            self.inflight.iter().filter(|s| s.is_some()).count(),
            "in-flight count matches the slots"
        );
        Ok(())
    }
}

impl Drop for UringQueue<'_> {
    fn drop(&mut self) {
        // Never free buffers the kernel may still write to: wait for everything in flight.
        let mut sink = Vec::new();
        let mut failures = 0;
        while self.count > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                failures += 1;
                if failures > 1000 {
                    // The ring is unusable with I/O in flight: leak the memory.
                    let bufs = std::mem::replace(&mut self.bufs, AlignedBuf::zeroed(0, 1));
                    std::mem::forget(bufs);
                    return;
                }
            }
            self.drain_cq(&mut sink);
        }
        // Give the file and the buffers back now rather than when the kernel tears the ring
        // down (asynchronously): the file's lock is released with its last reference.
        let _ = self.ring.submitter().unregister_files();
        let _ = self.ring.submitter().unregister_buffers();
    }
}

/// Per-I/O accounting shared by the queues.
impl FileDevice {
    pub(crate) fn count_io(&self, write: bool, bytes: u64) {
        let c = if write {
            &self.stats.host_written
        } else {
            &self.stats.host_read
        };
        c.fetch_add(bytes, Relaxed);
    }
    pub(crate) fn geometry_ref(&self) -> &crate::Geometry {
        crate::BlockDevice::geometry(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockDevice, FileOptions};

    fn run_one(q: &mut dyn IoQueue, req: Request) -> Completion {
        q.submit(req).unwrap();
        let mut out = Vec::new();
        while out.is_empty() {
            q.reap(None, &mut out).unwrap();
        }
        assert_eq!(q.in_flight(), 0);
        out[0]
    }

    #[test]
    fn both_engines_write_read_and_count() {
        for engine in [IoEngine::Uring, IoEngine::Sync] {
            let dir = tempfile::tempdir().unwrap();
            let opts = FileOptions {
                engine,
                ..FileOptions::default()
            };
            let d = FileDevice::create(dir.path().join("q"), 1 << 20, &opts).unwrap();
            let mut q = d.queue(4, 8192, Instant::now()).unwrap();
            let slot = q.slots() - 1;
            q.buffer_mut(slot).fill(0x5a);
            let w = Request {
                user_data: 7,
                slot,
                offset: 65536,
                len: 8192,
                write: true,
            };
            let c = run_one(q.as_mut(), w);
            assert_eq!((c.user_data, c.bytes, c.error), (7, 8192, None));
            assert!(c.completed >= c.submitted);
            q.buffer_mut(0).fill(0);
            let c = run_one(
                q.as_mut(),
                Request {
                    slot: 0,
                    write: false,
                    ..w
                },
            );
            assert_eq!(c.error, None);
            assert!(q.buffer_mut(0).iter().all(|&b| b == 0x5a), "{engine:?}");
            let bad = Request {
                offset: 1 << 20,
                ..w
            };
            assert!(q.submit(bad).is_err(), "beyond the end");
            drop(q);
            let c = d.counters();
            assert_eq!((c.host_bytes_written, c.host_bytes_read), (8192, 8192));
        }
    }
}
