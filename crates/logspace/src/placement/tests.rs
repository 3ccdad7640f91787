//! Class walks of every scheme on small scripted streams.

use super::*;

fn geo(pages: u64, unit: u32) -> Geometry {
    Geometry {
        logical_pages: pages,
        unit_pages: unit,
        units: 64,
    }
}

fn ctx(now: u64) -> Ctx {
    Ctx {
        now,
        live: 1000,
        next_write_in: NEVER,
    }
}

/// A user write at `now`: hooks in the writer's order, the class it got.
fn user(p: &mut dyn Placement, page: u64, now: u64) -> u16 {
    let c = ctx(now);
    p.on_request(page, 1, &c);
    p.on_user_write(page, &c);
    p.classify(false, page, &c)
}

fn gc(p: &mut dyn Placement, page: u64, now: u64, victim_class: u16) -> u16 {
    let c = ctx(now);
    p.on_collect(&unit(victim_class, 0), &c);
    p.on_gc_write(page, &c);
    p.classify(true, page, &c)
}

fn unit(class: u16, created_at: u64) -> UnitInfo {
    UnitInfo {
        unit: 0,
        class,
        created_at,
        sealed_at: created_at,
        valid: 0,
        capacity: 16,
        sealed: true,
    }
}

#[test]
fn parse_and_display_roundtrip() {
    for k in PlacementKind::all() {
        assert_eq!(k.to_string().parse::<PlacementKind>(), Ok(k));
        let mut p = k.build();
        assert!(p.classes() >= 1 && p.classes() <= MAX_CLASSES);
        assert_eq!(p.needs_future(), k.needs_future());
        p.init(&geo(100, 16));
    }
    assert_eq!("2r".parse(), Ok(PlacementKind::SepGc));
    assert_eq!("dac".parse(), Ok(PlacementKind::Dac(6)));
    assert_eq!("SepBIT:5".parse(), Ok(PlacementKind::SepBit(5)));
    assert!(matches!("sepbit:3".parse::<PlacementKind>(), Err(PlacementError::Classes { .. })));
    assert!(matches!("dac:17".parse::<PlacementKind>(), Err(PlacementError::Classes { .. })));
    assert!(matches!("nosep:2".parse::<PlacementKind>(), Err(PlacementError::Unknown { .. })));
    let e = "bogus".parse::<PlacementKind>().unwrap_err().to_string();
    assert!(e.contains("'bogus'") && e.contains("sepbit") && !e.contains('\n'), "{e}");
}

#[test]
fn nosep_and_sepgc() {
    let mut n = NoSep;
    assert_eq!((user(&mut n, 3, 1), gc(&mut n, 3, 1, 0)), (0, 0));
    let mut s = SepGc;
    assert_eq!((user(&mut s, 3, 1), gc(&mut s, 3, 1, 0)), (0, 1));
}

#[test]
fn dac_walks_up_on_writes_and_down_on_gc() {
    let mut d = Dac::new(4);
    d.init(&geo(10, 16));
    let walk: Vec<u16> = (1..=5).map(|t| user(&mut d, 7, t)).collect();
    assert_eq!(walk, vec![0, 1, 2, 3, 3], "first write 0, +1 per rewrite, capped");
    let down: Vec<u16> = (0..5).map(|_| gc(&mut d, 7, 6, 3)).collect();
    assert_eq!(down, vec![2, 1, 0, 0, 0]);
    assert_eq!(user(&mut d, 8, 7), 0, "other pages unaffected");
}

#[test]
fn sepbit_walks_a_frozen_page_to_the_coldest_class() {
    let mut s = SepBit::new(6);
    s.init(&geo(100, 16));
    // Before any threshold: the FIFO is as long as the writes so far (capped by live pages).
    assert_eq!(user(&mut s, 9, 1), 1, "first write: no previous write");
    assert_eq!(user(&mut s, 1, 2), 1);
    assert_eq!(user(&mut s, 9, 3), 1, "interval 2, FIFO of 2: not strictly inside");
    assert_eq!(user(&mut s, 1, 4), 0, "interval 2 < FIFO of 3");
    // 16 class-0 victims with lifespan 10 set the threshold to 10.
    for _ in 0..16 {
        s.on_collect(&unit(0, 90), &ctx(100));
    }
    assert!((s.threshold() - 10.0).abs() < 1e-9);
    assert_eq!(user(&mut s, 1, 105), 1, "interval 103 >= threshold 10");
    for t in 106..110 {
        user(&mut s, t - 50, t);
    }
    assert_eq!(user(&mut s, 1, 110), 0, "interval 5 < min(threshold 10, FIFO 9)");
    // The SepBIT class walk of a frozen page (SepFrozen Fig. 5): 1 -> 3 -> 4 -> 5.
    assert_eq!(user(&mut s, 2, 120), 1);
    assert_eq!(gc(&mut s, 2, 121, 0), 2, "a class-0 victim's pages go to class 2");
    assert_eq!(gc(&mut s, 2, 130, 1), 3, "age 10 < 4l");
    assert_eq!(gc(&mut s, 2, 170, 3), 4, "4l <= age 50 < 16l");
    assert_eq!(gc(&mut s, 2, 400, 4), 5, "age 280 >= 16l");
    assert_eq!(gc(&mut s, 2, 10_000, 5), 5, "capped at the last class");
}

#[test]
fn sfr_levels_by_chunk_frequency_and_keeps_sequential_runs() {
    let mut s = Sfr::new(6);
    s.init(&geo(4096, 16));
    // Chunk 0 (pages 0..512) written 20 times at random offsets: ln(20) = 2.99 -> 2.
    let mut last = 0;
    for t in 0..20 {
        last = user(&mut s, (t * 37) % 500 + 2 * (t % 2), t + 1);
    }
    assert_eq!(last, 2);
    // A sequential continuation keeps the previous level even in a cold chunk.
    let c = ctx(30);
    s.on_request(600, 4, &c);
    let cold = s.classify(false, 600, &c);
    assert_eq!(cold, 0, "chunk 1 seen once");
    s.on_request(604, 4, &c);
    assert_eq!(s.classify(false, 604, &c), cold, "sequential: previous level");
    assert_eq!(gc(&mut s, 0, 31, 0), 5, "GC writes: the last class");
    // Decay: after 2 x 16384 user writes chunk 0's count is quartered: (20 >> 2) + 1 = 6 -> 1.
    assert_eq!(user(&mut s, 3, 20 + 2 * 16384), 1);
}

#[test]
fn multiqueue_levels_by_log_of_chunk_writes() {
    let mut m = MultiQueue::new(5);
    m.init(&geo(4096, 16));
    let levels: Vec<u16> = (1..=60).map(|t| user(&mut m, (t * 13) % 256, t)).collect();
    assert_eq!(levels[0], 0);
    assert_eq!(levels[2], 1, "3 writes: ln 3 = 1.1");
    assert_eq!(levels[7], 2, "8 writes: ln 8 = 2.08");
    assert_eq!(levels[59], 3, "capped at classes - 2");
    assert_eq!(gc(&mut m, 1, 61, 0), 4);
}

#[test]
fn warcip_clusters_by_rewrite_interval() {
    let mut w = Warcip::new(4);
    w.init(&geo(1000, 4));
    // All centers start at 0; the first write (ui 0) goes to the last cluster (ties: later).
    assert_eq!(user(&mut w, 1, 1), 3);
    assert_eq!(gc(&mut w, 1, 5, 3), 0, "GC writes: class 0");
    // Page 1 rewritten at t = 10: ui = 10 - 1 + penalty (5 - 1 = 4) = 13.
    user(&mut w, 1, 10);
    assert!(w.centers().iter().any(|&c| (c - 6.5).abs() < 1e-9), "{:?}", w.centers());
}

#[test]
fn fk_places_by_remaining_lifespan() {
    let mut f = FkOracle::new(4);
    f.init(&geo(100, 10));
    let mut c = ctx(1);
    c.next_write_in = 25;
    f.on_user_write(5, &c);
    assert_eq!(f.classify(false, 5, &c), 2, "25 / 10");
    assert_eq!(f.classify(true, 5, &ctx(20)), 0, "6 left at t = 20");
    c.next_write_in = NEVER;
    f.on_user_write(6, &c);
    assert_eq!(f.classify(false, 6, &c), 3, "never overwritten: the last class");
}

#[test]
fn kmeans_fk_separates_short_and_long_lives() {
    let mut k = KMeansFk::new(2);
    k.init(&geo(50, 10));
    for t in 0..50u64 {
        let mut c = ctx(t + 1);
        c.next_write_in = if t % 2 == 0 { 3 } else { 5000 };
        k.on_user_write(t, &c);
    }
    assert_eq!(k.centroids().len(), 2, "fitted after logical_pages writes");
    let c = ctx(51);
    let short = {
        let mut cc = c;
        cc.next_write_in = 4;
        k.on_user_write(0, &cc);
        k.classify(false, 0, &cc)
    };
    let long = {
        let mut cc = c;
        cc.next_write_in = 4000;
        k.on_user_write(1, &cc);
        k.classify(false, 1, &cc)
    };
    assert_eq!((short, long), (0, 1));
}

#[test]
fn midas_chain_and_hot_filter() {
    let mut m = MiDas::new();
    m.init(&Geometry {
        logical_pages: 1000,
        unit_pages: 16,
        units: 100,
    });
    assert_eq!(user(&mut m, 5, 1), 1, "cold by default: group 1");
    // Three quick rewrites while the old copy sits in open group-1 units: counter reaches 3.
    for t in 2..5 {
        m.on_invalidate(5, &UnitInfo { sealed: false, ..unit(1, 0) }, &ctx(t));
    }
    assert_eq!(user(&mut m, 5, 5), 0, "hot");
    assert_eq!(gc(&mut m, 5, 6, 0), 1, "HOT victims go to group 1");
    assert_eq!(gc(&mut m, 9, 6, 1), 2, "group 1 -> 2 (the last of 2 groups)");
    assert_eq!(gc(&mut m, 9, 6, 2), 2, "the last group loops");
    let (groups, sizes) = m.configuration();
    assert_eq!((groups, sizes.len()), (2, 2));
}
