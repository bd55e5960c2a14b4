//! The corpus: saved failures, each a folder `corpus/<name>/` holding the
//! shrunk plan as readable JSON (`plan.json`) and what went wrong
//! (`failure.txt`: the violations, the reproduction line, the commit).
//! `cargo test` replays every entry: an entry from a real bug must pass
//! (the bug stays fixed); an entry from a canary must still fail (the
//! checker still catches it).
//!
//! # From a failing run to an entry
//!
//! A failing run prints one line that reproduces it, with the commit it ran on: `reproduce:
//! innosim replay <SEED> --profile <PROFILE>`. `innosim fuzz` shrinks the first failure of each
//! kind of violation ([`crate::kind`]; [`crate::shrink`] says how), lists the others with their
//! replay lines, and saves it under `corpus/<profile>-<seed>/` (or `-2`, `-3`, ... when an
//! entry of that name holds another plan: a campaign never overwrites a kept entry) as a
//! readable `plan.json` plus `failure.txt`; with `--time` the shrinking happens within that
//! time, and `--stop-on-failure` stops at the first failing seed. `innosim replay
//! corpus/<entry>` runs an entry again, and `cargo test` replays every entry: one from a canary
//! must keep failing, caught by the same checker.
//!
//! `corpus/` keeps one shrunk catch of every canary (`innosim shrink --seed N --canary C`, from
//! a seed `innosim fuzz --canary C` reports): 29 of them have 2 to 8 statements;
//! skip-doublewrite has 18 (pages must be flushed and then torn by a power loss),
//! late-lock-timeout 39 (a wait must last to its timeout: every session waiting, so that time
//! jumps), zip-count-failed-compression 13 and zip-skip-image-redo 17 (a compressed page must
//! fill until it fails to compress, or recompress), cascade-skips-second-level 11 (a parent, a
//! child and a grandchild row, each committed, then the parent's delete), and `cargo test`
//! holds every other canary to at most 10.

use crate::plan::Plan;
use crate::runner::Outcome;
use std::path::{Path, PathBuf};

/// The folder name of an entry.
pub fn entry_name(plan: &Plan) -> String {
    match &plan.canary {
        Some(c) => format!("{}-{}-{c}", plan.profile, plan.seed),
        None => format!("{}-{}", plan.profile, plan.seed),
    }
}

/// Saves a failing plan and its outcome under `root`, in a folder named
/// by [`entry_name`]; if an entry of that name holds another plan (a
/// curated entry, say), in the first free `NAME-2`, `NAME-3`, ... instead:
/// a campaign never overwrites what is kept.
pub fn save(root: &Path, plan: &Plan, outcome: &Outcome, commit: &str) -> std::io::Result<PathBuf> {
    let name = entry_name(plan);
    let mut dir = root.join(&name);
    let mut n = 1;
    while dir.exists() && load(&dir).ok().as_ref() != Some(plan) {
        n += 1;
        dir = root.join(format!("{name}-{n}"));
    }
    save_in(&dir, plan, outcome, commit)?;
    Ok(dir)
}

/// Saves a failing plan and its outcome in `dir`, replacing what it held
/// (`innosim shrink --entry` saves a smaller plan over its entry).
pub fn save_in(dir: &Path, plan: &Plan, outcome: &Outcome, commit: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(plan).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("plan.json"), json + "\n")?;
    let mut text = String::new();
    for v in &outcome.violations {
        text.push_str(&format!("violation: {v}\n"));
    }
    text.push_str(&format!("reproduce: innosim replay {} \n", dir.display()));
    text.push_str(&format!(
        "seed: {}\nprofile: {}\ncommit: {commit}\nstatements: {}\n",
        plan.seed,
        plan.profile,
        plan.statement_count()
    ));
    std::fs::write(dir.join("failure.txt"), text)?;
    Ok(())
}

/// Loads an entry's plan.
pub fn load(dir: &Path) -> Result<Plan, String> {
    let path = dir.join("plan.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let plan: Plan = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    plan.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(plan)
}

/// Every entry under `root`, sorted.
pub fn entries(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("plan.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_entry_never_overwrites_another_plan_of_its_name() {
        let root = std::env::temp_dir().join(format!("innosim-corpus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let profile = crate::profile::Profile::named("small").expect("a profile");
        let plan = Plan::generate(3, &profile, None, None);
        let outcome = Outcome::default();
        let first = save(&root, &plan, &outcome, "c").expect("saved");
        assert_eq!(first, root.join("small-3"));
        // The same plan again: the same folder.
        assert_eq!(save(&root, &plan, &outcome, "c").expect("saved"), first);
        // Another plan of the same name: a folder of its own.
        let mut other = plan.clone();
        other.transactions.pop();
        let second = save(&root, &other, &outcome, "c").expect("saved");
        assert_eq!(second, root.join("small-3-2"));
        assert_eq!(load(&first).expect("loads"), plan);
        assert_eq!(load(&second).expect("loads"), other);
        std::fs::remove_dir_all(&root).expect("cleaned up");
    }
}
