//! The byte tables in docs/design.md (each after a `<!-- format: NAME -->` marker) list the
//! same fields, at the same offsets and sizes, as the code's format constants
//! (`nowa_engine::format::FORMATS`). A size written `..` is a variable-length field.

use nowa_engine::format::{FORMATS, VAR};
use std::collections::BTreeMap;

/// (offset, size; None = variable) rows of every marked table.
fn doc_tables(doc: &str) -> BTreeMap<String, Vec<(usize, Option<usize>)>> {
    let mut out = BTreeMap::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- format:")
            .and_then(|r| r.strip_suffix("-->"))
        else {
            continue;
        };
        assert_eq!(
            lines.next().map(str::trim),
            Some("```text"),
            "table {name}: no text block"
        );
        let mut rows = Vec::new();
        for row in lines.by_ref() {
            if row.trim() == "```" {
                break;
            }
            let mut t = row.split_whitespace();
            let (Some(off), Some(size)) = (t.next(), t.next()) else {
                continue;
            };
            let Ok(off) = off.parse::<usize>() else {
                continue;
            };
            rows.push((off, size.parse::<usize>().ok()));
        }
        assert!(
            out.insert(name.trim().to_string(), rows).is_none(),
            "table {name} twice"
        );
    }
    out
}

#[test]
fn design_md_byte_tables_match_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/design.md");
    let doc = std::fs::read_to_string(path).expect("docs/design.md");
    let tables = doc_tables(&doc);
    let mut errors = Vec::new();
    for f in FORMATS {
        let Some(rows) = tables.get(f.name) else {
            errors.push(format!("{}: no table in docs/design.md", f.name));
            continue;
        };
        let code: Vec<(usize, Option<usize>)> = f
            .fields
            .iter()
            .map(|x| (x.offset, (x.size != VAR).then_some(x.size)))
            .collect();
        if *rows != code {
            errors.push(format!("{}: design.md {rows:?}\n  code {code:?}", f.name));
        }
    }
    for name in tables.keys() {
        if !FORMATS.iter().any(|f| f.name == name) {
            errors.push(format!(
                "{name}: table in docs/design.md without a format in the code"
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(tables.len(), FORMATS.len());
}
