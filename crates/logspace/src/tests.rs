use super::*;


#[test]
fn lifecycle_and_greedy_pick() {
    let mut s = Space::new(4, 10, Box::new(Greedy::default()));
    let a = s.open_unit(0).unwrap();
    s.add_valid(a, 10);
    s.seal(a);
    let b = s.open_unit(0).unwrap();
    s.add_valid(b, 10);
    s.seal(b);
    s.sub_valid(a, 3);
    s.sub_valid(b, 7);
    assert_eq!(s.pick_victim().unwrap(), b);
    s.sub_valid(b, 3);
    s.erase(b);
    assert_eq!(s.free_units(), 3);
    assert_eq!(s.erase_count(b), 1);
    assert_eq!(s.victims.count(), 1);
    s.check_invariants();
}

#[test]
fn no_victim_when_nothing_sealed() {
    let mut s = Space::new(2, 10, Box::new(Greedy::default()));
    assert_eq!(s.pick_victim(), Err(SpaceError::NoVictim));
}

#[test]
fn take_victim_removes_the_unit_from_the_policy() {
    let mut s = Space::new(4, 10, Box::new(Greedy::default()));
    for _ in 0..3 {
        let u = s.open_unit(0).unwrap();
        s.add_valid(u, 5);
        s.seal(u);
    }
    // Units 0..3 sealed with 5 valid each (open_unit pops from the end: 0, 1, 2).
    s.take_victim(1).unwrap();
    assert_eq!(s.state(1), UnitState::InGc);
    assert!(s.take_victim(1).is_err(), "already in GC");
    assert!(s.take_victim(3).is_err(), "free unit");
    s.sub_valid(1, 5);
    s.erase(1);
    let a = s.pick_victim().unwrap();
    let b = s.pick_victim().unwrap();
    assert!(a != 1 && b != 1 && a != b);
    assert!(s.pick_victim().is_err());
    s.check_invariants();
}
