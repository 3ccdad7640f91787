//! The docs cite the five papers as docs/papers.md lists them: every page links papers.md,
//! none names a file outside the repository (`../shared/papers/...`, `../shared/specs/...`:
//! a reader's clone has no such directory), and none speaks of the project's process ("issue
//! N") outside the design log and the testing record, whose history it is.
use std::path::{Path, PathBuf};

fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("docs/ is readable") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            pages(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every Markdown page a reader opens: the README and docs/, less papers.md itself and the
/// report `nowa reproduce` generates (its rows name the papers by the same short names).
fn docs() -> Vec<(PathBuf, String)> {
    let mut files = vec![root().join("README.md")];
    pages(&root().join("docs"), &mut files);
    assert!(files.len() >= 15, "the docs: {files:?}");
    files
        .into_iter()
        .filter(|p| !p.ends_with("docs/papers.md") && !p.ends_with("REPRODUCTION.md"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a readable page");
            (p, text)
        })
        .collect()
}

#[test]
fn every_doc_links_papers_md_and_no_path_outside_the_repository() {
    for (p, text) in docs() {
        assert!(
            text.contains("papers.md"),
            "{}: no link to papers.md",
            p.display()
        );
        for outside in ["shared/papers", "shared/specs", "../shared/"] {
            assert!(
                !text.contains(outside),
                "{}: names {outside}, which is not in the repository",
                p.display()
            );
        }
    }
}

/// "issue 30", "issue #12": the reader has no issue tracker; the docs say what and why.
#[test]
fn no_process_wording_in_the_docs() {
    for (p, text) in docs() {
        let lower = text.to_lowercase();
        let mut rest = lower.as_str();
        while let Some(i) = rest.find("issue ") {
            let after = rest[i + 6..].trim_start_matches('#');
            assert!(
                !after.starts_with(|c: char| c.is_ascii_digit()),
                "{}: '{}'",
                p.display(),
                rest[i..].chars().take(12).collect::<String>()
            );
            rest = &rest[i + 6..];
        }
    }
}
