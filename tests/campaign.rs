//! Campaigns across machines: `innosim fuzz --shard I/N` reports added up by
//! `innosim merge`, checked against one unsharded run of the same seeds;
//! the merge's refusals; a campaign through a real Slurm on this host
//! (tests/tools/start-slurm.sh, Slurm and munge installed by
//! tests/tools/setup-clients.sh); and the Kubernetes Indexed Job manifest
//! checked against the Job schema offline.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn innosim() -> &'static str {
    env!("CARGO_BIN_EXE_innosim")
}

/// A fresh scratch directory under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Runs innosim in `dir`; its exit code and standard output.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(innosim())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("innosim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The fields a merge must reproduce exactly from one unsharded run.
fn counts(v: &Value) -> Value {
    serde_json::json!({
        "profile": v["profile"], "range": v["range"], "seeds": v["seeds"],
        "violations": v["violations"], "failing_seeds": v["failing_seeds"],
        "failures": v["failures"], "reached": v["reached"],
        "kinds": v["kinds"].as_array().unwrap().iter().map(|k| k["kind"].clone()).collect::<Vec<_>>(),
    })
}

/// Runs `args` (a campaign) as `n` shards, each with its own corpus, and
/// returns the paths of their reports.
fn shards(dir: &Path, args: &[&str], n: u64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let corpus = format!("corpus-{i}");
            let mut all = vec!["fuzz", "--json", "--shard", &shard, "--corpus", &corpus];
            all.extend_from_slice(args);
            let (code, out, err) = run_in(dir, &all);
            assert!(code == 0 || code == 1, "shard {shard}: {err}");
            let path = format!("shard-{i}.json");
            std::fs::write(dir.join(&path), out).unwrap();
            path
        })
        .collect()
}

#[test]
fn four_shards_merged_equal_one_run_of_the_range() {
    let dir = scratch("merge-clean");
    let args = ["--seeds", "0..120", "--profile", "default"];
    let reports = shards(&dir, &args, 4);
    let mut merge = vec!["merge", "--json"];
    merge.extend(reports.iter().map(String::as_str));
    let (code, out, err) = run_in(&dir, &merge);
    assert_eq!(code, 0, "{err}");
    let merged = json(&out);
    let mut one = vec!["fuzz", "--json"];
    one.extend_from_slice(&args);
    let (code, out, err) = run_in(&dir, &one);
    assert_eq!(code, 0, "{err}");
    let whole = json(&out);
    assert_eq!(counts(&merged), counts(&whole));
    assert_eq!(merged["shards"], 4);
    assert_eq!(merged["seeds"], 120);
    // The counters are real: the default profile crashes and recovers.
    assert!(
        merged["reached"]["crashes"].as_u64().unwrap() > 0,
        "{merged}"
    );
}

/// Without `--jobs` a campaign runs one worker per core this process may
/// use (innosim inherits the test's CPU affinity and cgroup quota, and
/// heeds an affinity narrowed to one of its cores); `--jobs N` runs N; a merge adds
/// its shards' workers up.
#[test]
fn a_campaign_runs_a_worker_per_core_unless_told_otherwise() {
    let dir = scratch("jobs");
    // innosim runs at most 256.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(256));
    let small = ["--json", "--seeds", "0..4", "--profile", "small"];
    let (code, out, err) = run_in(&dir, &[&["fuzz"][..], &small].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["jobs"], cores, "{out}");
    // One core of the test's own (a container may not hold core 0).
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux");
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list");
    let core: String = allowed
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let pinned = Command::new("taskset")
        .args(["-c", &core, innosim(), "fuzz"])
        .args(small)
        .current_dir(&dir)
        .output()
        .expect("taskset (util-linux) runs innosim");
    assert!(pinned.status.success(), "{pinned:?}");
    assert_eq!(json(&String::from_utf8_lossy(&pinned.stdout))["jobs"], 1);
    let reports = shards(
        &dir,
        &["--seeds", "0..4", "--profile", "small", "--jobs", "3"],
        2,
    );
    let (code, out, err) = run_in(&dir, &["merge", &reports[0], &reports[1]]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("4 seeds of profile small in 2 shards on 6 workers"),
        "{out}"
    );
}

#[test]
fn merged_failures_and_the_smallest_entry_of_each_kind_are_gathered() {
    // A canary makes seeds fail: the merge lists the same failing seeds as
    // one run, with their replay lines, and copies one entry per kind, the
    // smallest any shard saved, into its own corpus.
    let dir = scratch("merge-failing");
    let args = [
        "--seeds",
        "0..40",
        "--profile",
        "small",
        "--canary",
        "ack-before-sync",
    ];
    let reports = shards(&dir, &args, 2);
    let mut merge = vec!["merge", "--json", "--corpus", "gathered"];
    merge.extend(reports.iter().map(String::as_str));
    let (code, out, err) = run_in(&dir, &merge);
    assert_eq!(code, 1, "a merge with failures fails: {err}");
    let merged = json(&out);
    let mut one = vec!["fuzz", "--json", "--corpus", "corpus-one"];
    one.extend_from_slice(&args);
    let (code, out, _) = run_in(&dir, &one);
    assert_eq!(code, 1);
    let whole = json(&out);
    assert_eq!(counts(&merged), counts(&whole));
    let failing = merged["failing_seeds"].as_array().unwrap();
    assert!(failing.len() >= 2, "{merged}");
    for f in merged["failures"].as_array().unwrap() {
        assert_eq!(
            f["replay"],
            format!(
                "innosim replay {} --profile small --canary ack-before-sync",
                f["seed"]
            )
        );
    }
    // The smallest saved reproduction of each kind across the shards.
    let shard_kinds: Vec<Value> = reports
        .iter()
        .flat_map(|r| {
            json(&std::fs::read_to_string(dir.join(r)).unwrap())["kinds"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect();
    for k in merged["kinds"].as_array().unwrap() {
        let smallest = shard_kinds
            .iter()
            .filter(|s| s["kind"] == k["kind"])
            .filter_map(|s| s["statements"].as_u64())
            .min()
            .expect("a shard saved this kind");
        assert_eq!(k["statements"], smallest, "{k}");
        let saved = PathBuf::from(k["saved"].as_str().unwrap());
        assert!(saved.starts_with(dir.join("gathered")), "{saved:?}");
        assert!(saved.join("plan.json").is_file(), "{saved:?}");
        let (code, out, err) = run_in(&dir, &["replay", saved.to_str().unwrap()]);
        assert_eq!(code, 1, "the gathered entry still fails: {out}{err}");
    }
}

#[test]
fn a_merge_refuses_reports_that_are_not_one_campaigns_shards() {
    let dir = scratch("merge-refusals");
    let base = ["--seeds", "0..12", "--profile", "small"];
    let three = shards(&dir, &base, 3);
    let refused = |reports: &[&str], why: &str| {
        let mut args = vec!["merge"];
        args.extend_from_slice(reports);
        let (code, out, err) = run_in(&dir, &args);
        assert_eq!(code, 2, "{reports:?} merged: {out}");
        assert!(err.contains(why), "{reports:?}: {err}");
    };
    refused(&[&three[0], &three[1]], "shard 2/3 missing");
    refused(
        &[&three[0], &three[1], &three[1]],
        "shard 1/3 appears twice",
    );
    // Another range, another profile, a campaign bounded in time.
    std::fs::rename(dir.join(&three[2]), dir.join("kept.json")).unwrap();
    let (_, out, _) = run_in(
        &dir,
        &[
            "fuzz",
            "--json",
            "--seeds",
            "0..13",
            "--profile",
            "small",
            "--shard",
            "2/3",
        ],
    );
    std::fs::write(dir.join("other-range.json"), out).unwrap();
    refused(
        &[&three[0], &three[1], "other-range.json"],
        "the seed range is 0..13",
    );
    let (_, out, _) = run_in(
        &dir,
        &[
            "fuzz",
            "--json",
            "--seeds",
            "0..12",
            "--profile",
            "default",
            "--shard",
            "2/3",
        ],
    );
    std::fs::write(dir.join("other-profile.json"), out).unwrap();
    refused(
        &[&three[0], &three[1], "other-profile.json"],
        "the profile is default",
    );
    let (_, out, _) = run_in(
        &dir,
        &["fuzz", "--json", "--time", "1s", "--profile", "small"],
    );
    std::fs::write(dir.join("timed.json"), out).unwrap();
    refused(&["timed.json"], "ran for a time, not a seed range");
    // A shard cut short, and a file that is no report.
    let mut short = json(&std::fs::read_to_string(dir.join("kept.json")).unwrap());
    short["seeds"] = serde_json::json!(3);
    std::fs::write(dir.join("short.json"), short.to_string()).unwrap();
    refused(
        &[&three[0], &three[1], "short.json"],
        "shard 2/3 ran 3 seeds, but its part of the range has 4",
    );
    let mut past = json(&std::fs::read_to_string(dir.join("kept.json")).unwrap());
    past["shard"]["index"] = serde_json::json!(7);
    std::fs::write(dir.join("past.json"), past.to_string()).unwrap();
    refused(
        &[&three[0], &three[1], "past.json"],
        "is shard 7/3, past the last",
    );
    let mut contradicts = json(&std::fs::read_to_string(dir.join("kept.json")).unwrap());
    contradicts["failing_seeds"] = serde_json::json!([5]);
    std::fs::write(dir.join("contradicts.json"), contradicts.to_string()).unwrap();
    refused(
        &[&three[0], &three[1], "contradicts.json"],
        "contradicts itself",
    );
    std::fs::write(dir.join("junk.json"), "{\"seeds\": 1}").unwrap();
    refused(&["junk.json"], "is not a report of `innosim fuzz --json`");
    // The three as they were merge.
    let (code, out, err) = run_in(&dir, &["merge", &three[0], &three[1], "kept.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("12 seeds of profile small in 3 shards"),
        "{out}"
    );
}

/// Kills the test's Slurm daemons however the test ends.
struct Daemons(PathBuf);

impl Drop for Daemons {
    fn drop(&mut self) {
        for pid in ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"] {
            if let Ok(pid) = std::fs::read_to_string(self.0.join(pid)) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
    }
}

#[test]
fn a_campaign_runs_as_a_slurm_job_array_with_the_merge_as_a_dependent_job() {
    // A real Slurm (slurmctld, slurmd and munged on this host, ports of
    // their own): the README's two sbatch scripts, an array of four shards
    // and the merge after them, whose counts equal one unsharded run's.
    let dir = scratch("slurm");
    let cluster = dir.join("cluster");
    let started = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/tools/start-slurm.sh"
        ))
        .arg(&cluster)
        .arg("16917")
        .status()
        .expect("bash runs");
    let _daemons = Daemons(cluster.clone());
    assert!(
        started.success(),
        "Slurm did not start (logs in {cluster:?}/log)"
    );
    let conf = cluster.join("slurm.conf");
    let out = dir.join("campaign");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/campaign");
    let sbatch = |args: &[&str]| -> String {
        let o = Command::new("sbatch")
            .args(args)
            .current_dir(&dir)
            .env("SLURM_CONF", &conf)
            .env("SEEDS", "0..120")
            .env("PROFILE", "default")
            .env("OUT", &out)
            .env("INNOSIM", innosim())
            .output()
            .expect("sbatch runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let fuzz = scripts.join("slurm-fuzz.sbatch");
    let array = sbatch(&["--parsable", "--array=0-3", fuzz.to_str().unwrap()]);
    let merge = scripts.join("slurm-merge.sbatch");
    let dependency = format!("--dependency=afterany:{array}");
    sbatch(&["--parsable", &dependency, merge.to_str().unwrap()]);
    let merged = out.join("merged.json");
    let deadline = Instant::now() + Duration::from_secs(600);
    while !merged.exists() {
        assert!(
            Instant::now() < deadline,
            "no merge after 600 s; the jobs' logs are in {dir:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let merged = json(&std::fs::read_to_string(&merged).unwrap());
    let (code, one, err) = run_in(
        &dir,
        &[
            "fuzz",
            "--json",
            "--seeds",
            "0..120",
            "--profile",
            "default",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&merged), counts(&json(&one)));
    assert_eq!(merged["shards"], 4);
    for i in 0..4 {
        let shard = json(&std::fs::read_to_string(out.join(format!("shard-{i}.json"))).unwrap());
        assert_eq!(shard["shard"], serde_json::json!({"index": i, "count": 4}));
        assert_eq!(shard["seeds"], 30);
    }
}

#[test]
fn the_kubernetes_indexed_job_validates_against_the_job_schema() {
    // kubernetes-validate from PyPI carries the schemas, so no cluster and
    // no network are needed once it is installed; a broken copy of the
    // manifest must fail, so the check is not vacuous.
    let validator = || {
        let mut c = Command::new("python3");
        c.args(["-m", "kubernetes_validate"]);
        c
    };
    let have = validator().arg("--version").output();
    if !have.is_ok_and(|o| o.status.success()) {
        let pip = Command::new("python3")
            .args(["-m", "pip", "install", "-q", "kubernetes-validate==1.37.0"])
            .status()
            .expect("python3 runs");
        assert!(pip.success(), "pip could not install kubernetes-validate");
    }
    let manifest = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/campaign/kubernetes-job.yaml"
    );
    let validate = |path: &str| {
        validator()
            .args(["--strict", path])
            .output()
            .expect("kubernetes-validate runs")
    };
    let good = validate(manifest);
    assert!(
        good.status.success(),
        "{}{}",
        String::from_utf8_lossy(&good.stdout),
        String::from_utf8_lossy(&good.stderr)
    );
    let text = std::fs::read_to_string(manifest).unwrap();
    assert!(text.contains("completionMode: Indexed"));
    assert!(text.contains("--shard \"$JOB_COMPLETION_INDEX/4\""));
    let dir = scratch("kubernetes");
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, text.replace("completionMode:", "completionMod:")).unwrap();
    assert!(!validate(broken.to_str().unwrap()).status.success());
}
