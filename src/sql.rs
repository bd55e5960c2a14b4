//! SQL on a directory: `innosim sql`, `innosim test` (scripts and suites) and
//! `innosim check`.

use super::*;

/// `innosim script --suite DIR`: one line a test, then the totals.
pub(crate) fn run_suite(
    dir: &std::path::Path,
    only: &[std::path::PathBuf],
    enable_disabled: bool,
) -> ExitCode {
    use sim::script::suite;
    let dir = suite::suite_dir(dir);
    let only: Vec<String> = only
        .iter()
        .map(|p| {
            p.file_stem().map_or(p.display().to_string(), |s| {
                s.to_string_lossy().into_owned()
            })
        })
        .collect();
    let report = match suite::run_suite(&dir, &only, enable_disabled, |t| {
        println!("{}", suite::line(t))
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: cannot read the suite {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    let (pass, fail, skip, off) = report.counts();
    let (m, n) = report.statements();
    println!(
        "{} tests: {pass} passed, {fail} failed, {skip} skipped, {off} disabled; \
         {m} of {n} statements ({:.1} %) gave the recorded output",
        report.tests.len(),
        if n == 0 {
            100.0
        } else {
            100.0 * m as f64 / n as f64
        }
    );
    if fail == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `innosim script`: runs each script, compares or records its result.
pub(crate) fn run_scripts(files: &[std::path::PathBuf], record: bool) -> ExitCode {
    let mut failed = 0;
    for f in files {
        let result = f.with_extension("result");
        let run = match sim::script::run_file(f) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("innosim: {e}");
                failed += 1;
                continue;
            }
        };
        if let sim::script::Ending::Skipped(why) = &run.ending {
            println!("{}: skipped: {why}", f.display());
            continue;
        }
        if record {
            if let Err(e) = std::fs::write(&result, &run.output) {
                eprintln!("innosim: cannot write {}: {e}", result.display());
                failed += 1;
                continue;
            }
            println!(
                "{}: recorded ({} simulated s)",
                f.display(),
                run.elapsed_us / 1_000_000
            );
            continue;
        }
        match std::fs::read_to_string(&result) {
            Ok(want) if want == run.output => println!("{}: ok", f.display()),
            Ok(want) => {
                failed += 1;
                println!("{}: MISMATCH against {}", f.display(), result.display());
                print!("{}", sim::script::diff(&want, &run.output));
                println!(
                    "(accept the new output with: innosim script --record {})",
                    f.display()
                );
            }
            Err(e) => {
                failed += 1;
                println!(
                    "{}: no result file {} ({e}); record one with --record",
                    f.display(),
                    result.display()
                );
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print_reply(reply: &engine::sql::Reply, vertical: bool) {
    use engine::sql::{format, Reply};
    if let Reply::Rows { columns, rows, .. } = reply {
        if !rows.is_empty() || !vertical {
            if vertical {
                print!("{}", format::vertical(columns, rows));
            } else if !rows.is_empty() {
                print!("{}", format::boxed(columns, rows));
            }
        }
    }
    println!("{}\n", format::summary(reply));
}

pub(crate) fn check_dir(dir: &std::path::Path) -> ExitCode {
    if !dir.join(engine::fil::SYSTEM_FILE).is_file() {
        eprintln!(
            "innosim: {} holds no database ({} is missing)",
            dir.display(),
            engine::fil::SYSTEM_FILE
        );
        return ExitCode::from(2);
    }
    let storage = match engine::io::OsStorage::new(dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("innosim: cannot open {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    let (mut e, report) = match engine::Engine::open(
        Box::new(storage),
        Box::new(engine::io::OsClock::new()),
        sim::script::script_config(),
    ) {
        Ok(x) => x,
        Err(err) => {
            println!("recovery failed: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "recovery: from checkpoint {} to LSN {} ({}), {} mini-transactions scanned, {} records applied, \
         {} pages repaired from the doublewrite buffer, {} transactions rolled back",
        report.checkpoint_lsn,
        report.end_lsn,
        if report.log_end.is_empty() { "clean end" } else { &report.log_end },
        report.mtrs_scanned,
        report.records_applied,
        report.pages_repaired.len(),
        report.rolled_back.len()
    );
    let mut damaged = false;
    for name in e.table_names() {
        let Some((db, t)) = engine::sql::split_name(&name) else {
            continue;
        };
        if t.is_empty() {
            continue;
        }
        match e.check_table(&name) {
            Ok(r) if r.is_ok() => println!("{db}.{t}: OK"),
            Ok(r) => {
                damaged = true;
                for p in &r.problems {
                    println!("{db}.{t}: {p}");
                }
            }
            Err(err) => {
                damaged = true;
                println!("{db}.{t}: {err}");
            }
        }
    }
    match e.verify_files() {
        Ok(f) => {
            println!(
                "files: {} pages read back ({} never written, {} compressed pages decompressed; \
                 {} doublewrite slots skipped), {} problems",
                f.pages,
                f.zero_pages,
                f.compressed,
                f.doublewrite_slots,
                f.problems.len()
            );
            for p in &f.problems {
                println!("{p}");
            }
            damaged |= !f.problems.is_empty();
        }
        Err(err) => {
            damaged = true;
            println!("files: {err}");
        }
    }
    if let Err(err) = e.close() {
        println!("closing: {err}");
        damaged = true;
    }
    if damaged {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

pub(crate) fn sql_shell(execute: Option<String>, dir: Option<std::path::PathBuf>) -> ExitCode {
    use engine::sql::{Outcome, Reply, Server};
    let config = sim::script::script_config();
    // On the simulated disk the shell keeps the clock, to run it forward
    // to a blocked statement's lock wait deadline.
    let mut sim_clock = None;
    let opened = match &dir {
        Some(d) => {
            if let Err(e) = std::fs::create_dir_all(d) {
                eprintln!("innosim: cannot create {}: {e}", d.display());
                return ExitCode::FAILURE;
            }
            match engine::io::OsStorage::new(d) {
                Ok(st) => Server::open(Box::new(st), Box::new(engine::io::OsClock::new()), config),
                Err(e) => {
                    eprintln!("innosim: cannot open {}: {e}", d.display());
                    return ExitCode::FAILURE;
                }
            }
        }
        None => {
            let st = sim::storage::SimStorage::new();
            let clock = sim::clock::SimClock::new();
            st.set_clock(clock.clone());
            sim_clock = Some(clock.clone());
            Server::open(Box::new(st), Box::new(clock), config)
        }
    };
    let (mut server, _) = match opened {
        Ok(x) => x,
        Err(e) => {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let conn = server.connect();
    let run = |server: &mut Server, sql: &str, vertical: bool| -> bool {
        let reply = match server.execute(conn, sql) {
            Outcome::Done(r) => r,
            Outcome::Blocked => {
                // One connection: nothing else can release the lock, so the
                // wait ends by its timeout. On the simulated disk the clock
                // runs to it; on real files the shell waits in wall time, as
                // a mysql client would.
                loop {
                    use engine::io::Clock;
                    match (&sim_clock, server.wait_deadline_us(conn)) {
                        (Some(c), Some(d)) if d > c.now_us() => c.set_us(d),
                        (Some(c), _) => c.advance_us(1_000_000),
                        (None, _) => std::thread::sleep(std::time::Duration::from_millis(50)),
                    }
                    let _ = server.tick();
                    if let Outcome::Done(r) = server.resume(conn) {
                        break r;
                    }
                }
            }
        };
        print_reply(&reply, vertical);
        !matches!(reply, Reply::Error(_))
    };
    if let Some(text) = execute {
        let mut ok = true;
        for (sql, vertical) in engine::sql::split::split_statements(&text) {
            ok &= run(&mut server, &sql, vertical);
        }
        let closed = server.close();
        if let Err(e) = closed {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let mut rl = match rustyline::DefaultEditor::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: no line editor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let history = dir.as_ref().map(|d| d.join(".innosim_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!(
        "innosim SQL shell ({}). End statements with ; or \\G; quit with exit or Ctrl-D.",
        match &dir {
            Some(d) => format!("directory {}", d.display()),
            None => "simulated disk in memory; nothing is kept".into(),
        }
    );
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() { "mysql> " } else { "    -> " };
        let line = match rl.readline(prompt) {
            Ok(l) => l,
            Err(_) => break,
        };
        if buf.is_empty()
            && matches!(
                line.trim().to_ascii_lowercase().as_str(),
                "exit" | "quit" | "\\q"
            )
        {
            break;
        }
        buf.push_str(&line);
        buf.push('\n');
        let t = buf.trim_end();
        if t.ends_with(';') || t.ends_with("\\G") {
            let _ = rl.add_history_entry(buf.trim());
            for (sql, vertical) in engine::sql::split::split_statements(&buf) {
                run(&mut server, &sql, vertical);
            }
            buf.clear();
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    match server.close() {
        Ok(()) => {
            println!("Bye");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("innosim: {e}");
            ExitCode::FAILURE
        }
    }
}
