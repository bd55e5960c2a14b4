//! A run's trace as a timeline in Chrome's trace-event format (the JSON
//! object with a `traceEvents` array that Perfetto and chrome://tracing
//! open): `innosim run/replay --trace FILE.json`.
//!
//! One process; track 0 is the engine (crashes, each recovery step), and
//! each session has its own track. Every statement is an instant on its
//! session's track, named by the statement, with its result; under
//! time-driven scheduling each turn of a session is also a slice from the
//! time it began to the time its I/O and processor time ended (the
//! runner's `step end` events). A statement that waits opens an async
//! slice ("lock wait" or "commit wait") that the session's next statement
//! closes; a lock wait has a flow arrow from each session whose
//! transaction blocks it (the runner's `blocked` events, from the engine's
//! wait graph). Each finished recovery's phases are slices on the engine's
//! track. Timestamps are simulated microseconds.
//!
//! Under time-driven scheduling the device and the engine's background
//! have tracks too: each sync the device ran is an async slice on the
//! disk's track (syncs queue on the device one at a time; a turn's are
//! drawn after its processor time), with a flow arrow from each session
//! whose turn issued it (a commit's sync, or a group's); each round of
//! the background (the once-a-second log flush, the page cleaner, purge)
//! is a slice on the background track, as long as its I/O took, with
//! what it flushed, synced and purged; each checkpoint is an instant on
//! the engine's track; and the engine's dirty pages and log age (bytes of
//! redo since the last checkpoint) are counters, sampled at every turn's
//! end and every round's. A step-driven run has no time for these, and
//! draws none of them.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The track of the engine's own events.
const ENGINE_TID: u64 = 0;

/// The track of the device's syncs (above any session's: at most
/// `profile::MAX_SESSIONS`).
const DISK_TID: u64 = 100_000;

/// The track of the engine's background rounds.
const BACKGROUND_TID: u64 = 100_001;

/// The trace-event object of a run's trace lines (as `Outcome::trace` keeps
/// them). A line that is not a JSON object is an error.
pub fn chrome_trace(lines: &[String]) -> Result<Value, String> {
    let mut events: Vec<Value> = Vec::new();
    let mut sessions: BTreeMap<u64, SessionTrack> = BTreeMap::new();
    let mut next_wait_id = 1u64;
    let mut next_flow_id = 1u64;
    // The background's last slice (its index in `events`), the counters
    // last drawn, and the engine's checkpoints counted so far.
    let mut last_round: Option<usize> = None;
    let mut last_counters: (Option<u64>, Option<u64>) = (None, None);
    let mut checkpoints_seen = (0u64, 0u64);
    let mut device_used = false;
    for (n, line) in lines.iter().enumerate() {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("trace line {}: {e}", n + 1))?;
        let kind = v["kind"].as_str().unwrap_or("");
        let ts = v["t_us"].as_u64().unwrap_or(0);
        match kind {
            "statement" => {
                let session = v["session"].as_u64().unwrap_or(0);
                let tid = session + 1;
                let track = sessions.entry(tid).or_default();
                let op = v["op"].as_str().unwrap_or("?").to_string();
                let result = v["result"].as_str().unwrap_or("").to_string();
                if let Some((id, began)) = track.waiting.take() {
                    events.push(json!({
                        "ph": "e", "cat": "wait", "name": began, "id": id,
                        "pid": 1, "tid": tid, "ts": ts,
                    }));
                }
                let mut args = json!({ "result": result, "io": v["io"] });
                if let Some(code) = v["code"].as_u64() {
                    args["code"] = json!(code);
                }
                events.push(json!({
                    "ph": "i", "s": "t", "name": op, "cat": "statement",
                    "pid": 1, "tid": tid, "ts": ts, "args": args,
                }));
                if result == "waiting" {
                    let name = if op == "commit" || op.starts_with("commit") {
                        "commit wait"
                    } else {
                        "lock wait"
                    };
                    let id = next_wait_id;
                    next_wait_id += 1;
                    events.push(json!({
                        "ph": "b", "cat": "wait", "name": name, "id": id,
                        "pid": 1, "tid": tid, "ts": ts, "args": { "statement": op },
                    }));
                    track.waiting = Some((id, name.to_string()));
                }
                track.turn.push(op);
            }
            "step end" => {
                let session = v["session"].as_u64().unwrap_or(0);
                let tid = session + 1;
                let end = v["end_us"].as_u64().unwrap_or(ts);
                let track = sessions.entry(tid).or_default();
                let ops = std::mem::take(&mut track.turn);
                let name = match ops.as_slice() {
                    [] => "step".to_string(),
                    [one] => one.clone(),
                    [first, ..] => format!("{first} (+{} more)", ops.len() - 1),
                };
                events.push(json!({
                    "ph": "X", "cat": "turn", "name": name,
                    "pid": 1, "tid": tid, "ts": ts, "dur": end.saturating_sub(ts),
                    "args": { "statements": ops },
                }));
            }
            "blocked" => {
                // An arrow from each blocker's track to the waiter's.
                let session = v["session"].as_u64().unwrap_or(0);
                for by in v["by"].as_array().into_iter().flatten() {
                    let Some(by) = by.as_u64() else { continue };
                    let arrow = ("blocked", "blocks", by + 1, session + 1);
                    flow(&mut events, &mut next_flow_id, arrow, ts);
                }
            }
            "recovery phase" => {
                // A phase of a recovery that finished, as long as its I/O
                // took on the clock.
                let start = v["start_us"].as_u64().unwrap_or(ts);
                let end = v["end_us"].as_u64().unwrap_or(start);
                events.push(json!({
                    "ph": "X", "cat": "recovery",
                    "name": v["phase"].as_str().unwrap_or("recovery"),
                    "pid": 1, "tid": ENGINE_TID, "ts": start, "dur": end.saturating_sub(start),
                }));
            }
            "sync" => {
                // A sync on the device, as an async slice (a turn's are
                // drawn after its processor time, so two may overlap by
                // that much), with an arrow from each session that issued
                // it.
                let start = v["start_us"].as_u64().unwrap_or(ts);
                let end = v["end_us"].as_u64().unwrap_or(start).max(start);
                let file = v["file"].as_str().unwrap_or("");
                let id = next_wait_id;
                next_wait_id += 1;
                let by: Vec<u64> = v["sessions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64)
                    .collect();
                let file = if file.is_empty() {
                    "(a directory)"
                } else {
                    file
                };
                let name = match v["source"].as_str() {
                    Some("background") => format!("sync {file} (background)"),
                    Some("crashed turn") => format!("sync {file} (before the crash)"),
                    _ => format!("sync {file}"),
                };
                events.push(json!({
                    "ph": "b", "cat": "sync", "name": name, "id": id,
                    "pid": 1, "tid": DISK_TID, "ts": start,
                    "args": { "file": file, "sessions": by },
                }));
                events.push(json!({
                    "ph": "e", "cat": "sync", "name": name, "id": id,
                    "pid": 1, "tid": DISK_TID, "ts": end,
                }));
                for session in by {
                    let arrow = ("sync", "syncs", session + 1, DISK_TID);
                    flow(&mut events, &mut next_flow_id, arrow, start);
                }
                device_used = true;
            }
            "background" => {
                // A round of the background, until its I/O ended (or the
                // next round began: a round longer than the period is
                // drawn to the next one, its end in its args).
                let end = v["end_us"].as_u64().unwrap_or(ts).max(ts);
                if let Some(i) = last_round {
                    let start = events[i]["ts"].as_u64().unwrap_or(0);
                    let dur = events[i]["dur"].as_u64().unwrap_or(0);
                    if start + dur > ts {
                        events[i]["dur"] = json!(ts.saturating_sub(start));
                    }
                }
                last_round = Some(events.len());
                let mut args = v.clone();
                for key in ["io", "kind", "t_us"] {
                    args.as_object_mut().map(|o| o.remove(key));
                }
                events.push(json!({
                    "ph": "X", "cat": "background", "name": "background round",
                    "pid": 1, "tid": BACKGROUND_TID, "ts": ts, "dur": end - ts,
                    "args": args,
                }));
            }
            "counters" => {
                let at = v["at_us"].as_u64().unwrap_or(ts);
                let dirty = v["dirty_pages"].as_u64();
                let age = v["log_age"].as_u64();
                if dirty != last_counters.0 {
                    events.push(json!({
                        "ph": "C", "name": "dirty pages", "pid": 1, "tid": ENGINE_TID,
                        "ts": at, "args": { "pages": dirty.unwrap_or(0) },
                    }));
                }
                if age != last_counters.1 {
                    events.push(json!({
                        "ph": "C", "name": "log age", "pid": 1, "tid": ENGINE_TID,
                        "ts": at, "args": { "bytes": age.unwrap_or(0) },
                    }));
                }
                last_counters = (dirty, age);
                // The engine's count starts again with each open (each
                // restart of the disk: its epoch).
                let n = v["checkpoints"].as_u64().unwrap_or(0);
                let epoch = v["epoch"].as_u64().unwrap_or(0);
                let (seen_epoch, seen) = checkpoints_seen;
                let new = if epoch == seen_epoch {
                    n.saturating_sub(seen)
                } else {
                    n
                };
                if new > 0 {
                    events.push(json!({
                        "ph": "i", "s": "t", "name": "checkpoint", "cat": "checkpoint",
                        "pid": 1, "tid": ENGINE_TID, "ts": at,
                        "args": { "checkpoints": new, "log_age_after": age },
                    }));
                }
                checkpoints_seen = (epoch, n);
            }
            "run" => {
                events.push(json!({
                    "ph": "i", "s": "g", "name": "run", "cat": "run",
                    "pid": 1, "tid": ENGINE_TID, "ts": ts, "args": v,
                }));
            }
            other => {
                // A crash, a recovery step, DDL: an instant on the engine's
                // track, with the line's fields.
                let name = match v["step"].as_str() {
                    Some(step) => format!("{other}: {step}"),
                    None => other.to_string(),
                };
                let scope = if other == "crash" { "g" } else { "t" };
                events.push(json!({
                    "ph": "i", "s": scope, "name": name, "cat": other,
                    "pid": 1, "tid": ENGINE_TID, "ts": ts, "args": v,
                }));
            }
        }
    }
    // A wait the run left open ends with the trace.
    let last = events
        .iter()
        .filter_map(|e| e["ts"].as_u64())
        .max()
        .unwrap_or(0);
    for (tid, track) in &mut sessions {
        if let Some((id, name)) = track.waiting.take() {
            events.push(json!({
                "ph": "e", "cat": "wait", "name": name, "id": id,
                "pid": 1, "tid": tid, "ts": last,
            }));
        }
    }
    let mut meta = vec![
        json!({"ph": "M", "name": "process_name", "pid": 1, "tid": ENGINE_TID, "ts": 0,
               "args": {"name": "innosim"}}),
        json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": ENGINE_TID, "ts": 0,
               "args": {"name": "engine"}}),
    ];
    if device_used {
        meta.push(
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": DISK_TID,
                         "ts": 0, "args": {"name": "disk (syncs)"}}),
        );
    }
    if last_round.is_some() {
        meta.push(
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": BACKGROUND_TID,
                         "ts": 0, "args": {"name": "background"}}),
        );
    }
    for tid in sessions.keys() {
        meta.push(
            json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "ts": 0,
                         "args": {"name": format!("session {}", tid - 1)}}),
        );
    }
    meta.extend(events);
    Ok(json!({ "traceEvents": meta, "displayTimeUnit": "ms" }))
}

/// An arrow (a flow's start and finish, bound to the enclosing slice at
/// its end) of category `cat` named `name` from track `from` to track
/// `to` at `ts`, under the next flow id.
fn flow(events: &mut Vec<Value>, next_id: &mut u64, arrow: (&str, &str, u64, u64), ts: u64) {
    let (cat, name, from, to) = arrow;
    let id = *next_id;
    *next_id += 1;
    events.push(json!({
        "ph": "s", "cat": cat, "name": name, "id": id,
        "pid": 1, "tid": from, "ts": ts,
    }));
    events.push(json!({
        "ph": "f", "bp": "e", "cat": cat, "name": name, "id": id,
        "pid": 1, "tid": to, "ts": ts,
    }));
}

/// A session's track while the trace is read.
#[derive(Default)]
struct SessionTrack {
    /// The open wait: its async id and name.
    waiting: Option<(u64, String)>,
    /// The statements of the turn under way.
    turn: Vec<String>,
}

/// Checks a trace-event object against the format's rules this module
/// keeps: every event has `ph`, `ts`, `pid` and `tid`; the complete slices
/// (`X`) of a track nest (each one inside or after the one before it);
/// every async begin (`b`) has one end (`e`) with its id, not before it;
/// and every flow start (`s`) one finish (`f`) with its id, not before it.
pub fn check_chrome_trace(v: &Value) -> Result<(), String> {
    let events = v["traceEvents"].as_array().ok_or("no traceEvents array")?;
    let mut slices: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    let mut open: BTreeMap<u64, u64> = BTreeMap::new();
    let mut flows: BTreeMap<u64, u64> = BTreeMap::new();
    let mut ended = 0usize;
    for (n, e) in events.iter().enumerate() {
        for key in ["ph", "ts", "pid", "tid"] {
            if e.get(key).is_none() {
                return Err(format!("event {n} has no {key}: {e}"));
            }
        }
        let ts = e["ts"]
            .as_u64()
            .ok_or(format!("event {n}: ts is not a number"))?;
        let tid = e["tid"]
            .as_u64()
            .ok_or(format!("event {n}: tid is not a number"))?;
        match e["ph"].as_str() {
            Some("X") => {
                let dur = e["dur"]
                    .as_u64()
                    .ok_or(format!("event {n}: X without dur"))?;
                slices.entry(tid).or_default().push((ts, ts + dur));
            }
            Some("b") => {
                let id = e["id"].as_u64().ok_or(format!("event {n}: b without id"))?;
                if open.insert(id, ts).is_some() {
                    return Err(format!("event {n}: async id {id} begun twice"));
                }
            }
            Some("e") => {
                let id = e["id"].as_u64().ok_or(format!("event {n}: e without id"))?;
                let began = open
                    .remove(&id)
                    .ok_or(format!("event {n}: async id {id} ends without a begin"))?;
                if ts < began {
                    return Err(format!("event {n}: async id {id} ends before it begins"));
                }
                ended += 1;
            }
            Some("s") => {
                let id = e["id"].as_u64().ok_or(format!("event {n}: s without id"))?;
                if flows.insert(id, ts).is_some() {
                    return Err(format!("event {n}: flow {id} starts twice"));
                }
            }
            Some("f") => {
                let id = e["id"].as_u64().ok_or(format!("event {n}: f without id"))?;
                let began = flows
                    .remove(&id)
                    .ok_or(format!("event {n}: flow {id} ends without a start"))?;
                if ts < began {
                    return Err(format!("event {n}: flow {id} ends before it starts"));
                }
            }
            Some("i" | "M" | "C") => {}
            other => return Err(format!("event {n}: unknown phase {other:?}")),
        }
    }
    if let Some(id) = open.keys().next() {
        return Err(format!("async id {id} never ends"));
    }
    if let Some(id) = flows.keys().next() {
        return Err(format!("flow {id} never ends"));
    }
    for (tid, list) in &mut slices {
        list.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
        // A stack of enclosing slices: each slice starts inside the top
        // one and ends by its end, or after it.
        let mut stack: Vec<(u64, u64)> = Vec::new();
        for &(start, end) in list.iter() {
            while stack.last().is_some_and(|&(_, e)| e <= start) {
                stack.pop();
            }
            if let Some(&(s, e)) = stack.last() {
                if end > e {
                    return Err(format!(
                        "track {tid}: slice {start}..{end} overlaps {s}..{e} without nesting"
                    ));
                }
            }
            stack.push((start, end));
        }
    }
    let _ = ended;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(events: Vec<Value>) -> Value {
        json!({ "traceEvents": events })
    }

    #[test]
    fn the_checker_refuses_what_the_format_forbids() {
        let x = |tid: u64, ts: u64, dur: u64| json!({"ph": "X", "name": "s", "pid": 1, "tid": tid, "ts": ts, "dur": dur});
        // Nested and consecutive slices, and the same span on two tracks.
        assert!(check_chrome_trace(&trace(vec![
            x(1, 0, 10),
            x(1, 2, 3),
            x(1, 10, 5),
            x(2, 1, 20)
        ]))
        .is_ok());
        // Overlapping without nesting.
        assert!(check_chrome_trace(&trace(vec![x(1, 0, 10), x(1, 5, 10)])).is_err());
        // A missing field.
        assert!(check_chrome_trace(&trace(vec![json!({"ph": "i", "pid": 1, "tid": 0})])).is_err());
        // Async slices pair up by id, end not before begin.
        let b = |id: u64, ts: u64| json!({"ph": "b", "id": id, "pid": 1, "tid": 1, "ts": ts});
        let e = |id: u64, ts: u64| json!({"ph": "e", "id": id, "pid": 1, "tid": 1, "ts": ts});
        assert!(check_chrome_trace(&trace(vec![b(1, 5), e(1, 9)])).is_ok());
        assert!(check_chrome_trace(&trace(vec![b(1, 5)])).is_err());
        assert!(check_chrome_trace(&trace(vec![e(1, 5)])).is_err());
        assert!(check_chrome_trace(&trace(vec![b(1, 5), e(1, 4)])).is_err());
        assert!(check_chrome_trace(&trace(vec![b(1, 5), b(1, 6), e(1, 7)])).is_err());
    }

    #[test]
    fn trace_lines_become_tracks_waits_and_turns() {
        let lines: Vec<String> = [
            r#"{"io":0,"kind":"run","seed":1,"t_us":0}"#,
            r#"{"io":1,"kind":"statement","op":"update sb [1] set k=2","result":"waiting","session":3,"t_us":10}"#,
            r#"{"by":[1],"io":1,"kind":"blocked","session":3,"t_us":10}"#,
            r#"{"end_us":40,"io":1,"kind":"step end","session":3,"t_us":10}"#,
            r#"{"io":2,"kind":"statement","op":"update sb [1] set k=2","result":"affected 1","session":3,"t_us":50}"#,
            r#"{"end_us":55,"io":2,"kind":"step end","session":3,"t_us":50}"#,
            r#"{"io":3,"kind":"crash","mode":"power loss","t_us":60}"#,
            r#"{"io":3,"kind":"recovery phase","phase":"redo scan","start_us":60,"end_us":65,"t_us":70}"#,
            r#"{"io":3,"kind":"recovery phase","phase":"redo apply","start_us":65,"end_us":70,"t_us":70}"#,
            r#"{"io":3,"kind":"recovery","step":"recovered","t_us":70}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let v = chrome_trace(&lines).unwrap();
        check_chrome_trace(&v).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let of = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!(of("X"), 4);
        assert_eq!((of("b"), of("e")), (1, 1));
        let flow = |ph: &str| events.iter().find(|e| e["ph"] == ph).unwrap();
        assert_eq!(
            (flow("s")["tid"].as_u64(), flow("f")["tid"].as_u64()),
            (Some(2), Some(4))
        );
        assert_eq!(flow("s")["id"], flow("f")["id"]);
        let phases: Vec<(&str, u64, u64)> = events
            .iter()
            .filter(|e| e["cat"] == "recovery" && e["ph"] == "X")
            .map(|e| {
                assert_eq!(e["tid"], ENGINE_TID);
                (
                    e["name"].as_str().unwrap(),
                    e["ts"].as_u64().unwrap(),
                    e["dur"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(phases, [("redo scan", 60, 5), ("redo apply", 65, 5)]);
        let wait = events.iter().find(|e| e["ph"] == "e").unwrap();
        assert_eq!(wait["ts"], 50, "the wait ends with the next statement");
        let turn = events.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(
            (turn["ts"].as_u64(), turn["dur"].as_u64()),
            (Some(10), Some(30))
        );
        assert!(events
            .iter()
            .any(|e| e["name"] == "recovery: recovered" && e["tid"] == ENGINE_TID));
        assert!(events.iter().any(|e| e["name"] == "thread_name"
            && e["args"]["name"] == "session 3"
            && e["tid"] == 4));
        assert!(chrome_trace(&["not json".to_string()]).is_err());
    }

    #[test]
    fn syncs_rounds_counters_and_checkpoints_get_their_tracks() {
        let lines: Vec<String> = [
            r#"{"io":1,"kind":"sync","start_us":100,"end_us":900,"file":"ib_logfile0","sessions":[2],"source":"turn","t_us":0}"#,
            r#"{"io":2,"kind":"background","end_us":1500000,"pages_flushed":3,"checkpoints":0,"log_syncs":1,"purged_rows":0,"t_us":1000000}"#,
            r#"{"io":3,"kind":"background","end_us":2000100,"pages_flushed":0,"checkpoints":1,"log_syncs":1,"purged_rows":0,"t_us":1200000}"#,
            r#"{"io":3,"kind":"counters","at_us":1200000,"epoch":0,"dirty_pages":7,"log_age":512,"checkpoints":4,"pages_flushed":3,"t_us":1200000}"#,
            r#"{"io":3,"kind":"counters","at_us":1300000,"epoch":0,"dirty_pages":7,"log_age":0,"checkpoints":5,"pages_flushed":3,"t_us":1300000}"#,
            r#"{"io":3,"kind":"counters","at_us":1400000,"epoch":1,"dirty_pages":0,"log_age":0,"checkpoints":2,"pages_flushed":0,"t_us":1400000}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let v = chrome_trace(&lines).unwrap();
        check_chrome_trace(&v).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let find = |f: &dyn Fn(&Value) -> bool| -> Vec<&Value> {
            events.iter().filter(|e| f(e)).collect()
        };
        // The sync: an async slice on the disk's track, its arrow from
        // session 2's track (tid 3).
        let b = find(&|e| e["ph"] == "b" && e["cat"] == "sync");
        assert_eq!(
            (b.len(), b[0]["tid"].as_u64(), b[0]["ts"].as_u64()),
            (1, Some(DISK_TID), Some(100))
        );
        let e = find(&|e| e["ph"] == "e" && e["cat"] == "sync");
        assert_eq!(e[0]["ts"], 900);
        let s = find(&|e| e["ph"] == "s" && e["cat"] == "sync");
        assert_eq!(s[0]["tid"], 3);
        // The first round is cut where the second begins.
        let rounds = find(&|e| e["cat"] == "background");
        let spans: Vec<(u64, u64)> = rounds
            .iter()
            .map(|r| (r["ts"].as_u64().unwrap(), r["dur"].as_u64().unwrap()))
            .collect();
        assert_eq!(spans, [(1_000_000, 200_000), (1_200_000, 800_100)]);
        assert!(rounds.iter().all(|r| r["tid"] == BACKGROUND_TID));
        // Counters change where the values do; checkpoints count from each
        // open (the epoch): 4, then 1 more, then 2 after the restart.
        let dirty = find(&|e| e["ph"] == "C" && e["name"] == "dirty pages");
        assert_eq!(dirty.len(), 2);
        let age = find(&|e| e["ph"] == "C" && e["name"] == "log age");
        assert_eq!(age.len(), 2);
        let cps: Vec<u64> = find(&|e| e["cat"] == "checkpoint")
            .iter()
            .map(|e| e["args"]["checkpoints"].as_u64().unwrap())
            .collect();
        assert_eq!(cps, [4, 1, 2]);
        for (tid, name) in [(DISK_TID, "disk (syncs)"), (BACKGROUND_TID, "background")] {
            assert!(events
                .iter()
                .any(|e| e["ph"] == "M" && e["tid"] == tid && e["args"]["name"] == name));
        }
    }
}
