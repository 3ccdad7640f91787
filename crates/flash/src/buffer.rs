//! The device write buffer: an LRU of recently written pages (ssd-iq.md 4.3). A rewrite of a
//! buffered page is absorbed; a new page evicts the least recently written one to flash.

use nowa_units::Mix;
use std::collections::HashMap;

const NIL: u32 = u32::MAX;

pub(crate) struct WriteBuffer {
    cap: usize,
    map: HashMap<u32, u32, Mix>,
    lba: Vec<u32>,
    stream: Vec<u16>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently written.
    head: u32,
    /// Least recently written: the next to go to flash.
    tail: u32,
    free: Vec<u32>,
}

impl WriteBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        WriteBuffer {
            cap,
            map: HashMap::with_capacity_and_hasher(cap, Default::default()),
            lba: vec![0; cap],
            stream: vec![0; cap],
            prev: vec![NIL; cap],
            next: vec![NIL; cap],
            head: NIL,
            tail: NIL,
            free: (0..u32::try_from(cap).unwrap_or(u32::MAX)).rev().collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        (self.cap * (4 + 2 + 4 + 4 + 4) + self.map.capacity() * 12) as u64
    }

    fn unlink(&mut self, s: u32) {
        debug_assert!(
            self.head == s || self.prev[s as usize] != NIL,
            "slot {s} is not on the LRU list"
        );
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// If `lba` is buffered, make it most recent (its new data replaces the old) and return true.
    pub(crate) fn touch(&mut self, lba: u32, stream: u16) -> bool {
        match self.map.get(&lba) {
            Some(&s) => {
                self.stream[s as usize] = stream;
                self.unlink(s);
                self.push_front(s);
                true
            }
            None => false,
        }
    }

    /// Insert a page that is not buffered; returns the evicted (lba, stream) when full.
    pub(crate) fn insert(&mut self, lba: u32, stream: u16) -> Option<(u32, u16)> {
        debug_assert!(!self.map.contains_key(&lba));
        let mut evicted = None;
        if self.map.len() == self.cap {
            let t = self.tail;
            self.unlink(t);
            self.map.remove(&self.lba[t as usize]);
            evicted = Some((self.lba[t as usize], self.stream[t as usize]));
            self.free.push(t);
        }
        let s = self.free.pop().expect("write buffer slot");
        self.lba[s as usize] = lba;
        self.stream[s as usize] = stream;
        self.map.insert(lba, s);
        self.push_front(s);
        debug_assert_eq!(
            self.map.len() + self.free.len(),
            self.cap,
            "every slot is buffered or free"
        );
        evicted
    }

    /// Drop `lba` from the buffer (trim). Returns whether it was there.
    pub(crate) fn remove(&mut self, lba: u32) -> bool {
        match self.map.remove(&lba) {
            Some(s) => {
                self.unlink(s);
                self.free.push(s);
                assert!(self.free.len() <= self.cap, "slot {s} freed twice");
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_order_and_absorb() {
        let mut b = WriteBuffer::new(2);
        assert_eq!(b.insert(1, 0), None);
        assert_eq!(b.insert(2, 0), None);
        assert!(b.touch(1, 0)); // 1 is now most recent
        assert_eq!(b.insert(3, 0), Some((2, 0)));
        assert!(b.remove(1));
        assert!(!b.remove(1));
        assert_eq!(b.len(), 1);
        assert_eq!(b.insert(4, 1), None);
        assert_eq!(b.insert(5, 0), Some((3, 0)));
    }
}
