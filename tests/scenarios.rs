//! Every scenario script in `corpus/scenarios/` runs on the simulated disk
//! and clock, and its output must equal the `.result` beside it. On a
//! mismatch the test prints the diff; to accept new output, run
//! `cargo run --release -- script --record corpus/scenarios/NAME.test`
//! (or set `INNOSIM_RECORD=1` for this test to record them all).

use std::path::PathBuf;

fn scripts() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/scenarios exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_scenario_gives_its_recorded_result() {
    let record = std::env::var_os("INNOSIM_RECORD").is_some();
    let all = scripts();
    assert!(!all.is_empty(), "no scenario scripts found");
    let mut failures = Vec::new();
    for path in &all {
        let run = sim::script::run_file(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            run.ending,
            sim::script::Ending::Completed,
            "{} did not run to its end:\n{}",
            path.display(),
            run.output
        );
        let result = path.with_extension("result");
        if record {
            std::fs::write(&result, &run.output).expect("write the result");
            continue;
        }
        let want = std::fs::read_to_string(&result).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (record it with innosim script --record)",
                result.display()
            )
        });
        if want != run.output {
            failures.push(format!(
                "{}:\n{}(accept with: cargo run --release -- script --record {})",
                path.display(),
                sim::script::diff(&want, &run.output),
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "scenario output changed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn an_unexpected_error_stops_a_script_and_says_where() {
    let run = sim::script::run_text("select * from nosuch;\nselect 1;\n", "inline", None).unwrap();
    assert!(run.aborted);
    assert!(
        run.output
            .ends_with("mysqltest: At line 1: query 'select * from nosuch' failed: 1146: Table 'test.nosuch' doesn't exist\n"),
        "{}",
        run.output
    );
    assert!(
        !run.output.contains("select 1;"),
        "nothing runs after the failure"
    );
}

#[test]
fn a_sleep_costs_simulated_time_only() {
    let run = sim::script::run_text("--sleep 3600\nselect 1;\n", "inline", None).unwrap();
    assert!(!run.aborted);
    assert_eq!(run.elapsed_us, 3_600_000_000);
}
