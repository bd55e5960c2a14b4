//! The parser's DDL: CREATE (DATABASE, TABLE, INDEX), column and index
//! definitions, the column types, table options, DROP and ALTER TABLE.

use super::*;
use crate::dict::FkAction;

impl Parser<'_> {
    pub(super) fn create(&mut self) -> R<Stmt> {
        if self.eat_kw("DATABASE") || self.eat_kw("SCHEMA") {
            let if_not_exists = self.if_not_exists()?;
            let name = self.ident()?;
            // CHARACTER SET options are accepted and are latin1 anyway.
            self.table_options(&mut TableOptions::default())?;
            return Ok(Stmt::CreateDatabase {
                name,
                if_not_exists,
            });
        }
        let unique = self.eat_kw("UNIQUE");
        if self.eat_kw("INDEX") {
            let name = self.ident()?;
            self.expect_kw("ON")?;
            let table = self.table_name()?;
            let (columns, prefixes) = self.column_list()?;
            self.index_tail()?;
            return Ok(Stmt::CreateIndex {
                table,
                index: IndexSpec {
                    name: Some(name),
                    columns,
                    prefixes,
                    unique,
                    primary: false,
                },
            });
        }
        if unique {
            return Err(self.err());
        }
        self.expect_kw("TABLE")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        if self.eat_kw("LIKE") {
            let like = self.table_name()?;
            return Ok(Stmt::CreateTableLike {
                name,
                like,
                if_not_exists,
            });
        }
        if self.is_op("(") && self.is_kw_at(1, "LIKE") {
            self.pos += 2;
            let like = self.table_name()?;
            self.expect_op(")")?;
            return Ok(Stmt::CreateTableLike {
                name,
                like,
                if_not_exists,
            });
        }
        self.expect_op("(")?;
        let mut columns = Vec::new();
        let mut indexes = Vec::new();
        let mut foreign = Vec::new();
        loop {
            if let Some(fk) = self.foreign_def()? {
                foreign.push((indexes.len(), fk));
            } else if let Some(ix) = self.index_def()? {
                indexes.push(ix);
            } else {
                columns.push(self.column_def()?);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        let mut options = TableOptions::default();
        self.table_options(&mut options)?;
        if self.is_kw("SELECT") || self.is_kw("AS") {
            return Err(SqlError::unsupported("CREATE TABLE ... SELECT"));
        }
        Ok(Stmt::CreateTable(CreateTable {
            name,
            if_not_exists,
            columns,
            indexes,
            foreign,
            options,
        }))
    }

    /// `[CONSTRAINT [name]] FOREIGN KEY [index] (cols) REFERENCES t (cols)
    /// [MATCH ...] [ON DELETE action] [ON UPDATE action]`, if one starts
    /// here.
    pub(super) fn foreign_def(&mut self) -> R<Option<ForeignSpec>> {
        let save = self.pos;
        let mut constraint = None;
        if self.eat_kw("CONSTRAINT")
            && !self.is_kw("FOREIGN")
            && !self.is_kw("PRIMARY")
            && !self.is_kw("UNIQUE")
        {
            constraint = Some(self.ident()?);
        }
        if !self.eat_kw("FOREIGN") {
            self.pos = save;
            return Ok(None);
        }
        self.expect_kw("KEY")?;
        let index = if self.is_op("(") {
            None
        } else {
            Some(self.ident()?)
        };
        let (columns, _) = self.column_list()?;
        let (parent, parent_columns, on_delete, on_update) = self.references()?;
        Ok(Some(ForeignSpec {
            constraint,
            index,
            columns,
            parent,
            parent_columns,
            on_delete,
            on_update,
        }))
    }

    /// `REFERENCES t (cols) [MATCH FULL | PARTIAL | SIMPLE] [ON DELETE
    /// action] [ON UPDATE action]`.
    pub(super) fn references(&mut self) -> R<(TableName, Vec<String>, FkAction, FkAction)> {
        self.expect_kw("REFERENCES")?;
        let parent = self.table_name()?;
        let (parent_columns, _) = self.column_list()?;
        let mut on_delete = FkAction::Restrict;
        let mut on_update = FkAction::Restrict;
        loop {
            if self.eat_kw("MATCH") {
                if !self.eat_kw("FULL") && !self.eat_kw("PARTIAL") {
                    self.expect_kw("SIMPLE")?;
                }
            } else if self.eat_kw("ON") {
                let delete = self.eat_kw("DELETE");
                if !delete {
                    self.expect_kw("UPDATE")?;
                }
                let action = if self.eat_kw("RESTRICT") {
                    FkAction::Restrict
                } else if self.eat_kw("CASCADE") {
                    FkAction::Cascade
                } else if self.eat_kw("NO") {
                    self.expect_kw("ACTION")?;
                    FkAction::NoAction
                } else {
                    self.expect_kw("SET")?;
                    if self.is_kw("DEFAULT") {
                        // MySQL parses it; InnoDB's own parser refuses it.
                        return Err(SqlError::unsupported("SET DEFAULT in a FOREIGN KEY"));
                    }
                    self.expect_kw("NULL")?;
                    FkAction::SetNull
                };
                if delete {
                    on_delete = action;
                } else {
                    on_update = action;
                }
            } else {
                return Ok((parent, parent_columns, on_delete, on_update));
            }
        }
    }

    pub(super) fn if_not_exists(&mut self) -> R<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    pub(super) fn if_exists(&mut self) -> R<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `USING BTREE` and `COMMENT '...'` after an index's columns.
    pub(super) fn index_tail(&mut self) -> R<()> {
        loop {
            if self.eat_kw("USING") {
                if !self.eat_kw("BTREE") {
                    self.expect_kw("HASH")?;
                }
            } else if self.eat_kw("COMMENT") {
                self.string()?;
            } else {
                return Ok(());
            }
        }
    }

    /// `(a, b(10))`: the key's columns and the prefix length written after
    /// each, if any.
    pub(super) fn column_list(&mut self) -> R<(Vec<String>, Vec<Option<u16>>)> {
        self.expect_op("(")?;
        let mut cols = Vec::new();
        let mut prefixes = Vec::new();
        loop {
            cols.push(self.ident()?);
            let p = self.paren_number()?;
            prefixes.push(match p {
                None => None,
                Some(n) if (1..=u64::from(u16::MAX)).contains(&n) => Some(n as u16),
                Some(_) => {
                    return Err(SqlError::new(
                        1089,
                        "Incorrect prefix key; the used key part isn't a string, the used \
                         length is longer than the key part, or the storage engine doesn't \
                         support unique prefix keys",
                    ))
                }
            });
            if !self.eat_kw("ASC") {
                self.eat_kw("DESC");
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok((cols, prefixes))
    }

    /// An index definition inside CREATE TABLE or after ADD, if one starts
    /// here.
    pub(super) fn index_def(&mut self) -> R<Option<IndexSpec>> {
        let save = self.pos;
        if self.eat_kw("CONSTRAINT") {
            if !self.is_kw("PRIMARY") && !self.is_kw("UNIQUE") {
                self.ident()?;
            }
            if !self.is_kw("PRIMARY") && !self.is_kw("UNIQUE") {
                return Err(self.err());
            }
        }
        if self.eat_kw("PRIMARY") {
            self.expect_kw("KEY")?;
            self.index_tail()?;
            let (columns, prefixes) = self.column_list()?;
            self.index_tail()?;
            return Ok(Some(IndexSpec {
                name: None,
                columns,
                prefixes,
                unique: true,
                primary: true,
            }));
        }
        let unique = self.eat_kw("UNIQUE");
        let keyword = self.eat_kw("KEY") || self.eat_kw("INDEX");
        if !unique && !keyword {
            self.pos = save;
            return Ok(None);
        }
        let name = if self.is_op("(") || self.is_kw("USING") {
            None
        } else {
            Some(self.ident()?)
        };
        self.index_tail()?;
        let (columns, prefixes) = self.column_list()?;
        self.index_tail()?;
        Ok(Some(IndexSpec {
            name,
            columns,
            prefixes,
            unique,
            primary: false,
        }))
    }

    pub(super) fn column_def(&mut self) -> R<ColumnSpec> {
        let name = self.ident()?;
        let (ty, collation, members) = self.data_type()?;
        let mut c = ColumnSpec {
            name,
            ty,
            collation,
            not_null: false,
            default: None,
            auto_increment: false,
            primary: false,
            unique: false,
            members,
            default_now: false,
            update_now: false,
        };
        let mut explicit_null = false;
        loop {
            if self.eat_kw("NOT") {
                self.expect_kw("NULL")?;
                c.not_null = true;
            } else if self.eat_kw("NULL") {
                c.not_null = false;
                explicit_null = true;
            } else if self.eat_kw("DEFAULT") {
                if self.current_timestamp()? {
                    c.default_now = true;
                    c.default = None;
                } else {
                    c.default = Some(self.constant()?);
                    c.default_now = false;
                }
            } else if self.eat_kw("ON") {
                self.expect_kw("UPDATE")?;
                if !self.current_timestamp()? {
                    return Err(self.err());
                }
                c.update_now = true;
            } else if self.eat_kw("AUTO_INCREMENT") {
                c.auto_increment = true;
            } else if self.eat_kw("PRIMARY") {
                self.expect_kw("KEY")?;
                c.primary = true;
            } else if self.eat_kw("KEY") {
                c.primary = true;
            } else if self.eat_kw("UNIQUE") {
                self.eat_kw("KEY");
                c.unique = true;
            } else if self.eat_kw("COMMENT") {
                self.string()?;
            } else if self.is_kw("REFERENCES") {
                // MySQL parses a column's REFERENCES and ignores it: no
                // constraint is made.
                self.references()?;
            } else if self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                let coll = self.charset_clause(c.collation)?;
                c.collation = Some(coll);
            } else {
                // A TIMESTAMP is NOT NULL unless NULL is written.
                if c.ty == SqlType::Timestamp && !explicit_null {
                    c.not_null = true;
                }
                return Ok(c);
            }
        }
    }

    /// CURRENT_TIMESTAMP, NOW() or their synonyms, if next.
    pub(super) fn current_timestamp(&mut self) -> R<bool> {
        for kw in ["CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"] {
            if self.eat_kw(kw) {
                if self.eat_op("(") {
                    self.expect_op(")")?;
                } else if kw == "NOW" {
                    return Err(self.err());
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A constant for DEFAULT: a literal, maybe negative, or NULL.
    pub(super) fn constant(&mut self) -> R<Datum> {
        let neg = self.eat_op("-");
        let d = match self.peek() {
            Some(Tok::Str(s)) if !neg => Datum::Str(s.clone()),
            Some(Tok::Hex(b)) if !neg => Datum::Hex(b.clone()),
            Some(Tok::Int(_)) | Some(Tok::Decimal(_)) | Some(Tok::Float(_)) => {
                let Expr::Lit(d) = self.primary()? else {
                    unreachable!("a number is a literal")
                };
                self.pos -= 1;
                if neg {
                    crate::sql::value::arith(BinOp::Sub, &Datum::Int(0), &d)?
                } else {
                    d
                }
            }
            Some(Tok::Word {
                text,
                quoted: false,
            }) if !neg && text.eq_ignore_ascii_case("NULL") => Datum::Null,
            _ => return Err(self.err()),
        };
        self.pos += 1;
        Ok(d)
    }

    /// `CHARACTER SET x`, `CHARSET x` (the set's default collation) or
    /// `COLLATE x`, after `before` (an earlier clause's collation): the
    /// collation they give. A COLLATE of another set than the one named
    /// is MySQL's 1253; a set innosim lacks is refused as unsupported.
    pub(super) fn charset_clause(&mut self, before: Option<Collation>) -> R<Collation> {
        if self.eat_kw("CHARACTER") {
            self.expect_kw("SET")?;
        } else if !self.eat_kw("CHARSET") {
            self.expect_kw("COLLATE")?;
            self.eat_op("=");
            let c = self.ident_or_string()?;
            let coll = Collation::by_name(&c)
                .ok_or_else(|| SqlError::new(1273, format!("Unknown collation: '{c}'")))?;
            if let Some(b) = before.filter(|b| b.charset() != coll.charset()) {
                return Err(SqlError::new(
                    1253,
                    format!(
                        "COLLATION '{}' is not valid for CHARACTER SET '{}'",
                        coll.name(),
                        b.charset()
                    ),
                ));
            }
            return Ok(coll);
        }
        self.eat_op("=");
        let c = self.ident_or_string()?;
        if c.eq_ignore_ascii_case("default") {
            return Ok(Collation::Latin1SwedishCi);
        }
        Collation::default_of_charset(&c)
            .ok_or_else(|| SqlError::unsupported(&format!("character set {c}")))
    }

    pub(super) fn paren_number(&mut self) -> R<Option<u64>> {
        if self.eat_op("(") {
            let n = self.number()?;
            self.expect_op(")")?;
            return Ok(Some(n));
        }
        Ok(None)
    }

    /// `(M)` or `(M,D)` after a number type.
    pub(super) fn paren_digits(&mut self) -> R<Option<(u64, Option<u64>)>> {
        if !self.eat_op("(") {
            return Ok(None);
        }
        let m = self.number()?;
        let d = if self.eat_op(",") {
            Some(self.number()?)
        } else {
            None
        };
        self.expect_op(")")?;
        Ok(Some((m, d)))
    }

    /// An ENUM's or SET's member list: `('a','b',...)`.
    pub(super) fn members(&mut self) -> R<Vec<Vec<u8>>> {
        self.expect_op("(")?;
        let mut out = Vec::new();
        loop {
            let Some(Tok::Str(s)) = self.peek() else {
                return Err(self.err());
            };
            // Trailing spaces are not part of a member (MySQL strips them).
            let mut m = s.clone();
            while m.last() == Some(&b' ') {
                m.pop();
            }
            out.push(m);
            self.pos += 1;
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok(out)
    }

    /// A column type, the collation written with it, and an ENUM's or
    /// SET's members.
    pub(super) fn data_type(&mut self) -> R<(SqlType, Option<Collation>, Vec<Vec<u8>>)> {
        let Some(Tok::Word {
            text,
            quoted: false,
        }) = self.peek()
        else {
            return Err(self.err());
        };
        let kw = text.to_ascii_uppercase();
        let start = self.pos;
        self.pos += 1;
        let ty = match kw.as_str() {
            "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "INTEGER" | "BIGINT" => {
                let bytes = match kw.as_str() {
                    "TINYINT" => 1,
                    "SMALLINT" => 2,
                    "MEDIUMINT" => 3,
                    "BIGINT" => 8,
                    _ => 4,
                };
                let width = self.paren_number()?;
                let width = match width {
                    Some(w) if !(1..=255).contains(&w) => {
                        return Err(SqlError::new(
                            1439,
                            "Display width out of range for column (max = 255)",
                        ))
                    }
                    w => w.map(|w| w as u16),
                };
                let unsigned = self.eat_kw("UNSIGNED");
                if self.eat_kw("ZEROFILL") {
                    return Err(SqlError::unsupported("ZEROFILL"));
                }
                SqlType::Integer {
                    bytes,
                    unsigned,
                    width,
                }
            }
            "CHAR" | "CHARACTER" => {
                let n = self.paren_number()?.unwrap_or(1);
                if n > 255 {
                    return Err(SqlError::new(
                        1074,
                        format!(
                            "Column length too big for column '{}' (max = 255); use BLOB or TEXT instead",
                            self.column_name_before(start)
                        ),
                    ));
                }
                SqlType::Char(n as u16)
            }
            "VARCHAR" => {
                let n = self.paren_number()?.ok_or_else(|| self.err())?;
                if n > 65_535 {
                    return Err(SqlError::new(
                        1074,
                        format!(
                            "Column length too big for column '{}' (max = 65535); use BLOB or TEXT instead",
                            self.column_name_before(start)
                        ),
                    ));
                }
                SqlType::VarChar(n as u16)
            }
            "TINYTEXT" => SqlType::Text(255),
            "TEXT" => {
                self.paren_number()?;
                SqlType::Text(65_535)
            }
            "MEDIUMTEXT" => SqlType::Text(16_777_215),
            "LONGTEXT" => SqlType::Text(u32::MAX),
            "TINYBLOB" => SqlType::Blob(255),
            "BLOB" => {
                self.paren_number()?;
                SqlType::Blob(65_535)
            }
            "MEDIUMBLOB" => SqlType::Blob(16_777_215),
            "LONGBLOB" => SqlType::Blob(u32::MAX),
            "BOOL" | "BOOLEAN" => SqlType::Integer {
                bytes: 1,
                unsigned: false,
                width: Some(1),
            },
            "DECIMAL" | "NUMERIC" | "DEC" | "FIXED" => {
                let (m, d) = match self.paren_digits()? {
                    None => (10, 0),
                    Some((m, d)) => (m, d.unwrap_or(0)),
                };
                let name = self.column_name_before(start);
                if m > 65 {
                    return Err(SqlError::new(
                        1426,
                        format!(
                            "Too big precision {m} specified for column '{name}'. Maximum is 65."
                        ),
                    ));
                }
                if d > 30 {
                    return Err(SqlError::new(
                        1425,
                        format!("Too big scale {d} specified for column '{name}'. Maximum is 30."),
                    ));
                }
                if d > m {
                    return Err(SqlError::new(
                        1427,
                        format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."),
                    ));
                }
                SqlType::Decimal {
                    precision: m.max(1) as u8,
                    scale: d as u8,
                }
            }
            "FLOAT" | "DOUBLE" | "REAL" => {
                if kw == "DOUBLE" {
                    self.eat_kw("PRECISION");
                }
                let digits = self.paren_digits()?;
                let name = self.column_name_before(start);
                let (double, digits) = match (kw.as_str(), digits) {
                    // FLOAT(p): a FLOAT up to 24 bits of precision, else
                    // a DOUBLE.
                    ("FLOAT", Some((p, None))) if p <= 24 => (false, None),
                    ("FLOAT", Some((p, None))) if p <= 53 => (true, None),
                    (_, Some((_, None))) => return Err(self.err()),
                    (_, Some((m, Some(d)))) => {
                        if d > 30 || d > m || m > 255 {
                            return Err(SqlError::new(
                                1427,
                                format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."),
                            ));
                        }
                        (kw != "FLOAT", Some((m as u8, d as u8)))
                    }
                    (_, None) => (kw != "FLOAT", None),
                };
                SqlType::Float { double, digits }
            }
            "DATE" => SqlType::Date,
            "TIME" => SqlType::Time,
            "DATETIME" => SqlType::DateTime,
            "TIMESTAMP" => {
                self.paren_number()?;
                SqlType::Timestamp
            }
            "YEAR" => {
                if let Some(w) = self.paren_number()? {
                    if w != 4 {
                        return Err(SqlError::unsupported("YEAR(2)"));
                    }
                }
                SqlType::Year
            }
            "ENUM" | "SET" => {
                let members = self.members()?;
                let name = self.column_name_before(start);
                let mut seen: Vec<&Vec<u8>> = Vec::new();
                for m in &members {
                    if seen.iter().any(|s| {
                        crate::record::Collation::Latin1SwedishCi
                            .compare(s, m)
                            .is_eq()
                    }) {
                        return Err(SqlError::new(
                            1291,
                            format!(
                                "Column '{name}' has duplicated value '{}' in {kw}",
                                String::from_utf8_lossy(m)
                            ),
                        ));
                    }
                    seen.push(m);
                }
                let ty = if kw == "ENUM" {
                    if members.len() > 65_535 {
                        return Err(SqlError::new(
                            1097,
                            format!("Too many strings for column {name} and SET"),
                        ));
                    }
                    SqlType::Enum(members.len() as u16)
                } else {
                    if members.len() > 64 {
                        return Err(SqlError::new(
                            1097,
                            format!("Too many strings for column {name} and SET"),
                        ));
                    }
                    SqlType::Set(members.len() as u8)
                };
                let mut collation = None;
                while self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                    collation = Some(self.charset_clause(collation)?);
                }
                return Ok((ty, collation, members));
            }
            "BIT" | "BINARY" | "VARBINARY" => {
                return Err(SqlError::unsupported(&format!("the {kw} type")))
            }
            _ => {
                self.pos -= 1;
                return Err(self.err());
            }
        };
        let mut collation = None;
        while self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
            collation = Some(self.charset_clause(collation)?);
        }
        if self.eat_kw("BINARY") {
            return Err(SqlError::unsupported("BINARY string columns"));
        }
        if matches!(ty, SqlType::Decimal { .. } | SqlType::Float { .. })
            && (self.eat_kw("UNSIGNED") || self.eat_kw("ZEROFILL"))
        {
            return Err(SqlError::unsupported(
                "UNSIGNED or ZEROFILL on DECIMAL, FLOAT and DOUBLE",
            ));
        }
        Ok((ty, collation, Vec::new()))
    }

    pub(super) fn column_name_before(&self, type_pos: usize) -> String {
        match type_pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(Token {
                tok: Tok::Word { text, .. },
                ..
            }) => text.clone(),
            _ => String::new(),
        }
    }

    /// Table options, in any order, commas allowed between them. Returns
    /// whether any was read.
    pub(super) fn table_options(&mut self, o: &mut TableOptions) -> R<bool> {
        let mut any = false;
        loop {
            let save = self.pos;
            self.eat_kw("DEFAULT");
            if self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                let charset = self.is_kw("CHARACTER") || self.is_kw("CHARSET");
                let coll = self.charset_clause(o.collate)?;
                if charset {
                    o.charset = Some(coll.charset().into());
                    if o.collate.is_some_and(|c| c.charset() != coll.charset()) {
                        o.collate = None;
                    }
                } else {
                    o.collate = Some(coll);
                }
            } else if self.pos != save {
                self.pos = save;
                return Err(self.err());
            } else if self.eat_kw("ENGINE") || self.eat_kw("TYPE") {
                self.eat_op("=");
                o.engine = Some(self.ident_or_string()?);
            } else if self.eat_kw("ROW_FORMAT") {
                self.eat_op("=");
                let f = if self.eat_kw("DEFAULT") {
                    "DEFAULT".to_string()
                } else {
                    self.ident()?.to_ascii_uppercase()
                };
                if ![
                    "DEFAULT",
                    "DYNAMIC",
                    "FIXED",
                    "COMPRESSED",
                    "REDUNDANT",
                    "COMPACT",
                ]
                .contains(&f.as_str())
                {
                    self.pos -= 1;
                    return Err(self.err());
                }
                o.row_format = Some(f);
            } else if self.eat_kw("KEY_BLOCK_SIZE") {
                self.eat_op("=");
                o.key_block_size = Some(u32::try_from(self.number()?).unwrap_or(u32::MAX));
            } else if self.eat_kw("AUTO_INCREMENT") {
                self.eat_op("=");
                o.auto_increment = Some(self.number()?);
            } else if self.eat_kw("COMMENT") {
                self.eat_op("=");
                self.string()?;
            } else {
                return Ok(any);
            }
            any = true;
            if self.is_op(",") && !self.next_is_alter_op(1) {
                self.pos += 1;
            }
        }
    }

    /// Whether the token `k` ahead starts an ALTER TABLE operation (so a
    /// comma before it separates operations, not options).
    pub(super) fn next_is_alter_op(&self, k: usize) -> bool {
        self.is_kw_at(k, "ADD") || self.is_kw_at(k, "DROP") || self.is_kw_at(k, "ALGORITHM")
    }

    pub(super) fn drop(&mut self) -> R<Stmt> {
        if self.eat_kw("DATABASE") || self.eat_kw("SCHEMA") {
            let if_exists = self.if_exists()?;
            return Ok(Stmt::DropDatabase {
                name: self.ident()?,
                if_exists,
            });
        }
        if self.eat_kw("INDEX") {
            let name = self.ident()?;
            self.expect_kw("ON")?;
            let table = self.table_name()?;
            return Ok(Stmt::DropIndex { table, name });
        }
        self.eat_kw("TEMPORARY");
        self.expect_kw("TABLE")?;
        let if_exists = self.if_exists()?;
        let mut names = vec![self.table_name()?];
        while self.eat_op(",") {
            names.push(self.table_name()?);
        }
        if !self.eat_kw("RESTRICT") {
            self.eat_kw("CASCADE");
        }
        Ok(Stmt::DropTable { names, if_exists })
    }

    pub(super) fn alter(&mut self) -> R<Stmt> {
        self.expect_kw("TABLE")?;
        let table = self.table_name()?;
        let mut ops = Vec::new();
        let mut options = TableOptions::default();
        let mut algorithm = None;
        if self.eat_kw("RENAME") {
            if !self.eat_kw("TO") {
                self.eat_kw("AS");
            }
            let to = self.table_name()?;
            if self.is_op(",") {
                return Err(SqlError::unsupported(
                    "RENAME beside other changes in one ALTER TABLE",
                ));
            }
            return Ok(Stmt::RenameTable(vec![(table, to)]));
        }
        loop {
            if self.eat_kw("ADD") {
                if let Some(fk) = self.foreign_def()? {
                    ops.push(AlterOp::AddForeign(fk));
                } else if let Some(ix) = self.index_def()? {
                    ops.push(AlterOp::AddIndex(ix));
                } else {
                    self.eat_kw("COLUMN");
                    if self.eat_op("(") {
                        loop {
                            let spec = self.column_def()?;
                            ops.extend(column_keys(&spec));
                            ops.push(AlterOp::AddColumn(spec, ColumnPlace::Default));
                            if !self.eat_op(",") {
                                break;
                            }
                        }
                        self.expect_op(")")?;
                    } else {
                        let spec = self.column_def()?;
                        let place = self.column_place()?;
                        let keys = column_keys(&spec);
                        ops.push(AlterOp::AddColumn(spec, place));
                        ops.extend(keys);
                    }
                }
            } else if self.eat_kw("CHANGE") || self.eat_kw("MODIFY") {
                let modify = self.prev_is_kw("MODIFY");
                self.eat_kw("COLUMN");
                let old = if modify { None } else { Some(self.ident()?) };
                let spec = self.column_def()?;
                let place = self.column_place()?;
                let keys = column_keys(&spec);
                ops.push(AlterOp::ChangeColumn {
                    old: old.unwrap_or_else(|| spec.name.clone()),
                    spec,
                    place,
                });
                ops.extend(keys);
            } else if self.eat_kw("DROP") {
                if self.eat_kw("PRIMARY") {
                    self.expect_kw("KEY")?;
                    ops.push(AlterOp::DropPrimary);
                } else if self.eat_kw("INDEX") || self.eat_kw("KEY") {
                    ops.push(AlterOp::DropIndex(self.ident()?));
                } else if self.eat_kw("FOREIGN") {
                    self.expect_kw("KEY")?;
                    ops.push(AlterOp::DropForeign(self.ident()?));
                } else {
                    self.eat_kw("COLUMN");
                    ops.push(AlterOp::DropColumn(self.ident()?));
                }
            } else if self.eat_kw("ALGORITHM") {
                self.eat_op("=");
                algorithm = Some(if self.eat_kw("DEFAULT") {
                    Algorithm::Default
                } else if self.eat_kw("INPLACE") {
                    Algorithm::Inplace
                } else {
                    self.expect_kw("COPY")?;
                    Algorithm::Copy
                });
            } else if !self.table_options(&mut options)? {
                return Err(self.err());
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(Stmt::AlterTable {
            table,
            ops,
            options,
            algorithm,
        })
    }

    /// `[NO_WRITE_TO_BINLOG | LOCAL] TABLE t, ...` of ANALYZE and
    /// OPTIMIZE.
    pub(super) fn admin_tables(&mut self) -> R<Vec<TableName>> {
        if !self.eat_kw("NO_WRITE_TO_BINLOG") {
            self.eat_kw("LOCAL");
        }
        self.expect_kw("TABLE")?;
        let mut names = vec![self.table_name()?];
        while self.eat_op(",") {
            names.push(self.table_name()?);
        }
        Ok(names)
    }

    /// `FIRST`, `AFTER c`, or nothing.
    pub(super) fn column_place(&mut self) -> R<ColumnPlace> {
        Ok(if self.eat_kw("FIRST") {
            ColumnPlace::First
        } else if self.eat_kw("AFTER") {
            ColumnPlace::After(self.ident()?)
        } else {
            ColumnPlace::Default
        })
    }
}

/// The keys a column definition of ALTER TABLE declares on itself
/// (`ADD COLUMN c INT PRIMARY KEY`, `... UNIQUE`), as index additions.
pub(super) fn column_keys(spec: &ColumnSpec) -> Vec<AlterOp> {
    let key = |primary: bool| {
        AlterOp::AddIndex(IndexSpec {
            name: (!primary).then(|| spec.name.clone()),
            columns: vec![spec.name.clone()],
            prefixes: vec![None],
            unique: true,
            primary,
        })
    };
    let mut out = Vec::new();
    if spec.primary {
        out.push(key(true));
    }
    if spec.unique {
        out.push(key(false));
    }
    out
}
