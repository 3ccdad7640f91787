//! The non-SGD classifiers of the paper's Figure 18, trained by linfa and exported into this
//! crate's own parameters (so inference stays allocation-free and the model file is plain
//! JSON):
//!
//! - plain logistic regression: `linfa-logistic` (L-BFGS with More-Thuente line search),
//!   objective `sum log-loss + alpha/2 |w|^2` with alpha 1, at most 100 iterations, gradient
//!   tolerance 1e-4: the same objective as scikit-learn's `LogisticRegression()` defaults
//!   (C = 1, lbfgs, max_iter 100, tol 1e-4), not the same optimizer code;
//! - a depth-limited CART decision tree: `linfa-trees` (Gini, min weight 2 to split, 1 per
//!   leaf), exported node by node; each leaf keeps linfa's class and the share of frozen
//!   training samples that reach it (its probability).

use crate::error::FrozenError;
use linfa::prelude::*;
use linfa_logistic::LogisticRegression;
use linfa_trees::{DecisionTree, TreeNode};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

/// One node of an exported decision tree. Children come after their parent in the node list
/// (pre-order), so every walk ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "lowercase")]
pub enum Node {
    /// `x[feature] < threshold` goes to `left`, else `right`.
    Split {
        /// Feature index.
        feature: u32,
        /// Threshold (standardized units).
        threshold: f64,
        /// Left child's index.
        left: u32,
        /// Right child's index.
        right: u32,
    },
    /// A leaf.
    Leaf {
        /// linfa's class for the leaf.
        frozen: bool,
        /// Share of frozen training samples reaching the leaf.
        proba: f64,
    },
}

fn records(x: &[f64], d: usize) -> Result<Array2<f64>, FrozenError> {
    assert_eq!(x.len() % d, 0, "x is n x d");
    Array2::from_shape_vec((x.len() / d, d), x.to_vec()).map_err(|e| FrozenError::Classifier {
        classifier: "shape",
        source: Box::new(e),
    })
}

/// Fits plain logistic regression (linfa-logistic, alpha 1, 100 iterations, tolerance 1e-4);
/// returns (weights, intercept) for P(frozen).
///
/// # Errors
/// [`FrozenError::Classifier`] if linfa refuses the data (one class, non-finite values).
///
/// # Panics
/// If `x` is not `y.len()` rows of `d` values.
pub fn fit_logreg(x: &[f64], y: &[bool], d: usize) -> Result<(Vec<f64>, f64), FrozenError> {
    let ds = Dataset::new(records(x, d)?, Array1::from(y.to_vec()));
    let fitted = LogisticRegression::default()
        .alpha(1.0)
        .max_iterations(100)
        .gradient_tolerance(1e-4)
        .fit(&ds)
        .map_err(|e| FrozenError::Classifier {
            classifier: "logreg",
            source: Box::new(e),
        })?;
    // linfa's positive class is the more frequent label; flip to P(frozen) if needed.
    let sign = if fitted.labels().pos.class { 1.0 } else { -1.0 };
    let w: Vec<f64> = fitted.params().iter().map(|v| sign * v).collect();
    assert_eq!(w.len(), d);
    Ok((w, sign * fitted.intercept()))
}

/// Fits a decision tree of at most `max_depth` levels and exports it.
///
/// # Errors
/// [`FrozenError::Classifier`] if linfa refuses the data.
///
/// # Panics
/// If `max_depth` is 0 or the shapes disagree.
pub fn fit_tree(
    x: &[f64],
    y: &[bool],
    d: usize,
    max_depth: usize,
) -> Result<Vec<Node>, FrozenError> {
    assert!(max_depth >= 1, "a tree of at least one split level");
    let ds = Dataset::new(records(x, d)?, Array1::from(y.to_vec()));
    let tree = DecisionTree::params()
        .max_depth(Some(max_depth))
        .fit(&ds)
        .map_err(|e| FrozenError::Classifier {
            classifier: "tree",
            source: Box::new(e),
        })?;
    let mut nodes = export(&tree);
    leaf_probabilities(&mut nodes, x, y, d);
    Ok(nodes)
}

type Tree = TreeNode<f64, bool>;
/// A parent's child slot to fill: (parent index, is the left child).
type ChildSlot = (usize, bool);

/// Pre-order export of linfa's tree.
fn export(tree: &DecisionTree<f64, bool>) -> Vec<Node> {
    let mut nodes = Vec::new();
    // (node, slot of the parent's child index to fill: (parent, is_left)).
    let mut stack: Vec<(&Tree, Option<ChildSlot>)> = vec![(tree.root_node(), None)];
    while let Some((n, parent)) = stack.pop() {
        let me = nodes.len();
        if let Some((p, is_left)) = parent {
            let me32 = u32::try_from(me).expect("a tree of fewer than 2^32 nodes");
            if let Node::Split { left, right, .. } = &mut nodes[p] {
                *(if is_left { left } else { right }) = me32;
            }
        }
        if let Some(class) = n.prediction() {
            nodes.push(Node::Leaf {
                frozen: class,
                proba: 0.0,
            });
            continue;
        }
        let (feature, threshold, _) = n.split();
        nodes.push(Node::Split {
            feature: u32::try_from(feature).expect("feature index fits u32"),
            threshold,
            left: 0,
            right: 0,
        });
        let kids = n.children();
        let (l, r) = (kids[0].as_deref(), kids[1].as_deref());
        let (Some(l), Some(r)) = (l, r) else {
            unreachable!("linfa's internal nodes have two children");
        };
        stack.push((r, Some((me, false))));
        stack.push((l, Some((me, true))));
    }
    nodes
}

/// The leaf a standardized row reaches.
///
/// # Panics
/// If the tree is malformed (checked when a model is loaded).
#[must_use]
pub fn walk(nodes: &[Node], row: &[f64]) -> usize {
    let mut i = 0;
    loop {
        match &nodes[i] {
            Node::Leaf { .. } => return i,
            Node::Split {
                feature,
                threshold,
                left,
                right,
            } => {
                let next = if row[*feature as usize] < *threshold {
                    *left
                } else {
                    *right
                } as usize;
                assert!(next > i, "children follow their parent");
                i = next;
            }
        }
    }
}

fn leaf_probabilities(nodes: &mut [Node], x: &[f64], y: &[bool], d: usize) {
    let mut counts = vec![(0u64, 0u64); nodes.len()];
    for (row, &label) in x.chunks_exact(d).zip(y) {
        let leaf = walk(nodes, row);
        counts[leaf].0 += u64::from(label);
        counts[leaf].1 += 1;
    }
    for (n, (pos, all)) in nodes.iter_mut().zip(counts) {
        if let Node::Leaf { proba, frozen } = n {
            #[expect(clippy::cast_precision_loss, reason = "counts as a share")]
            let p = if all > 0 {
                pos as f64 / all as f64
            } else {
                f64::from(u8::from(*frozen))
            };
            *proba = p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logreg_separates_a_line_and_points_to_frozen() {
        // frozen iff x0 > 0 (x1 is noise); more non-frozen than frozen, so linfa's positive
        // class is "not frozen" and the export must flip the sign.
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..300 {
            let v = f64::from(i % 30) - 19.5;
            x.extend([v / 10.0, f64::from(i % 7) / 7.0]);
            y.push(v > 0.0);
        }
        assert!(y.iter().filter(|&&f| f).count() < 150);
        let (w, b) = fit_logreg(&x, &y, 2).unwrap();
        assert!(w[0] > 1.0, "P(frozen) rises with x0: {w:?} {b}");
        for (row, &label) in x.chunks(2).zip(&y) {
            assert_eq!(w[0] * row[0] + w[1] * row[1] + b > 0.0, label);
        }
    }

    #[test]
    fn tree_learns_an_interval_and_exports_in_preorder() {
        // frozen iff 2 <= x0 < 5: needs two splits.
        let x: Vec<f64> = (0..80).map(|i| f64::from(i % 8)).collect();
        let y: Vec<bool> = x.iter().map(|&v| (2.0..5.0).contains(&v)).collect();
        let nodes = fit_tree(&x, &y, 1, 4).unwrap();
        assert!(nodes.len() >= 5, "{nodes:?}");
        for (row, &label) in x.chunks(1).zip(&y) {
            let Node::Leaf { frozen, proba } = &nodes[walk(&nodes, row)] else {
                panic!("walk ends at a leaf");
            };
            assert_eq!(*frozen, label);
            assert_eq!(*proba, if label { 1.0 } else { 0.0 });
        }
    }
}
