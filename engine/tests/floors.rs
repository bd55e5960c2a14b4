//! The engine's floors: `src/lib.rs` declares its modules bottom-up, and
//! no module's code (tests aside) names a module declared above it, so
//! the import graph has no circles and each floor can be read, tested
//! and replaced knowing only the floors below it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The modules `lib.rs` declares, in order.
fn floors(src: &Path) -> Vec<String> {
    std::fs::read_to_string(src.join("lib.rs"))
        .expect("lib.rs")
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
                .or_else(|| l.strip_prefix("mod "))?;
            Some(l.trim_end_matches(';').to_string())
        })
        .collect()
}

/// Every `.rs` file of a module (its file, or its directory's files).
fn files_of(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        out.push(file);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

/// The code of a file without comments, string-free enough for the
/// purpose, and without its test modules (`#[cfg(test)]` to the end: the
/// crate keeps test modules last) or files named for tests.
fn code(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    if name.contains("test") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).expect("source");
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate's modules a file's code names: `crate::m`, and the first
/// names of `use crate::{a, b::c}` groups.
fn named(code: &str, modules: &BTreeSet<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find("};").unwrap_or(group.len());
            for part in split_top(&group[..end]) {
                let m = ident(part.trim());
                if modules.contains(m.as_str()) {
                    out.insert(m);
                }
            }
        } else {
            let m = ident(rest);
            if modules.contains(m.as_str()) {
                out.insert(m);
            }
        }
    }
    out
}

/// `a, b::{c, d}, e` split at its top-level commas.
fn split_top(group: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[from..]);
    parts
}

#[test]
fn no_module_names_a_module_declared_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order = floors(&src);
    assert!(order.len() > 20, "{order:?}");
    let all: BTreeSet<&str> = order.iter().map(String::as_str).collect();
    let mut upward = Vec::new();
    for (floor, module) in order.iter().enumerate() {
        let above: BTreeSet<&str> = order[floor + 1..].iter().map(String::as_str).collect();
        for file in files_of(&src, module) {
            for m in named(&code(&file), &all) {
                if above.contains(m.as_str()) {
                    upward.push(format!(
                        "{} ({module}) names {m}",
                        file.strip_prefix(&src).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a lower floor to a higher one:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_floor_check_sees_an_upward_import() {
    // The checker itself: a file of a low floor naming a high one, in
    // each of the forms the crate writes, is seen.
    let modules: BTreeSet<&str> = ["page", "mtr", "fsp", "record"].into_iter().collect();
    let seen = |code: &str| named(code, &modules);
    assert!(seen("use crate::mtr::ops::put_varint;").contains("mtr"));
    assert!(seen("let x = crate::fsp::FSP_FLAGS;").contains("fsp"));
    let group = seen("use crate::{\n    page::{self, PageId},\n    record::Value,\n};");
    assert!(
        group.contains("page") && group.contains("record"),
        "{group:?}"
    );
    assert!(code_of("x();\n// crate::fsp::FSP_FLAGS\n").is_empty());
}

/// `named` over `code`'s treatment of comments, for the test above.
fn code_of(text: &str) -> BTreeSet<String> {
    let modules: BTreeSet<&str> = ["fsp"].into_iter().collect();
    let stripped: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    named(&stripped, &modules)
}
