//! The kind of a violation: which checker found it and the class of what
//! it found, never the numbers, names and values in its message.
//!
//! A campaign shrinks and saves one corpus entry per kind and lists the
//! other failures of that kind with their replay lines, and the shrinker
//! keeps a candidate only while it fails with the same kind, so the kind
//! must be the same for two seeds that hit the same bug in different
//! places (`corrupt page 1 in 'sb.ibd': ... heap offset 15560` and
//! `corrupt page 3 in 'docs.ibd': ... heap offset 13928` are one kind,
//! `engine error: corrupt page`) and differ for different findings
//! (`lock oracle: two-phase locking` is not `lock oracle: committed
//! locking transactions are not serializable`).
//!
//! A violation's text is `checker: finding` for the checkers that judge
//! the whole run (the lock oracle, the recovery oracle, DDL, durability,
//! CHECK TABLE after a recovery, ...), and `statement: finding` for a
//! statement judged in lockstep, where the statement is the runner's
//! description of it (`insert t2 (29,,36,<5452 bytes>,badb)`). The kind
//! is the checker (for a statement: `engine error` for an error the
//! engine should never give, `reads` and `phantoms` for rows a read model
//! disagrees with, `lockstep` otherwise) and the finding's first clause
//! with every value-like word left out: a word holding a digit, a quote,
//! a bracket or a dot, or a CamelCase Debug name (`RepeatableRead`), and
//! anything a bracket or a quote groups. At most eight words are kept.
//!
//! ```text
//! lock oracle: trx 9 timed out after at most 3543 us of waiting, before ...
//!   -> lock oracle: trx timed out after at most us of
//! delete docs [171]: unexpected engine error: corrupt page 1 in 'docs.ibd': ...
//!   -> engine error: corrupt page
//! CHECK TABLE t1: ox: entry for a live row is missing
//!   -> CHECK TABLE: entry for a live row is missing
//! ```
//!
//! `innosim fuzz --time 20s --profile compressed --canary zip-skip-mod-log`, a bug that fails
//! almost every seed, reports 4 kinds and saves 4 entries.

/// The checkers whose violations begin with their name and a colon.
const CHECKERS: &[&str] = &[
    "lock oracle",
    "recovery oracle",
    "recovery failed",
    "reading the recovered database failed",
    "durability",
    "DDL",
    "nondeterminism",
    "liveness",
    "setup failed",
    "compression",
    "INNODB_CMP",
];

/// Words a class does not end with: what they led to was a value.
const TRAILING: &[&str] = &[
    "in", "on", "of", "for", "at", "the", "a", "an", "by", "to", "from", "is", "as", "with",
];

/// The most words a class keeps.
const CLASS_WORDS_MAX: usize = 8;

/// The kind of violation `v`: `checker: class` (see the module comment).
pub fn violation_kind(v: &str) -> String {
    let (checker, finding) = split_checker(v);
    let class = match checker {
        // The finding of a read is its rows: the checker says it all.
        "reads" | "phantoms" => String::new(),
        _ => class_of(finding),
    };
    if class.is_empty() {
        checker.to_string()
    } else {
        format!("{checker}: {class}")
    }
}

/// The checker of `v` and the rest of its text, the finding.
fn split_checker(v: &str) -> (&'static str, &str) {
    for &c in CHECKERS {
        if let Some(rest) = v.strip_prefix(c).and_then(|r| r.strip_prefix(": ")) {
            return (c, rest);
        }
    }
    if let Some(rest) = v.strip_prefix("CHECK TABLE ") {
        // `CHECK TABLE t: index: problem`, or `CHECK TABLE t: error`.
        let rest = rest.split_once(": ").map_or(rest, |(_, r)| r);
        let problem = match rest.split_once(": ") {
            Some((index, r)) if !index.contains(' ') => r,
            _ => rest,
        };
        return ("CHECK TABLE", problem);
    }
    // A statement judged in lockstep: its description, then the finding.
    let finding = v.split_once(": ").map_or(v, |(_, r)| r);
    if let Some(rest) = finding.strip_prefix("unexpected engine error: ") {
        return ("engine error", rest);
    }
    if finding.contains("saw a phantom") {
        return ("phantoms", finding);
    }
    if finding.contains(" read returned ") {
        return ("reads", finding);
    }
    ("lockstep", finding)
}

/// The first clause of `finding` without its values.
fn class_of(finding: &str) -> String {
    let mut words: Vec<&str> = Vec::new();
    for token in tokens(finding) {
        let clause_ends = token.ends_with(':') || token.ends_with(',') || token.ends_with(';');
        let word = token.trim_end_matches([':', ',', ';']);
        if !word.is_empty() && !value_like(word) {
            words.push(word);
        }
        if clause_ends || words.len() == CLASS_WORDS_MAX {
            break;
        }
    }
    while words.last().is_some_and(|w| TRAILING.contains(w)) {
        words.pop();
    }
    words.join(" ")
}

/// The space-separated tokens of `s`, a bracket's or a quote's contents
/// kept whole (`Record(3, 4, None)`, `'a b'`, `<5452 bytes>`).
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    for (i, ch) in s.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            // A quote opens only at a word's start: `engine's` is a word.
            None if (ch == '\'' || ch == '"') && prev.is_none_or(|p| !p.is_alphanumeric()) => {
                quote = Some(ch)
            }
            None => match ch {
                '(' | '[' | '<' | '{' => depth += 1,
                ')' | ']' | '>' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        if ch == ' ' && depth == 0 && quote.is_none() {
            if let Some(b) = start.take() {
                out.push(&s[b..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
        prev = Some(ch);
    }
    if let Some(b) = start {
        out.push(&s[b..]);
    }
    out
}

/// Whether `word` is a value rather than part of the finding's wording.
fn value_like(word: &str) -> bool {
    // A quote counts where it opens the word: `engine's` is wording.
    let quoted = word.starts_with(['\'', '"', '`']);
    let grouped = quoted
        || word
            .chars()
            .any(|c| c.is_ascii_digit() || "\"()[]<>{}.=$".contains(c));
    let camel = word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase());
    // Not ASCII: a name (a building index's is prefixed with 0xff).
    grouped || camel || !word.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::violation_kind as kind;

    #[test]
    fn numbers_names_and_values_do_not_make_kinds() {
        let a = "insert docs (286,thy,<31307 bytes>): unexpected engine error: corrupt page 2 in 'docs.ibd': compressed page: no record for heap offset 16358";
        let b = "delete sb [121]: unexpected engine error: corrupt page 1 in 'sb.ibd': compressed page: no record for heap offset 15560";
        assert_eq!(kind(a), "engine error: corrupt page");
        assert_eq!(kind(a), kind(b));
        let t1 = "lock oracle: trx 9 timed out after at most 3543 us of waiting, before the 2000000 us timeout";
        let t2 = "lock oracle: trx 13 timed out after at most 12 us of waiting, before the 50000 us timeout";
        assert_eq!(kind(t1), kind(t2));
        assert_eq!(
            kind("lock oracle: trx 6 still waits for Record(true, InsertIntention) on Record(3, 4, None) with nothing ahead of it in conflict (a lost wake-up)"),
            kind("lock oracle: trx 61 still waits for Table(IX) on Table(7) with nothing ahead of it in conflict (a lost wake-up)"),
        );
        assert_eq!(
            kind("scan docs Some(\"v\") rev=false limit=Some(2): a RepeatableRead read returned [], its snapshot and the transaction's own writes say [[Int(282)]]"),
            "reads"
        );
        assert_eq!(
            kind("scan sb Some(\"k\") rev=false limit=Some(8) for update: sb: a locking read saw a phantom in a range"),
            "phantoms"
        );
        assert_eq!(
            kind("CHECK TABLE t1: \u{ff}ox: entry for a live row is missing"),
            "CHECK TABLE: entry for a live row is missing"
        );
        assert_eq!(
            kind("CHECK TABLE sb: PRIMARY: compressed page 1: record in slot 0 differs"),
            "CHECK TABLE: compressed page"
        );
        assert_eq!(
            kind("durability: the engine's flushed LSN advanced from 13669 to 14135, past the 13669 written"),
            "durability: the engine's flushed LSN advanced"
        );
        assert_eq!(
            kind("recovery failed: corruption in 'redo': record for page 3:1 does not fit the page: insert"),
            "recovery failed: corruption"
        );
    }

    #[test]
    fn different_findings_are_different_kinds() {
        let early = "lock oracle: two-phase locking: trx 10 released its Record(true, Record) lock on sb.PRIMARY (3) before it ended";
        let cycle = "lock oracle: committed locking transactions are not serializable: 2 of them are on conflict cycles";
        assert_eq!(kind(early), "lock oracle: two-phase locking");
        assert_eq!(
            kind(cycle),
            "lock oracle: committed locking transactions are not serializable"
        );
        assert_ne!(
            kind("lock oracle: deadlock victim trx 6 (weight 3) breaks the weight rule: requester trx 5"),
            kind("lock oracle: deadlock victim trx 8 (weight 7) where trx 5 (weight 6) should have been (requester 8)")
        );
        assert_eq!(
            kind("insert t1 (11,ac,cd,d,44,c): the engine reported a duplicate key, the model expected Ok(Affected(1))"),
            "lockstep: the engine reported a duplicate key"
        );
        assert_eq!(
            kind("recovery oracle: recovered state equals no ..."),
            "recovery oracle: recovered state equals no"
        );
        assert_ne!(kind("recovery oracle: x"), kind("recovery failed: x"));
    }
}
