//! Splitting a line of statements as the `mysql` client does before it
//! sends them: at each `;` outside quotes (`'`, `"`, backquote, with
//! backslash escapes inside them), a `\G` ending a statement as `;` does
//! but asking for vertical output. The SQL shell (`innosim sql`) reads its
//! input through it.

/// Splits a line of statements at `;` outside quotes; a trailing `\G`
/// asks for vertical output.
pub fn split_statements(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ';' => out.push((std::mem::take(&mut cur), false)),
                '\\' if chars.peek() == Some(&'G') => {
                    chars.next();
                    out.push((std::mem::take(&mut cur), true));
                }
                c => cur.push(c),
            },
        }
    }
    out.push((cur, false));
    out.into_iter()
        .filter(|(s, _)| !s.trim().is_empty())
        .map(|(s, g)| (s.trim().to_string(), g))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_semicolons_outside_quotes() {
        let split = |text: &str| split_statements(text);
        let plain = |s: &str| (s.to_string(), false);
        assert_eq!(
            split("select 1; select 'a;b' ;  select `x;y`"),
            [
                plain("select 1"),
                plain("select 'a;b'"),
                plain("select `x;y`")
            ]
        );
        // An escaped quote stays inside its string; empty statements go.
        assert_eq!(
            split(r#"insert into t values ('it\'s; fine', "x;\"y") ;; "#),
            [plain(r#"insert into t values ('it\'s; fine', "x;\"y")"#)]
        );
        // \G ends a statement and asks for vertical output.
        assert_eq!(
            split(r"show engine innodb status\G select 2"),
            [
                ("show engine innodb status".to_string(), true),
                plain("select 2")
            ]
        );
        assert!(split("  ;  ").is_empty());
    }
}
