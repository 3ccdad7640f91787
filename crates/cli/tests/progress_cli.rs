//! Progress bars on a terminal (`script` gives the command a tty): counted in the units a
//! reader thinks in (runs, rows), with a rate per minute and an ETA; none with `-q`.
mod common;
use common::on_a_terminal;

#[test]
fn plan_figures_counts_runs_per_minute_with_an_eta() {
    let dir = tempfile::tempdir().unwrap();
    let args = format!(
        "plan figures --fig1-only --blocks-per-chip 256 --drive-writes 0.5 --out {}",
        dir.path().join("f").display()
    );
    let shown = on_a_terminal(&args);
    // "[=>  ] 3.4/12 runs (10.0 runs/min, 2s elapsed) eta 9s", not "3400/12000 (166.6667/s".
    assert!(
        shown
            .lines()
            .any(|l| l.contains("/12 runs (") && l.contains(" runs/min, ") && l.contains(" eta ")),
        "{shown}"
    );
    // Not even the first frame in thousandths ("0/12000 (0/s, 0s elapsed) eta 0s").
    assert!(!shown.contains("/12000"), "thousandths shown: {shown}");
    let quiet = on_a_terminal(&format!("{args} --force -q"));
    assert!(!quiet.contains(" eta "), "{quiet}");
}

#[test]
fn table1_counts_rows_per_minute_with_an_eta() {
    let shown = on_a_terminal("table1 --quick --records 20000 --device-writes 1");
    // "[====>  ] 1.1/7 rows (104.1 rows/min, 0s elapsed) eta 3s", not "1100/7000 (21.8742/s".
    assert!(
        shown
            .lines()
            .any(|l| l.contains("/7 rows (") && l.contains(" rows/min, ") && l.contains(" eta ")),
        "{shown}"
    );
    assert!(!shown.contains("/7000"), "thousandths shown: {shown}");
}
