//! Why the two sides parted, where the reason is not a bug: the later
//! version's rules the server follows ([`engine::later`]), deadlock victims
//! chosen by weights the server's pages spread over more lock structs
//! (`lock_trx_print_locks`' counts, MariaDB's `Deadlock::report`), and an
//! insert the server let in, or kept waiting, because of where its page
//! ends (`lock_rec_insert_check_and_lock`). Each diagnosis makes the run
//! again on fresh sides to look at both.

use super::*;

/// Each session's transaction's deadlock weight ([`Backend::weights`]).
pub type Weights = BTreeMap<usize, u64>;

/// Both sides' transactions just before a run's last step
/// ([`weights_before_last`]).
#[derive(Debug, Default)]
pub struct Before {
    /// innosim's weights.
    pub ours: Weights,
    /// The server's weights.
    pub theirs: Weights,
    /// innosim's locks, by session ([`Backend::lock_structs`]).
    pub our_structs: BTreeMap<usize, Vec<backend::LockStruct>>,
    /// The server's lock structs, by session.
    pub their_structs: BTreeMap<usize, Vec<backend::LockStruct>>,
    /// innosim's deadlock cycle once the last step ran again
    /// ([`Backend::latest_deadlock`]; empty if it found none).
    pub our_cycle: Vec<backend::CycleTrx>,
    /// The server's.
    pub their_cycle: Vec<backend::CycleTrx>,
}

/// Each session's transaction's deadlock weight on both sides
/// ([`Backend::weights`]) just before a run's last step: the steps before
/// it run again on fresh sides; then the last step runs again too, for
/// the deadlock cycle each side reports ([`Before::our_cycle`]). Where a deadlock's victims differ, equal
/// weights point at the choice between them, different ones at what one
/// side counts (lock structs, undo records).
pub fn weights_before_last(
    scenario: &Scenario,
    out: &Outcome,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Before, String> {
    let mut t = Transcript::of_run(scenario, out);
    t.steps.pop();
    ours.set_sort_buffer(scenario.sort_buffer_bytes);
    ours.start(t.sessions, &t.setup)?;
    theirs.start(t.sessions, &t.setup)?;
    let mut again = Outcome::default();
    run_steps(&t, ours, theirs, &mut again)?;
    let mut w = Before {
        ours: ours.weights()?,
        theirs: theirs.weights()?,
        our_structs: ours.lock_structs()?,
        their_structs: theirs.lock_structs()?,
        our_cycle: Vec::new(),
        their_cycle: Vec::new(),
    };
    // The last step again, for the cycle each side then reports: what
    // its transactions weighed when the deadlock was found.
    if let (Some(last), Some(step)) = (out.steps.len().checked_sub(1), out.steps.last()) {
        let waiting = match last.checked_sub(1) {
            Some(k) => out.steps[k].ours.blocked.clone(),
            None => BTreeSet::new(),
        };
        compare_step(
            ours,
            theirs,
            step.session,
            step.sql.clone(),
            &waiting,
            &mut again,
        )?;
        // Only a run that went the same way to the same end found the
        // same deadlock: the monitors keep the latest one, which could
        // otherwise be an earlier step's.
        let same = again.steps.len() == out.steps.len()
            && again
                .steps
                .last()
                .is_some_and(|a| a.ours == step.ours && a.theirs == step.theirs);
        if same {
            w.our_cycle = ours.latest_deadlock()?;
            w.their_cycle = theirs.latest_deadlock()?;
        }
    }
    ours.stop()?;
    theirs.stop()?;
    Ok(w)
}

/// The primary key of the row a single-row `INSERT ... VALUES` puts in
/// `tables`' table, as (column, SQL literal) pairs, and the table's name;
/// `None` for any other statement (REPLACE, IGNORE, ON DUPLICATE KEY
/// UPDATE, INSERT ... SELECT, several rows, a key prefix, a value that is
/// not a literal).
fn inserted_key(sql: &str, tables: &[TableDef]) -> Option<(String, Vec<(String, String)>)> {
    use engine::sql::ast::{Expr, InsertSource, OnDuplicate, Stmt, UnOp};
    use engine::sql::value::Datum;
    let Ok(Stmt::Insert {
        table,
        columns,
        source: InsertSource::Values(rows),
        on_duplicate: OnDuplicate::Error,
    }) = engine::sql::parse::parse(sql)
    else {
        return None;
    };
    let [row] = rows.as_slice() else {
        return None;
    };
    let def = tables
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(&table.name))?;
    if def.primary_key.is_empty() || def.primary_prefixes.iter().any(|&p| p != 0) {
        return None;
    }
    let lit = |e: &Expr| -> Option<String> {
        match e {
            Expr::Lit(Datum::Int(i)) => Some(i.to_string()),
            Expr::Lit(Datum::UInt(u)) => Some(u.to_string()),
            Expr::Lit(Datum::Str(b)) => Some(render::quote(b)),
            Expr::Unary(UnOp::Neg, inner) => match inner.as_ref() {
                Expr::Lit(Datum::Int(i)) => Some((-i).to_string()),
                Expr::Lit(Datum::UInt(u)) => Some(format!("-{u}")),
                _ => None,
            },
            _ => None,
        }
    };
    let mut key = Vec::new();
    for &c in &def.primary_key {
        let name = &def.columns[c].name;
        let at = match &columns {
            Some(cols) => cols.iter().position(|n| n.eq_ignore_ascii_case(name))?,
            None => c,
        };
        key.push((name.clone(), lit(row.get(at)?)?));
    }
    Some((def.name.clone(), key))
}

/// Whether the sessions innosim leaves waiting at a run's last step, where
/// the server finished them, are inserts the server let in only because
/// of where its pages end: `Ok(report)` if so, `Err(why not)`.
///
/// InnoDB checks an insert against the locks on the record after it on
/// the same page (`lock_rec_insert_check_and_lock`: `page_rec_get_next`),
/// which for a row that goes in last on its page is that page's supremum:
/// a gap lock a range read left on the first record of the next page (a
/// read that stopped there: LIMIT, the end of its range, a descending
/// read's start) does not stop it. innosim keeps its locks by key, not
/// by page (its pages are not InnoDB's byte for byte, and split
/// elsewhere), so its insert waits for that lock. The witness is the
/// server's own: every such session's statement is a single-row INSERT
/// whose wait on innosim's side is an insert intention on a record of the
/// table's clustered index (not its supremum), and on the server the row
/// it put in is the last on its page ([`Backend::ends_its_page`]).
///
/// The mirror: the server keeps waiting inserts innosim finished (with any
/// answer), because a page split handed the left page's supremum the
/// locks of the right page's first record (`lock_rec_inherit_to_gap`,
/// which MariaDB applies to record-only locks too when the heir is a
/// supremum), and an insert that lands last on the left page checks that
/// supremum. The witness: each is a single-row INSERT whose waiting
/// request on the server is an insert intention on the supremum of a page
/// of the table's clustered index that another transaction holds a lock
/// on, while the table has committed rows above the row's key, so that
/// supremum is a page's end, not the index's ([`Backend::waits_at_page_end`]).
///
/// The run is made again on fresh sides to look at both; it must part the
/// same way.
pub fn inserts_at_page_end(
    scenario: &Scenario,
    out: &Outcome,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Result<String, String>, String> {
    let Some(last) = out.steps.last() else {
        return Ok(Err("no step".into()));
    };
    let (o, t) = (&last.ours, &last.theirs);
    // Which side keeps the inserts waiting: innosim (the server let them
    // in at its page's end), or the server (it checked a page supremum a
    // split gave a lock).
    let ours_wait: BTreeSet<usize> = o.blocked.difference(&t.blocked).copied().collect();
    let theirs_wait: BTreeSet<usize> = t.blocked.difference(&o.blocked).copied().collect();
    let (parted, server_waits) = match (ours_wait.is_empty(), theirs_wait.is_empty()) {
        (false, true) => (ours_wait, false),
        (true, false) => (theirs_wait, true),
        _ => return Ok(Err("the sides do not differ by one side's waits".into())),
    };
    let (waiter, finisher) = if server_waits { (t, o) } else { (o, t) };
    let mut rest = finisher.finished.clone();
    rest.retain(|s, _| !parted.contains(s));
    let same_otherwise = rest == waiter.finished
        && finisher.blocked.is_subset(&waiter.blocked)
        && parted.iter().all(|s| match finisher.finished.get(s) {
            Some(Answer::Ok { .. }) => true,
            // innosim went on past the server's wait: its answer may be
            // the INSERT's own (a duplicate found later, say).
            Some(_) => server_waits,
            None => false,
        });
    if !same_otherwise {
        return Ok(Err(
            "the sides differ in more than inserts one side keeps waiting".into(),
        ));
    }
    let mut inserts = Vec::new();
    for &s in &parted {
        let Some(step) = out.steps.iter().rev().find(|st| st.session == s) else {
            return Ok(Err(format!("s{s} sent nothing")));
        };
        match inserted_key(&step.sql, &scenario.tables) {
            Some((table, key)) => inserts.push((s, table, key)),
            None => return Ok(Err(format!("s{s}'s statement is not a one-row INSERT"))),
        }
    }
    let t_run = Transcript::of_run(scenario, out);
    ours.set_sort_buffer(scenario.sort_buffer_bytes);
    ours.start(t_run.sessions, &t_run.setup)?;
    theirs.start(t_run.sessions, &t_run.setup)?;
    let mut again = Outcome::default();
    run_steps(&t_run, ours, theirs, &mut again)?;
    let verdict = (|| -> Result<Result<String, String>, String> {
        let same_again = again.steps.len() == out.steps.len()
            && again
                .steps
                .last()
                .is_some_and(|st| st.ours == *o && st.theirs == *t);
        if !same_again {
            return Ok(Err("the run does not part the same way again".into()));
        }
        let mut report = String::new();
        if server_waits {
            for (s, table, key) in &inserts {
                let k: Vec<&str> = key.iter().map(|(_, v)| v.as_str()).collect();
                match theirs.waits_at_page_end(*s, table, key)? {
                    Ok(page) => report.push_str(&format!(
                        "         s{s}: its row ({}) waits on the server with an insert intention on \
                         the supremum of {table}.PRIMARY page {page}, which another transaction \
                         holds and which ends a page, not the index (committed rows lie above \
                         the row); innosim keeps no lock on a page's supremum\n",
                        k.join(", ")
                    )),
                    Err(why) => {
                        return Ok(Err(format!(
                            "s{s}'s wait on the server is not at a page's end: {why}"
                        )))
                    }
                }
            }
            return Ok(Ok(report));
        }
        let structs = ours.lock_structs()?;
        for (s, table, key) in &inserts {
            let on = format!("{table}.PRIMARY");
            let waits_ii = structs.get(s).is_some_and(|l| {
                l.iter()
                    .any(|l| l.waiting && l.on == on && l.mode == "X,GAP,II")
            });
            if !waits_ii {
                return Ok(Err(format!(
                    "s{s} waits in innosim for something other than an insert intention on {on}"
                )));
            }
            if theirs.ends_its_page(table, key)? != Some(true) {
                return Ok(Err(format!(
                    "s{s}'s row is not the last of its page on the server"
                )));
            }
            let k: Vec<&str> = key.iter().map(|(_, v)| v.as_str()).collect();
            report.push_str(&format!(
                "         s{s}: its row ({}) is the last of its page on the server, \
                 which checked the page's supremum; innosim waits with an insert intention on {on}\n",
                k.join(", ")
            ));
        }
        Ok(Ok(report))
    })();
    ours.stop()?;
    theirs.stop()?;
    verdict
}

/// Weights by session, as a report shows them (`s0 3, s1 5`): a weight of
/// 0 (a transaction begun that holds nothing and wrote nothing, which
/// innosim lists and MariaDB, starting its transactions at their first
/// read or lock, does not) is left out.
pub(super) fn describe_weights(w: &BTreeMap<usize, u64>) -> String {
    let parts: Vec<String> = w
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(s, n)| format!("s{s} {n}"))
        .collect();
    if parts.is_empty() {
        return "none".into();
    }
    parts.join(", ")
}

/// Whether the rules of the later version `theirs` follows explain where
/// `out`, the run of `scenario` with 1.0.6's rules, parted from it: the
/// run again with all of them on gets past that step (or to the end
/// without a difference). Then the rule that does so alone names it
/// (`several rules together` if none does), and the run with them all on
/// is what the scenario found from there. `None` if they do not.
pub fn explain(
    scenario: &Scenario,
    out: &Outcome,
    later: engine::LaterRules,
    theirs: &mut dyn Backend,
) -> Result<Option<(String, Outcome)>, String> {
    let at = out.steps.len();
    let gets_past = |o: &Outcome| o.mismatch.is_none() || o.steps.len() > at;
    let again = run(
        scenario,
        &mut backend::Local::with_later_rules(later),
        theirs,
    )?;
    if !gets_past(&again) {
        return Ok(None);
    }
    let mut name = None;
    for rule in later.iter() {
        let alone = engine::LaterRules::NONE.with(rule);
        let one = run(
            scenario,
            &mut backend::Local::with_later_rules(alone),
            theirs,
        )?;
        if gets_past(&one) {
            name = Some(rule.name().to_string());
            break;
        }
    }
    Ok(Some((
        name.unwrap_or_else(|| "several rules together".into()),
        again,
    )))
}

/// The sessions innosim and the server rolled back, where a run's last
/// step is a deadlock each side resolved by killing a transaction the
/// other kept: one 1213 on each side, for different sessions (what the
/// survivor then does, finish or wait on, follows from the choice).
pub(super) fn victims_swapped(out: &Outcome) -> Option<(usize, usize)> {
    let st = out.steps.last()?;
    let victims = |p: &Picture| -> Vec<usize> {
        (p.finished.iter())
            .filter(|(_, a)| a.error() == Some(1213))
            .map(|(s, _)| *s)
            .collect()
    };
    match (victims(&st.ours).as_slice(), victims(&st.theirs).as_slice()) {
        (&[a], &[b]) if a != b => Some((a, b)),
        _ => None,
    }
}

/// How many lock structs of a transaction SHOW ENGINE INNODB STATUS
/// prints at most ("10 LOCKS PRINTED FOR THIS TRX: SUPPRESSING FURTHER
/// PRINTS", `lock_trx_print_locks`).
pub(super) const MONITOR_STRUCTS_PRINTED: usize = 10;

/// Whether the victims of a deadlock both sides found, `ours` and
/// `theirs` (the sessions each rolled back), differ only because the
/// server's pages spread the same locks over more lock structs: `Ok(())`
/// when, by the LATEST DETECTED DEADLOCK sections (what each transaction
/// weighed when the deadlock was found, [`backend::CycleTrx`]), the
/// cycles hold the same sessions; each side's victim is the one its own
/// weights pick under MariaDB's rule (`Deadlock::report`: the lightest,
/// weight doubled plus one for any but the `requester`, so the requester
/// loses a tie); and each transaction's counts differ only as pages make
/// them: the server's structs and record locks at least innosim's, the
/// undo records the same but beside a compressed table (see
/// [`layout_bound`]), and some weight different. The record locks do not
/// weigh; more of them on the server are its pages' supremums (a scan
/// that crosses into a page locks its supremum; a split hands a record's
/// locks to one), in new structs or in ones it has.
///
/// A lock innosim wrongly leaves out passes this check where the server
/// holds others beside it; what the before-step comparison of the
/// structs ([`layout_bound`]) shows is printed beside it, and decides
/// too where the weights differed before the step already.
pub fn cycle_bound(
    ours: &[backend::CycleTrx],
    theirs: &[backend::CycleTrx],
    victims: (usize, usize),
    requester: usize,
    compressed: bool,
) -> Result<(), String> {
    let by_session = |c: &[backend::CycleTrx]| -> Option<BTreeMap<usize, backend::CycleTrx>> {
        c.iter().map(|t| Some((t.session?, t.clone()))).collect()
    };
    let (Some(o), Some(t)) = (by_session(ours), by_session(theirs)) else {
        return Err("a transaction of a cycle is not a session's".into());
    };
    if o.is_empty() || t.is_empty() {
        return Err("a side reports no deadlock".into());
    }
    if o.keys().ne(t.keys()) {
        return Err(format!(
            "the cycles differ: innosim {:?}, the server {:?}",
            o.keys().collect::<Vec<_>>(),
            t.keys().collect::<Vec<_>>()
        ));
    }
    let pick = |c: &BTreeMap<usize, backend::CycleTrx>| {
        c.iter()
            .map(|(&s, x)| (((x.structs + x.undo) << 1) | u64::from(s != requester), s))
            .min()
            .map(|(_, s)| s)
    };
    if pick(&o) != Some(victims.0) || pick(&t) != Some(victims.1) {
        return Err("a side's victim is not the lightest by its own counts".into());
    }
    let mut differ = false;
    for (s, x) in &o {
        let y = &t[s];
        if y.structs < x.structs || y.rows < x.rows {
            return Err(format!(
                "s{s}: the server has fewer lock structs or record locks ({} and {}) than innosim ({} and {})",
                y.structs, y.rows, x.structs, x.rows
            ));
        }
        if x.undo != y.undo && !compressed {
            return Err(format!(
                "s{s}: {} undo records on innosim, {} on the server",
                x.undo, y.undo
            ));
        }
        differ |= x.structs + x.undo != y.structs + y.undo;
    }
    if !differ {
        return Err("the weights are the same".into());
    }
    Ok(())
}

/// Why a session's deadlock weights on the two sides differ, if not only
/// by their pages: `Ok(())` when the server's lock structs and innosim's
/// are the same locks, the server's only spread over more structs in the
/// ways InnoDB's pages make them, and the undo records the same or in a
/// scenario with a compressed table.
///
/// InnoDB keeps a record lock struct per page (`lock_rec_create`): a
/// split moves a lock's records to a struct on the new page
/// (`lock_move_rec_list_end`), a compressed page reorganized while a
/// request waits leaves an empty struct behind and makes the wait a new
/// one (`lock_move_reorganize_page`), and a range read that crosses pages
/// locks each page's supremum; an insert its compressed leaf refuses
/// writes more undo records (`btr_cur_optimistic_insert`). innosim's pages
/// hold other bytes than InnoDB's, so they split, reorganize and refuse
/// elsewhere, and it keeps one struct per index. What is left to compare
/// is the locks: every kind of struct innosim has (index, mode, waiting),
/// the server has at least as many of, with the same records where they
/// are records alone (`,REC`), at least as many where they may take in
/// page supremums (next-key), and the same gaps; a kind the server alone
/// has is a next-key one on an index it keeps on several pages; and the
/// server shows something pages did (an empty struct, an index on several
/// pages, or undo records that differ beside a compressed table).
pub fn layout_bound(
    ours: &[backend::LockStruct],
    theirs: &[backend::LockStruct],
    weights: (u64, u64),
    compressed: bool,
) -> Result<(), String> {
    type Kind = (String, String, bool);
    let kind = |l: &backend::LockStruct| (l.on.clone(), l.mode.clone(), l.waiting);
    let (our_undo, their_undo) = (
        weights.0.checked_sub(ours.len() as u64),
        weights.1.checked_sub(theirs.len() as u64),
    );
    let (Some(our_undo), Some(their_undo)) = (our_undo, their_undo) else {
        return Err("fewer undo records than none".into());
    };
    let mut pages: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for l in theirs {
        if let Some(p) = l.page {
            pages.entry(&l.on).or_default().insert(p);
        }
    }
    let spread = |on: &str| pages.get(on).is_some_and(|p| p.len() > 1);
    let tally = |list: &[backend::LockStruct], skip_empty: bool| {
        let mut m: BTreeMap<Kind, (u64, u64)> = BTreeMap::new();
        for l in list.iter().filter(|l| !(skip_empty && l.bits == Some(0))) {
            let e = m.entry(kind(l)).or_default();
            e.0 += 1;
            e.1 += u64::from(l.bits.unwrap_or(0));
        }
        m
    };
    let (mine, server) = (tally(ours, false), tally(theirs, true));
    for (k, &(n, bits)) in &mine {
        let (on, mode, _) = k;
        let Some(&(m, their_bits)) = server.get(k) else {
            return Err(format!("the server has no {on} {mode} struct"));
        };
        if m < n {
            return Err(format!(
                "innosim has {n} {on} {mode} structs, the server {m}"
            ));
        }
        let records_alone = mode.ends_with(",REC");
        let next_key = !mode.contains(',') && on.contains('.');
        let gaps = mode.ends_with(",GAP");
        if (records_alone || gaps) && bits != their_bits || next_key && their_bits < bits {
            return Err(format!(
                "{on} {mode}: innosim locks {bits} records, the server {their_bits}"
            ));
        }
    }
    for (on, mode, waiting) in server.keys().filter(|k| !mine.contains_key(*k)) {
        let next_key = !mode.contains(',') && on.contains('.');
        if !next_key || *waiting || !spread(on) {
            return Err(format!("innosim has no {on} {mode} struct"));
        }
    }
    if our_undo != their_undo && !compressed {
        return Err(format!(
            "{our_undo} undo records against the server's {their_undo}"
        ));
    }
    let empty = theirs.iter().any(|l| l.bits == Some(0));
    let pages_did = empty || pages.keys().any(|on| spread(on)) || our_undo != their_undo;
    if !pages_did {
        return Err("nothing the pages did shows".into());
    }
    Ok(())
}
