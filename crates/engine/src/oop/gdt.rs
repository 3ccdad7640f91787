//! GDT: grouping pages by estimated deathtime (EDT) for placement and GC order (Figure 5).

use crate::num::{f64_of, u64_of};

/// Estimated deathtime from a write history (oldest first, 0 = empty): now + mean interval of
/// the recorded writes; u64::MAX (coldest) with fewer than two writes.
#[must_use]
pub fn edt(wh: &[u64; 4], now: u64) -> u64 {
    let t: Vec<u64> = wh.iter().copied().filter(|&x| x != 0).collect();
    if t.len() < 2 {
        return u64::MAX;
    }
    let interval = (t[t.len() - 1] - t[0]) / (u64_of(t.len()) - 1);
    now.saturating_add(interval)
}

/// GDT grouping of a batch: indices sorted by EDT and cut into `k` contiguous groups of
/// (almost) equal size, so pages with similar deathtimes go to the same zone (Figure 5).
#[must_use]
pub fn gdt_split(edts: &[u64], k: usize) -> Vec<Vec<usize>> {
    let mut idx: Vec<usize> = (0..edts.len()).collect();
    idx.sort_by_key(|&i| (edts[i], i));
    let k = k.clamp(1, edts.len().max(1));
    let per = edts.len().div_ceil(k).max(1);
    idx.chunks(per).map(|c| c.to_vec()).collect()
}

/// GDT grouping of a batch (section 4.2): initial writes (`index[i]` = Some(B-tree index
/// id): the page was never written before, so it has no EDT) form one group per index id;
/// the other pages are sorted by EDT and cut into the remaining `k - index groups` (>= 1)
/// groups ([`gdt_split`]; a single group when there are fewer than two pages per group).
/// Groups come hottest first (ascending EDT, initial writes last), which is the order they
/// are written in: an empty zone (one GC just freed) matches any group, so the first,
/// hottest group takes it (the newly emptied zone gets the minimum EDT range).
#[must_use]
pub fn gdt_groups(edts: &[u64], index: &[Option<u32>], k: usize) -> Vec<Vec<usize>> {
    let mut by_index: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    let mut rest = Vec::new();
    for i in 0..edts.len() {
        match index.get(i).copied().flatten() {
            Some(id) => by_index.entry(id).or_default().push(i),
            None => rest.push(i),
        }
    }
    let k_rest = k.saturating_sub(by_index.len()).max(1);
    let mut out: Vec<Vec<usize>> = Vec::new();
    if rest.len() >= 2 * k_rest {
        let sub: Vec<u64> = rest.iter().map(|&i| edts[i]).collect();
        for g in gdt_split(&sub, k_rest) {
            out.push(g.into_iter().map(|j| rest[j]).collect());
        }
    } else if !rest.is_empty() {
        out.push(rest);
    }
    out.extend(by_index.into_values());
    out
}

/// GDT GC order of a victim's valid pages: descending EDT (stable), so pages that were never
/// rewritten (EDT u64::MAX) come first, as the coldest data.
#[must_use]
pub fn gc_order(edts: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..edts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(edts[i]));
    order
}

/// GDT zone choice: the open zone whose pages have the closest average EDT to `want`; a zone
/// without pages yet (just opened, e.g. after GC) matches anything (distance 0), the first
/// such zone on ties. `zones`: (EDT sum, pages) per candidate. None if `zones` is empty.
#[must_use]
pub fn closest_zone(zones: &[(f64, u64)], want: f64) -> Option<usize> {
    let d = |&(sum, n): &(f64, u64)| {
        if n == 0 {
            0.0
        } else {
            (sum / f64_of(n) - want).abs()
        }
    };
    (0..zones.len()).min_by(|&a, &b| d(&zones[a]).total_cmp(&d(&zones[b])))
}
