//! The corpus: saved failures, each a folder `corpus/<name>/` holding the
//! shrunk plan as readable JSON (`plan.json`) and what went wrong
//! (`failure.txt`: the violations, the reproduction line, the commit).
//! `cargo test` replays every entry: an entry from a real bug must pass
//! (the bug stays fixed); an entry from a canary must still fail (the
//! checker still catches it).

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

/// Saves a failing plan and its outcome under `root`.
pub fn save(root: &Path, plan: &Plan, outcome: &Outcome, commit: &str) -> std::io::Result<PathBuf> {
    let dir = root.join(entry_name(plan));
    std::fs::create_dir_all(&dir)?;
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
    Ok(dir)
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
