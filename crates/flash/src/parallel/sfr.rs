//! AutoStream's SFR (sequentiality, frequency, recency; `zhxq/AutoStream`, the authors' own
//! baseline): per chunk an access count that halves every `decay` seconds; a request gets the
//! stream i with the smallest 2^(i+1) >= count, and a request starting where the previous one
//! ended keeps the previous stream.

/// SFR state.
#[derive(Debug, Clone)]
pub struct Sfr {
    count: Vec<f32>,
    last: Vec<f32>,
    chunk_pages: u64,
    decay_secs: f64,
    streams: u16,
    prev_end: u64,
    prev_stream: u16,
}

impl Sfr {
    /// SFR over `logical_pages` in chunks of `chunk_pages`, `streams` streams.
    ///
    /// # Panics
    /// If `chunk_pages` or `streams` is 0.
    #[must_use]
    pub fn new(logical_pages: u64, chunk_pages: u64, decay_secs: f64, streams: u16) -> Self {
        assert!(
            chunk_pages > 0 && streams > 0,
            "SFR needs chunks and streams"
        );
        let n = usize::try_from(logical_pages.div_ceil(chunk_pages)).expect("fits memory");
        Sfr {
            count: vec![0.0; n],
            last: vec![0.0; n],
            chunk_pages,
            decay_secs,
            streams,
            prev_end: u64::MAX,
            prev_stream: 0,
        }
    }

    /// The stream of a write request of `len` pages at `start`, at `now` seconds.
    ///
    /// # Panics
    /// If `start` is beyond the logical pages given to [`Sfr::new`].
    #[expect(
        clippy::cast_possible_truncation,
        reason = "SFR keeps f32 counts and times, as the kernel module keeps small integers"
    )]
    pub fn classify(&mut self, start: u64, len: u64, now: f64) -> u16 {
        let sequential = start == self.prev_end;
        self.prev_end = start + len;
        if sequential {
            return self.prev_stream;
        }
        let i = usize::try_from(start / self.chunk_pages).expect("page in range");
        let age = (now - f64::from(self.last[i])).max(0.0);
        let c = (f64::from(self.count[i]) + 1.0) / (age / self.decay_secs).exp2();
        self.count[i] = c as f32;
        self.last[i] = now as f32;
        let mut s = 0u16;
        while s + 1 < self.streams && f64::from(2u32 << s) < c {
            s += 1;
        }
        self.prev_stream = s;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_chunks_climb_and_sequential_requests_stay() {
        let mut s = Sfr::new(1024, 128, 10.0, 4);
        assert_eq!(s.classify(0, 1, 0.0), 0);
        for _ in 0..6 {
            s.classify(0, 1, 0.0);
        }
        // Count 8: stream 2 (2^3 >= 8).
        assert_eq!(s.classify(0, 1, 0.0), 2);
        // Sequential continuation keeps the stream even on a cold chunk.
        assert_eq!(s.classify(1, 1, 0.0), 2);
        // Far later the count decayed: back to stream 0.
        assert_eq!(s.classify(0, 1, 1000.0), 0);
    }
}
