//! The differences `innosim diff` found against a real server, saved under
//! `corpus/diff/` by `innosim diff --shrink N --save corpus/diff`: each a
//! shrunk script whose `.result` is that server's output. Each runs on
//! innosim alone. One fixed must give the server's output; one still open
//! is listed in `corpus/diff/disabled.def` with what is known of it, and
//! must still differ, so that a fix shows as an entry to take out. One
//! that a later version's rule explains is listed in
//! `corpus/diff/versions.def` with the rule (or the rules, by commas, that
//! it needs together): it must differ with 1.0.6's rules and give the
//! server's output with those rules on (`engine::LaterRule`).

use std::collections::BTreeMap;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/diff")
}

/// `name : reason` lines of `disabled.def` (`#` starts a comment).
fn disabled() -> BTreeMap<String, String> {
    listed("disabled.def")
}

/// `name : text` lines of a list in `corpus/diff` (`#` starts a comment).
fn listed(file: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join(file)).unwrap_or_default();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, why) = l.split_once(':').unwrap_or((l, ""));
            (name.trim().to_string(), why.trim().to_string())
        })
        .collect()
}

#[test]
fn every_saved_difference_gives_the_servers_output_or_is_listed_open() {
    let open = disabled();
    let versions = listed("versions.def");
    let mut tests: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("corpus/diff exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    tests.sort();
    assert!(!tests.is_empty(), "no saved differences");
    let mut wrong = Vec::new();
    let mut seen = Vec::new();
    for path in &tests {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let run = sim::script::run_file(path).unwrap_or_else(|e| panic!("{e}"));
        let want = std::fs::read_to_string(path.with_extension("result"))
            .unwrap_or_else(|e| panic!("{name}.result: {e}"));
        let same = run.output == want;
        if let Some(rule) = versions.get(&name) {
            // One rule, or several a difference needs together, by commas.
            let later =
                (rule.split(',').map(str::trim)).fold(engine::LaterRules::NONE, |rules, r| {
                    let r = engine::LaterRule::from_name(r)
                        .unwrap_or_else(|| panic!("versions.def: {name}: no later rule {r}"));
                    rules.with(r)
                });
            let opts = sim::script::Options {
                base: path.parent().map(PathBuf::from),
                later,
                ..Default::default()
            };
            let text = std::fs::read_to_string(path).expect("the script reads");
            let with_rule =
                sim::script::run_with(&text, &name, &opts).unwrap_or_else(|e| panic!("{e}"));
            if same {
                wrong.push(format!(
                    "{name} gives the server's output without the later rule {rule}: take it out of versions.def"
                ));
            } else if with_rule.output != want {
                wrong.push(format!(
                    "{name} does not give the server's output with the later rule {rule} on:\n{}",
                    sim::script::diff(&want, &with_rule.output)
                ));
            }
            seen.push(name);
            continue;
        }
        match (open.get(&name), same) {
            (None, true) | (Some(_), false) => {}
            (None, false) => wrong.push(format!(
                "{name} no longer gives the server's output:\n{}",
                sim::script::diff(&want, &run.output)
            )),
            (Some(why), true) => wrong.push(format!(
                "{name} now gives the server's output: take it out of disabled.def ({why})"
            )),
        }
        seen.push(name);
    }
    for name in open.keys().chain(versions.keys()) {
        assert!(
            seen.contains(name),
            "disabled.def or versions.def names {name}, which has no script"
        );
        assert!(
            !(open.contains_key(name) && versions.contains_key(name)),
            "{name} is in both disabled.def and versions.def"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
