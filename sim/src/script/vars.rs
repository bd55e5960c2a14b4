//! mysqltest's variables: `$name` (letters, digits and `_`), set by `let`
//! and `inc`/`dec`, expanded by `eval`, `echo` and the commands that take
//! strings (`do_eval`, `var_get`); a name that was never set reads the
//! environment mysql-test-run gives a test, then the empty string.

use std::collections::BTreeMap;

/// The variables of one test.
#[derive(Debug, Default)]
pub(super) struct Vars {
    values: BTreeMap<String, String>,
    /// What mysql-test-run exports to the test (`MYSQLD_DATADIR`, ...).
    env: BTreeMap<String, String>,
}

fn is_var_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl Vars {
    pub fn new(env: BTreeMap<String, String>) -> Vars {
        Vars {
            values: BTreeMap::new(),
            env,
        }
    }

    /// The value of `name` (without the `$`).
    pub fn get(&self, name: &str) -> String {
        self.values
            .get(name)
            .or_else(|| self.env.get(name))
            .cloned()
            .unwrap_or_default()
    }

    pub fn set(&mut self, name: &str, value: String) {
        self.values.insert(name.to_string(), value);
    }

    /// `$name` at the start of `s`: its name's length in bytes (after the
    /// `$`), 0 if no name follows. `$0`..`$9` are names of one digit.
    pub fn name_len(s: &str) -> usize {
        let b = s.as_bytes();
        if b.first().is_some_and(u8::is_ascii_digit) {
            return 1;
        }
        b.iter().take_while(|&&c| is_var_char(c)).count()
    }

    /// `do_eval`: `$name` replaced by its value; `\$`, `\\` and `\"` give
    /// the character after the backslash, any other backslash stays.
    pub fn expand(&self, s: &str) -> Result<String, String> {
        let b = s.as_bytes();
        let mut out: Vec<u8> = Vec::with_capacity(b.len());
        let mut i = 0;
        let mut escaped = false;
        while i < b.len() {
            let c = b[i];
            match c {
                b'$' if !escaped => {
                    let n = Vars::name_len(&s[i + 1..]);
                    if n == 0 {
                        return Err("Bad variable in eval".into());
                    }
                    out.extend_from_slice(self.get(&s[i + 1..i + 1 + n]).as_bytes());
                    i += 1 + n;
                    continue;
                }
                b'\\' if !escaped && matches!(b.get(i + 1), Some(b'\\' | b'$' | b'"')) => {
                    escaped = true;
                }
                _ => {
                    escaped = false;
                    out.push(c);
                }
            }
            i += 1;
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// `inc`/`dec`: the value read as an integer (`atoi`), moved by
    /// `by`.
    pub fn add(&mut self, name: &str, by: i64) {
        let v = atoi(&self.get(name)).wrapping_add(by);
        self.set(name, v.to_string());
    }
}

/// C's `atoi`: leading spaces, a sign, digits; 0 when none.
pub(super) fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_expands_names_and_keeps_escaped_dollars() {
        let mut v = Vars::new(BTreeMap::from([("HOME".to_string(), "/h".to_string())]));
        v.set("a", "1".into());
        v.set("ab", "2".into());
        assert_eq!(
            v.expand("x=$a y=$ab z=$HOME w=$nope.").unwrap(),
            "x=1 y=2 z=/h w=."
        );
        assert_eq!(v.expand(r#"\$a \\ \" \n"#).unwrap(), r#"$a \ " \n"#);
        assert!(v.expand("$ alone").is_err());
    }

    #[test]
    fn inc_and_dec_count_as_atoi_reads() {
        let mut v = Vars::default();
        v.set("i", " 41abc".into());
        v.add("i", 1);
        assert_eq!(v.get("i"), "42");
        v.add("j", -1);
        assert_eq!(v.get("j"), "-1");
        assert_eq!(atoi("-7x"), -7);
        assert_eq!(atoi("x"), 0);
    }
}
