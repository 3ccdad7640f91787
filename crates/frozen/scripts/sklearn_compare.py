#!/usr/bin/env python3
"""Compare nowa-frozen's SGD with scikit-learn's SGDClassifier(loss="log_loss").

Needs scikit-learn (pip install scikit-learn) and a built example:
    cargo build --release -p nowa-frozen --example sgd_csv
    python3 crates/frozen/scripts/sklearn_compare.py

For each dataset and random_state it fits sklearn, derives the 32-bit seed sklearn passes to
_plain_sgd (fit_binary: make_dataset draws randint(1, 2**31 - 1), then
seed = randint(2**31 - 1) from the same RandomState), runs the Rust fit on the same
(already standardized) float64 data in the same order, and prints the largest weight
difference, the epochs and the test accuracy of both. Not part of CI.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression, SGDClassifier

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXE = os.path.join(ROOT, "target", "release", "examples", "sgd_csv")


def sklearn_seed(random_state):
    rs = np.random.RandomState(random_state)
    rs.randint(1, np.iinfo(np.int32).max)  # make_dataset's ArrayDataset seed
    return int(rs.randint(np.iinfo(np.int32).max))


def datasets():
    rng = np.random.RandomState(0)
    # 1. Two Gaussian classes, means -1 and +1 in one dimension (Bayes accuracy Phi(1)).
    n = 20000
    y = rng.randint(0, 2, n)
    x = (2.0 * y - 1.0 + rng.randn(n)).reshape(-1, 1)
    yield "gauss-1d", x, y
    # 2. Twelve correlated features, logistic labels (like 12 HR features).
    a = rng.randn(12, 12)
    x = rng.randn(n, 12) @ a
    w = rng.randn(12)
    p = 1 / (1 + np.exp(-(x @ w) / 4 - 0.3))
    y = (rng.rand(n) < p).astype(int)
    yield "logit-12d", x, y
    # 3. Separable: label = x0 > 0.
    x = rng.randn(5000, 3)
    y = (x[:, 0] > 0).astype(int)
    yield "separable-3d", x, y


def run_rust(xtr, ytr, seed_arg):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        for yi, row in zip(ytr, xtr):
            f.write(",".join([str(int(yi))] + [repr(float(v)) for v in row]) + "\n")
        path = f.name
    out = subprocess.run([EXE, path, seed_arg], check=True, capture_output=True, text=True)
    os.unlink(path)
    return json.loads(out.stdout)


def main():
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}")
    for name, x, y in datasets():
        x = (x - x.mean(0)) / x.std(0)
        ntr = int(len(y) * 0.75)
        xtr, ytr, xte, yte = x[:ntr], y[:ntr], x[ntr:], y[ntr:]
        for rs in (0, 1, 42):
            clf = SGDClassifier(loss="log_loss", random_state=rs).fit(xtr, ytr)
            seed = sklearn_seed(rs)
            r = run_rust(xtr, ytr, str(seed))
            wr, br = np.array(r["weights"]), r["intercept"]
            diff = max(np.max(np.abs(wr - clf.coef_[0])), abs(br - clf.intercept_[0]))
            same = np.array_equal(wr, clf.coef_[0]) and br == clf.intercept_[0]
            acc_s = clf.score(xte, yte)
            acc_r = np.mean(((xte @ wr + br) > 0).astype(int) == yte)
            print(f"{name:13} random_state {rs:2} seed {seed:10}: epochs sklearn {clf.n_iter_:3} "
                  f"rust {r['epochs']:3}; bit-identical {same}; max |diff| {diff:.3g}; "
                  f"test accuracy sklearn {acc_s:.4f} rust {acc_r:.4f}")
        lr = LogisticRegression().fit(xtr, ytr)
        r = run_rust(xtr, ytr, "logreg")
        wr, br = np.array(r["weights"]), r["intercept"]
        diff = max(np.max(np.abs(wr - lr.coef_[0])), abs(br - lr.intercept_[0]))
        scale = max(np.max(np.abs(lr.coef_[0])), abs(lr.intercept_[0]))
        acc_r = np.mean(((xte @ wr + br) > 0).astype(int) == yte)
        print(f"{name:13} LogisticRegression() vs linfa-logistic: max |diff| {diff:.3g} "
              f"(largest |coef| {scale:.3g}); test accuracy sklearn {lr.score(xte, yte):.4f} "
              f"rust {acc_r:.4f}")


if __name__ == "__main__":
    sys.exit(main())
