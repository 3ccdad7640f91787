//! Source-tree checks that run as tests (after TigerBeetle's `src/tidy.zig`).
//!
//! [`functions`] lists every function in a Rust source file with its length in lines, from the
//! line holding `fn` to the line holding its closing brace. The scanner is lexical (it skips
//! comments, strings, raw strings and char literals while matching braces), which is all a
//! size ratchet needs; it does not parse Rust.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The function's name (`run`, `new`, ...).
    pub name: String,
    /// 1-based line of the `fn` keyword.
    pub line: usize,
    /// Lines from `fn` to the closing brace, both included.
    pub lines: usize,
    /// Inside a `#[cfg(test)]` module.
    pub in_test: bool,
}

/// Bytes of `src` with comments and the contents of string and char literals blanked out
/// (replaced by spaces; newlines kept), so braces and keywords can be found by plain search.
#[must_use]
pub fn blank_non_code(src: &str) -> Vec<u8> {
    blank(src, true)
}

/// Bytes of `src` with comments blanked out (replaced by spaces; newlines kept) and, when
/// `strings`, the contents of string and char literals too.
fn blank(src: &str, strings: bool) -> Vec<u8> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = block_comment_end(b, i);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if is_raw_string_start(b, i) => {
                let end = raw_string_end(b, i);
                if strings {
                    blank(&mut out, i, end);
                }
                i = end;
            }
            b'"' => {
                let end = string_end(b, i);
                if strings {
                    blank(&mut out, i + 1, end.saturating_sub(1));
                }
                i = end;
            }
            b'\'' => {
                let end = char_literal_end(b, i, &mut out);
                if !strings {
                    out[i..end].copy_from_slice(&b[i..end]);
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

fn block_comment_end(b: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

fn is_raw_string_start(b: &[u8], i: usize) -> bool {
    let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    if ident_before {
        return false;
    }
    let mut j = i + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    b.get(j) == Some(&b'"')
}

fn raw_string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    j += 1; // opening quote
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return j + 1 + hashes;
        }
        j += 1;
    }
    b.len()
}

fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a): returns where scanning resumes.
fn char_literal_end(b: &[u8], i: usize, out: &mut [u8]) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let close = b[i + 2..]
            .iter()
            .position(|&c| c == b'\'')
            .map_or(b.len(), |p| i + 2 + p);
        for c in &mut out[i + 1..close] {
            *c = b' ';
        }
        return close + 1;
    }
    // 'x' is a char literal (x one UTF-8 character); otherwise a lifetime.
    let ch_len = std::str::from_utf8(&b[i + 1..b.len().min(i + 5)])
        .ok()
        .or_else(|| {
            (1..=4)
                .rev()
                .find_map(|n| std::str::from_utf8(&b[i + 1..b.len().min(i + 1 + n)]).ok())
        })
        .and_then(|s| s.chars().next())
        .map_or(1, char::len_utf8);
    if b.get(i + 1 + ch_len) == Some(&b'\'') {
        for c in &mut out[i + 1..i + 1 + ch_len] {
            *c = b' ';
        }
        return i + 2 + ch_len;
    }
    i + 1
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn line_of(code: &[u8], pos: usize) -> usize {
    code[..pos].iter().filter(|&&c| c == b'\n').count() + 1
}

/// Index of the brace matching the `{` at `open`.
fn matching_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len().saturating_sub(1)
}

/// A module declared under `#[cfg(test)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestModule {
    /// The module's name (`tests`).
    pub name: String,
    /// The `#[path = "..."]` attribute's value, when the declaration carries one.
    pub path: Option<String>,
    /// Byte range of the module's own braces (`{` to `}`) when the module is inline; `None` for
    /// `mod tests;`, whose body is another file (and whose next `{` is someone else's code).
    pub body: Option<(usize, usize)>,
}

/// Skips ASCII whitespace from `i`.
fn skip_space(code: &[u8], mut i: usize) -> usize {
    while code.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The value of a `#[path = "..."]` attribute spanning `attr` in the original source.
fn path_attribute(src: &[u8], attr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(attr);
    let inner = text.strip_prefix("#[")?.trim_start();
    if !inner.starts_with("path") || !inner[4..].trim_start().starts_with('=') {
        return None;
    }
    let open = src.iter().position(|&c| c == b'"')?;
    let close = src[open + 1..].iter().position(|&c| c == b'"')?;
    Some(String::from_utf8_lossy(&src[open + 1..open + 1 + close]).into_owned())
}

/// The module declared after a `#[cfg(test)]` ending at `i` (other attributes and a visibility
/// may come between), or `None` when the attribute is on something else (a `fn`, a `use`).
fn test_module_at(src: &[u8], code: &[u8], mut i: usize) -> Option<TestModule> {
    let mut path = None;
    loop {
        i = skip_space(code, i);
        if code[i..].starts_with(b"#[") {
            let end = i + code[i..].iter().position(|&c| c == b']')? + 1;
            path = path.or_else(|| path_attribute(&src[i..end], &code[i..end]));
            i = end;
        } else if code[i..].starts_with(b"pub") && !code.get(i + 3).is_some_and(|&c| is_ident(c)) {
            i = skip_space(code, i + 3);
            if code.get(i) == Some(&b'(') {
                i += code[i..].iter().position(|&c| c == b')')? + 1;
            }
        } else {
            break;
        }
    }
    if !code[i..].starts_with(b"mod ") {
        return None;
    }
    let name_at = skip_space(code, i + 4);
    let name_end = (name_at..code.len())
        .find(|&j| !is_ident(code[j]))
        .unwrap_or(code.len());
    let name = String::from_utf8_lossy(&code[name_at..name_end]).into_owned();
    let after = skip_space(code, name_end);
    let body = match code.get(after) {
        Some(b'{') => Some((after, matching_brace(code, after))),
        Some(b';') => None,
        _ => return None,
    };
    Some(TestModule { name, path, body })
}

/// Every module declared under `#[cfg(test)]` in `src`, inline or not.
#[must_use]
pub fn test_modules(src: &str) -> Vec<TestModule> {
    let code = blank_non_code(src);
    let text = String::from_utf8_lossy(&code);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find("#[cfg(test)]") {
        let at = from + p + "#[cfg(test)]".len();
        found.extend(test_module_at(src.as_bytes(), &code, at));
        from = at;
    }
    found
}

/// Byte ranges of inline `#[cfg(test)] mod ... { ... }` blocks.
fn test_module_ranges(src: &str) -> Vec<(usize, usize)> {
    test_modules(src)
        .into_iter()
        .filter_map(|m| m.body)
        .collect()
}

/// Every function with a body in `src`.
#[must_use]
pub fn functions(src: &str) -> Vec<Function> {
    let code = blank_non_code(src);
    let tests = test_module_ranges(src);
    let mut found = Vec::new();
    let mut i = 0;
    while i + 3 < code.len() {
        let at_fn = &code[i..i + 3] == b"fn "
            && (i == 0 || !is_ident(code[i - 1]))
            && code.get(i + 3).is_some_and(|&c| is_ident(c));
        if !at_fn {
            i += 1;
            continue;
        }
        let name_end = (i + 3..code.len())
            .find(|&j| !is_ident(code[j]))
            .unwrap_or(code.len());
        let name = String::from_utf8_lossy(&code[i + 3..name_end]).into_owned();
        // The body starts at the first `{` outside parentheses/brackets; a `;` first means a
        // declaration without a body (trait method, extern fn).
        let mut depth = 0i32;
        let mut body = None;
        for (j, &c) in code.iter().enumerate().skip(name_end) {
            match c {
                b'(' | b'[' | b'<' => depth += 1,
                b')' | b']' => depth -= 1,
                b'>' if j > 0 && code[j - 1] != b'-' && code[j - 1] != b'=' => depth -= 1,
                b';' if depth <= 0 => break,
                b'{' if depth <= 0 => {
                    body = Some(j);
                    break;
                }
                _ => {}
            }
        }
        if let Some(open) = body {
            let close = matching_brace(&code, open);
            let (first, last) = (line_of(&code, i), line_of(&code, close));
            found.push(Function {
                name,
                line: first,
                lines: last - first + 1,
                in_test: tests.iter().any(|&(a, b)| i > a && i < b),
            });
        }
        i = name_end;
    }
    found
}

/// Assertion count and code size of one source file, test modules excluded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Density {
    /// `assert!`, `assert_eq!`, `assert_ne!` and their `debug_` forms outside test modules.
    pub assertions: usize,
    /// Lines outside test modules holding code (not blank, not only a comment).
    pub code_lines: usize,
}

impl Density {
    /// Adds another file's counts.
    #[must_use]
    pub fn plus(self, o: Density) -> Density {
        Density {
            assertions: self.assertions + o.assertions,
            code_lines: self.code_lines + o.code_lines,
        }
    }

    /// Assertions per 1000 lines of code.
    #[must_use]
    pub fn per_kloc(&self) -> f64 {
        let (a, l) = (
            u32::try_from(self.assertions).unwrap_or(u32::MAX),
            u32::try_from(self.code_lines.max(1)).unwrap_or(u32::MAX),
        );
        f64::from(a) * 1000.0 / f64::from(l)
    }
}

/// Counts assertions and code lines in `src` (comments, strings and test modules excluded).
#[must_use]
pub fn density(src: &str) -> Density {
    let code = blank_non_code(src);
    let tests = test_module_ranges(src);
    let mut kept = code.clone();
    for &(a, b) in &tests {
        for c in &mut kept[a..=b.min(code.len() - 1)] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    let text = String::from_utf8_lossy(&kept);
    let code_lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let mut assertions = 0;
    for (i, _) in text.match_indices("assert") {
        let before_ok = i == 0 || !is_ident(kept[i - 1]) || text[..i].ends_with("debug_");
        let rest = &text[i + 6..];
        let macro_ok =
            rest.starts_with("!(") || rest.starts_with("_eq!(") || rest.starts_with("_ne!(");
        if before_ok && macro_ok {
            assertions += 1;
        }
    }
    Density {
        assertions,
        code_lines,
    }
}

/// Lines of code in `src` outside test modules: every line but blank ones and those holding
/// only a comment. A line inside a multi-line string literal is code (it is part of the
/// program's text), unlike in [`density`]'s count.
#[must_use]
pub fn code_lines(src: &str) -> usize {
    let mut kept = blank(src, false);
    let code = blank_non_code(src);
    let text = String::from_utf8_lossy(&code);
    // Each inline test module from its `#[cfg(test)]` to its closing brace.
    let mut ranges = Vec::new();
    for (at, attr) in text.match_indices("#[cfg(test)]") {
        if let Some((_, b)) =
            test_module_at(src.as_bytes(), &code, at + attr.len()).and_then(|m| m.body)
        {
            ranges.push((at, b));
        }
    }
    for (a, b) in ranges {
        for c in &mut kept[a..=b.min(src.len() - 1)] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    String::from_utf8_lossy(&kept)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// Every `.rs` file below `dir`, sorted.
///
/// # Errors
/// Any I/O error reading the directory tree.
pub fn rust_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The directory holding the files of the modules `file` declares: the file's own directory
/// for a crate root (`lib.rs`, `main.rs`, `src/bin/*.rs`) or a `mod.rs`, else a directory
/// named after the file (`buffer.rs` declares into `buffer/`).
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or_else(|| Path::new(""));
    let root = matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("lib.rs" | "main.rs" | "mod.rs")
    ) || parent.file_name().is_some_and(|n| n == "bin");
    if root {
        parent.to_path_buf()
    } else {
        parent.join(file.file_stem().unwrap_or_default())
    }
}

/// The files among `files` (path, contents) that hold test code: the file of every
/// `#[cfg(test)] mod name;` (`name.rs` or `name/mod.rs` in the declaring file's module
/// directory, or its `#[path]` relative to the declaring file's directory) and every file below
/// that module's directory (its own submodules).
#[must_use]
pub fn test_files(files: &[(PathBuf, String)]) -> BTreeSet<PathBuf> {
    let known: BTreeSet<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
    let mut targets = BTreeSet::new();
    for (file, text) in files {
        for m in test_modules(text).into_iter().filter(|m| m.body.is_none()) {
            let candidates = match &m.path {
                Some(p) => vec![file.parent().unwrap_or_else(|| Path::new("")).join(p)],
                None => {
                    let dir = module_dir(file);
                    vec![
                        dir.join(format!("{}.rs", m.name)),
                        dir.join(&m.name).join("mod.rs"),
                    ]
                }
            };
            targets.extend(
                candidates
                    .into_iter()
                    .filter(|c| known.contains(c.as_path())),
            );
        }
    }
    let dirs: Vec<PathBuf> = targets.iter().map(|t| module_dir(t)).collect();
    files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| targets.contains(*p) || dirs.iter().any(|d| p.starts_with(d)))
        .cloned()
        .collect()
}

/// Every `.rs` file below `dir` that is not test code ([`test_files`]), with its contents.
///
/// # Errors
/// Any I/O error reading the tree; a file that is not UTF-8.
pub fn non_test_sources(dir: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    for p in rust_files(dir)? {
        let text = std::fs::read_to_string(&p)?;
        files.push((p, text));
    }
    let tests = test_files(&files);
    files.retain(|(p, _)| !tests.contains(p));
    Ok(files)
}

/// Assertion density of the non-test code below `dir` (test files and test modules excluded).
///
/// # Errors
/// As [`non_test_sources`].
pub fn source_density(dir: &Path) -> std::io::Result<Density> {
    Ok(non_test_sources(dir)?
        .iter()
        .fold(Density::default(), |d, (_, text)| d.plus(density(text))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_lines_skip_comments_blanks_and_tests_but_count_strings() {
        let src = "// a comment\n\nfn a() {\n    let s = \"one\n two // not a comment\n\";\n    /* block\n comment */\n}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        // fn a() {, let s = "one, two // ..., "; , } = 5 lines.
        assert_eq!(code_lines(src), 5);
        assert_eq!(code_lines("let c = '\"'; // x\n"), 1);
    }

    #[test]
    fn finds_functions_and_lengths() {
        let src = "fn a() {\n    let s = \"}\";\n}\n\n// fn fake() {\nimpl X {\n    pub fn b<T: Into<u8>>(&self, x: T) -> Result<(), ()>\n    where T: Copy\n    {\n        let c = '}';\n        if true { 1 } else { 2 };\n    }\n}\ntrait T { fn decl(&self); }\n";
        let f = functions(src);
        let names: Vec<_> = f
            .iter()
            .map(|f| (f.name.as_str(), f.line, f.lines))
            .collect();
        assert_eq!(names, vec![("a", 1, 3), ("b", 7, 6)]);
    }

    #[test]
    fn lifetimes_raw_strings_and_test_modules() {
        let src = "fn a<'a>(x: &'a str) -> &'a str {\n    let r = r#\"{ \"# ;\n    x\n}\n#[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n";
        let f = functions(src);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].lines, f[0].in_test), (4, false));
        assert_eq!((f[1].name.as_str(), f[1].in_test), ("t", true));
    }

    #[test]
    fn out_of_line_test_module_masks_no_real_code() {
        // `mod tests;` has no body here: the next block is real code and must be counted.
        let src = "#[cfg(test)]\nmod tests;\n\nfn real(x: u8) {\n    assert!(x > 0);\n}\n";
        let d = density(src);
        assert_eq!(d.assertions, 1);
        assert_eq!(d.code_lines, 5);
        let f = functions(src);
        assert_eq!((f[0].name.as_str(), f[0].in_test), ("real", false));
        let m = test_modules(src);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].name.as_str(), m[0].body), ("tests", None));
    }

    #[test]
    fn inline_test_module_is_masked_by_its_own_braces() {
        let src = "#[cfg(test)]\n#[doc(hidden)]\npub(crate) mod tests {\n    fn t() { assert!(true); }\n}\nfn after() { assert!(1 < 2); }\n#[cfg(test)]\nfn helper() {}\n";
        let d = density(src);
        assert_eq!(
            d.assertions, 1,
            "only the assertion after the module counts"
        );
        let m = test_modules(src);
        assert_eq!(m.len(), 1, "a #[cfg(test)] fn is not a module");
        let in_test: Vec<_> = functions(src).iter().map(|f| f.in_test).collect();
        assert_eq!(in_test, vec![true, false, false]);
    }

    #[test]
    fn test_files_are_the_targets_of_cfg_test_modules() {
        let file = |p: &str, text: &str| (PathBuf::from(p), text.to_owned());
        let decl = "#[cfg(test)]\nmod tests;\n";
        let files = vec![
            file(
                "s/lib.rs",
                &format!("mod buffer;\nmod par;\nmod other;\n{decl}"),
            ),
            file("s/tests.rs", "mod helper;\n"),
            file("s/tests/helper.rs", ""),
            file("s/buffer.rs", decl),
            file("s/buffer/tests.rs", ""),
            file("s/buffer/pool.rs", ""),
            file(
                "s/par/mod.rs",
                "#[cfg(test)]\n#[path = \"checks.rs\"]\nmod t;\n",
            ),
            file("s/par/checks.rs", ""),
            file("s/other.rs", "mod tests;\n"),
            file("s/other/tests.rs", ""),
        ];
        let got: Vec<_> = test_files(&files).into_iter().collect();
        let want: Vec<PathBuf> = [
            "s/buffer/tests.rs",
            "s/par/checks.rs",
            "s/tests/helper.rs",
            "s/tests.rs",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(got, want, "a module without #[cfg(test)] is real code");
    }
}
