//! Best-fit packing of compressed pages into 4 KiB slots (section 3.2).

use super::SLOT_HDR;
use crate::page::PAGE_SIZE;

/// Best-fit bin packing of item sizes into 4 KiB slots (section 3.2): items sorted by
/// decreasing size, each put into the fullest slot it still fits in. Raw items get a slot of
/// their own. No cap on pages per slot. Returns slots as lists of item indices.
#[must_use]
pub fn pack(sizes: &[(usize, bool)]) -> Vec<(bool, Vec<usize>)> {
    let cap = PAGE_SIZE - SLOT_HDR;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i].0));
    let mut bins: Vec<(usize, bool, Vec<usize>)> = Vec::new();
    for i in order {
        let (s, raw) = sizes[i];
        if raw {
            bins.push((0, true, vec![i]));
            continue;
        }
        let best = bins
            .iter_mut()
            .filter(|b| !b.1 && b.0 >= s)
            .min_by_key(|b| b.0);
        match best {
            Some(b) => {
                b.0 -= s;
                b.2.push(i);
            }
            None => bins.push((cap - s, false, vec![i])),
        }
    }
    debug_assert!(
        bins.iter()
            .all(|b| b.1 || b.2.iter().map(|&i| sizes[i].0).sum::<usize>() <= cap),
        "a packed slot overflows"
    );
    bins.into_iter().map(|(_, r, m)| (r, m)).collect()
}
