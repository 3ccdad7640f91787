//! Fits `nowa_frozen::sgd` on a CSV (`label,x1,...,xd` per line, label 0/1, no header) with a
//! raw 32-bit shuffle seed, and prints the weights, intercept and epochs as JSON (full
//! precision); with SEED `logreg`, fits linfa's logistic regression instead. Used by
//! `scripts/sklearn_compare.py` to compare with scikit-learn.
//!
//! `cargo run --release -p nowa-frozen --example sgd_csv -- FILE SEED|logreg`

use nowa_frozen::sgd::{fit, SgdParams};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(seed)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: sgd_csv FILE SEED");
        return ExitCode::from(2);
    };
    let logreg = seed == "logreg";
    let Ok(seed) = (if logreg { Ok(0) } else { seed.parse::<u32>() }) else {
        eprintln!("sgd_csv: SEED must be a 32-bit unsigned integer or logreg");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sgd_csv: {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let (mut x, mut y, mut d) = (Vec::new(), Vec::new(), 0);
    for (i, line) in text.lines().enumerate() {
        let vals: Result<Vec<f64>, _> = line.split(',').map(str::parse::<f64>).collect();
        let Ok(vals) = vals else {
            eprintln!("sgd_csv: line {}: not numbers", i + 1);
            return ExitCode::from(1);
        };
        d = vals.len() - 1;
        y.push(vals[0] != 0.0);
        x.extend_from_slice(&vals[1..]);
    }
    if logreg {
        return match nowa_frozen::classifiers::fit_logreg(&x, &y, d) {
            Ok((w, b)) => {
                println!(
                    "{}",
                    serde_json::json!({ "weights": w, "intercept": b, "epochs": 0 })
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("sgd_csv: {e}");
                ExitCode::from(1)
            }
        };
    }
    let start = std::time::Instant::now();
    match fit(&x, &y, d, &SgdParams::default(), seed, None) {
        Ok(f) => {
            let json = serde_json::json!({
                "weights": f.weights, "intercept": f.intercept, "epochs": f.epochs,
                "fit_wall_seconds": start.elapsed().as_secs_f64(),
            });
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sgd_csv: {e}");
            ExitCode::from(1)
        }
    }
}
