//! [`SimDevice::timed_queue`]: an [`IoQueue`] on a simulated SSD in virtual time. Each request
//! goes through the device's FTL when it is submitted (so GC happens in submission order) and
//! through the [`Timing`] model, which says when it completes; `reap` hands completions out in
//! time order and moves the virtual clock to them. No thread sleeps: a run takes the CPU time
//! of the FTL model, whatever the virtual time it covers.

use crate::error::Result;
use crate::queue::{check_request, Completion, IoQueue, Nanos, Request};
use crate::sim::SimDevice;
use crate::timing::{Ps, Timing, Work};
use crate::{BlockDevice, BLOCK_SIZE_U64};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Picoseconds per nanosecond.
const PS_PER_NS: u64 = 1000;

/// A virtual-time queue; see the module documentation.
pub struct SimQueue<'a> {
    dev: &'a SimDevice,
    timing: &'a mut Timing,
    bufs: Vec<u8>,
    slot_bytes: usize,
    /// Per slot: the request in flight and its submission time.
    inflight: Vec<Option<(Request, Ps)>>,
    /// (completion time, submission sequence, slot), earliest first.
    pending: BinaryHeap<Reverse<(Ps, u64, usize)>>,
    seq: u64,
    /// Virtual time of this queue's epoch (ns 0).
    t0: Ps,
}

impl SimDevice {
    /// A queue of `slots` buffers of `slot_bytes` timed by `timing` in virtual time. The
    /// queue's epoch is the moment everything `timing` served before has completed, so
    /// consecutive queues on one timing continue one timeline.
    ///
    /// # Panics
    /// If `slots` or `slot_bytes` is zero.
    pub fn timed_queue<'a>(
        &'a self,
        timing: &'a mut Timing,
        slots: usize,
        slot_bytes: usize,
    ) -> SimQueue<'a> {
        assert!(slots > 0 && slot_bytes > 0, "a queue needs slots");
        let t0 = timing.idle_at();
        timing.advance_to(t0);
        // Data is only kept when the device stores it; otherwise the buffers are scratch.
        let buf_len = if self.config().store_data {
            slots * slot_bytes
        } else {
            slot_bytes
        };
        SimQueue {
            dev: self,
            timing,
            bufs: vec![0; buf_len],
            slot_bytes,
            inflight: vec![None; slots],
            pending: BinaryHeap::new(),
            seq: 0,
            t0,
        }
    }
}

impl SimQueue<'_> {
    fn ns(&self, t: Ps) -> Nanos {
        (t - self.t0) / PS_PER_NS
    }

    /// The bytes of a slot (all slots share one scratch buffer without data storage).
    fn slot_range(&self, slot: usize) -> std::ops::Range<usize> {
        let s = if self.bufs.len() == self.slot_bytes {
            0
        } else {
            slot * self.slot_bytes
        };
        s..s + self.slot_bytes
    }

    /// The media work of a request, applied to the device now.
    fn apply(&mut self, req: &Request) -> Result<Work> {
        let r = self.slot_range(req.slot);
        let buf = &mut self.bufs[r][..req.len as usize];
        if req.write {
            let w = self.dev.write_work(req.offset, buf)?;
            Ok(Work {
                write: true,
                programmed_pages: w.programmed,
                read_pages: 0,
                erased_units: w.erased,
            })
        } else {
            self.dev.read_at(req.offset, buf)?;
            Ok(Work {
                write: false,
                programmed_pages: 0,
                read_pages: u64::from(req.len) / BLOCK_SIZE_U64,
                erased_units: 0,
            })
        }
    }
}

impl IoQueue for SimQueue<'_> {
    fn slots(&self) -> usize {
        self.inflight.len()
    }
    fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(self.inflight[slot].is_none(), "slot {slot} is in flight");
        let r = self.slot_range(slot);
        &mut self.bufs[r]
    }
    fn now(&self) -> Nanos {
        self.ns(self.timing.now())
    }
    fn in_flight(&self) -> usize {
        self.pending.len()
    }
    fn submit(&mut self, req: Request) -> Result<()> {
        check_request(self.dev.geometry(), &req, self.slots(), self.slot_bytes)?;
        assert!(
            self.inflight[req.slot].is_none(),
            "slot {} in flight",
            req.slot
        );
        let work = self.apply(&req)?;
        let now = self.timing.now();
        let done = self.timing.serve(now, &work);
        assert!(done >= now, "a request completes after it arrives");
        self.inflight[req.slot] = Some((req, now));
        self.pending.push(Reverse((done, self.seq, req.slot)));
        debug_assert_eq!(
            self.pending.len(),
            self.inflight.iter().filter(|s| s.is_some()).count()
        );
        self.seq += 1;
        Ok(())
    }
    fn reap(&mut self, deadline: Option<Nanos>, out: &mut Vec<Completion>) -> Result<()> {
        let limit = deadline.map(|d| self.t0 + d.saturating_mul(PS_PER_NS));
        match self.pending.peek() {
            Some(&Reverse((t, _, slot))) if limit.is_none_or(|l| t <= l) => {
                self.pending.pop();
                assert!(t >= self.timing.now(), "completions come out in time order");
                self.timing.advance_to(t);
                let (req, submitted) = self.inflight[slot].take().expect("pending slot in flight");
                assert!(
                    submitted >= self.t0 && t >= submitted,
                    "completes after submission"
                );
                out.push(Completion {
                    user_data: req.user_data,
                    slot,
                    bytes: req.len,
                    error: None,
                    submitted: self.ns(submitted),
                    completed: self.ns(t),
                });
            }
            _ => {
                if let Some(l) = limit {
                    self.timing.advance_to(l);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::TimingModel;
    use crate::{SimConfig, SimMode};

    #[test]
    fn virtual_time_follows_the_model() {
        let mut cfg = SimConfig::for_capacity(16 << 20, 0.1, SimMode::Conventional).unwrap();
        cfg.store_data = false;
        let dev = SimDevice::new(cfg).unwrap();
        let mut t = Timing::new(TimingModel::default()).unwrap();
        let mut q = dev.timed_queue(&mut t, 2, 4096);
        let w = Request {
            user_data: 1,
            slot: 0,
            offset: 0,
            len: 4096,
            write: true,
        };
        q.submit(w).unwrap();
        q.submit(Request {
            user_data: 2,
            slot: 1,
            offset: 4096,
            ..w
        })
        .unwrap();
        let mut out = Vec::new();
        q.reap(None, &mut out).unwrap();
        q.reap(None, &mut out).unwrap();
        // 2048 ns of media each, FIFO, + 12 us controller latency.
        assert_eq!(out[0].completed, 2048 + 12_000);
        assert_eq!(out[1].completed, 2 * 2048 + 12_000);
        assert_eq!((out[0].user_data, out[1].user_data), (1, 2));
        // Nothing in flight: a deadline moves the clock.
        q.reap(Some(1_000_000), &mut out).unwrap();
        assert_eq!(q.now(), 1_000_000);
        drop(q);
        assert_eq!(dev.counters().host_bytes_written, 8192);
        assert_eq!(dev.data_memory_bytes(), 0, "no data stored");
        // A new queue starts where the timeline left off.
        let q = dev.timed_queue(&mut t, 1, 4096);
        assert_eq!(q.now(), 0);
        drop(q);
        assert_eq!(t.now(), 1_000_000_000);
    }
}
