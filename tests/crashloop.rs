//! `innosim crashloop` end to end: the real `innosim` binary served as a
//! child process, killed with SIGKILL on real files and losing power on
//! command on the simulated disk, under every flush setting, each
//! acknowledged commit checked by the client (see `sim::crashloop`).

use sim::crashloop::{run, Options, Target};

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn options(target: Target, flush: u8) -> Options {
    Options {
        exe: env!("CARGO_BIN_EXE_innosim").into(),
        target,
        cycles: 6,
        commits: 40,
        flush,
        port: free_port(),
        seed: 11,
        check_every: 2,
        server_log: None,
    }
}

#[test]
fn every_acknowledged_commit_survives_kill_and_power_loss_as_its_flush_setting_promises() {
    for flush in [1, 2, 0] {
        let dir = tempfile::tempdir().unwrap();
        for target in [Target::Dir(dir.path().join("data")), Target::Sim] {
            let o = options(target, flush);
            let r = run(&o, |_, _| {}).unwrap();
            assert!(
                r.violations.is_empty(),
                "{:?}: {:?}",
                o.target,
                r.violations
            );
            assert_eq!(r.cycles.len(), 6);
            let acked: u64 = r.cycles.iter().map(|c| c.acked).sum();
            assert!(acked >= 6, "{:?} flush {flush}: {acked} commits", o.target);
            if flush == 1 {
                assert!(r.cycles.iter().all(|c| c.lost == 0));
            }
            // innosim check after cycles 1, 2, 4 and 6; CHECK TABLE after
            // each recovery on the simulated disk.
            let checks = if matches!(o.target, Target::Sim) {
                6
            } else {
                4
            };
            assert_eq!(r.checks_passed, checks, "{:?}", o.target);
        }
    }
}
