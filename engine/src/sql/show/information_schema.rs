//! The information_schema tables, InnoDB's INNODB_* among them (`i_s.cc`).

use super::*;

impl Server {
    /// Each table the server made: its engine name, database, name and
    /// engine definition.
    fn server_tables(&self) -> Vec<(String, String, String, crate::dict::TableDef)> {
        self.metas
            .keys()
            .filter_map(|name| {
                let (d, t) = split_name(name)?;
                let def = self.engine.table(name).ok()?.def.clone();
                Some((name.clone(), d, t, def))
            })
            .collect()
    }

    /// The rows of an information_schema table.
    pub(crate) fn information_schema(
        &mut self,
        c: ConnId,
        table: &str,
    ) -> R<(Vec<String>, Vec<Vec<Datum>>)> {
        let opt_str = |s: &Option<String>| s.as_deref().map_or(Datum::Null, Datum::str);
        let opt_int = |v: Option<u64>| v.map_or(Datum::Null, int);
        let names = |cols: &[&str]| cols.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = |e: crate::Error| SqlError::from_engine(&e, crate::sql::DEFAULT_DB);
        let lower = table.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "innodb_trx" => {
                let queries: std::collections::BTreeMap<u32, String> = self
                    .conns
                    .values()
                    .filter_map(|x| x.query.clone().map(|q| (x.session, q)))
                    .collect();
                let rows = self
                    .engine
                    .innodb_trx()
                    .map_err(e)?
                    .into_iter()
                    .map(|t| {
                        vec![
                            Datum::str(&t.trx_id),
                            Datum::str(&t.trx_state),
                            int(t.trx_started / 1_000_000),
                            opt_str(&t.trx_requested_lock_id),
                            opt_int(t.trx_wait_started.map(|w| w / 1_000_000)),
                            int(t.trx_weight),
                            int(self.thread_id(t.trx_mysql_thread_id)),
                            queries
                                .get(&t.trx_mysql_thread_id)
                                .map_or(Datum::Null, |q| Datum::str(q)),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "trx_id",
                        "trx_state",
                        "trx_started",
                        "trx_requested_lock_id",
                        "trx_wait_started",
                        "trx_weight",
                        "trx_mysql_thread_id",
                        "trx_query",
                    ]),
                    rows,
                )
            }
            "innodb_locks" => {
                // Names are quoted as the connection quotes identifiers
                // (`innobase_convert_identifier`: `"` under ANSI_QUOTES).
                let q = if self.conn(c).sql_mode.ansi_quotes {
                    '"'
                } else {
                    '`'
                };
                let rows = self
                    .engine
                    .innodb_locks()
                    .map_err(e)?
                    .into_iter()
                    .map(|l| {
                        vec![
                            Datum::str(&l.lock_id),
                            Datum::str(&l.lock_trx_id),
                            Datum::str(&l.lock_mode),
                            Datum::str(&l.lock_type),
                            Datum::str(&display_table(&l.lock_table, q)),
                            l.lock_index
                                .as_deref()
                                .map_or(Datum::Null, |i| Datum::str(&quote_in(unquoted(i), q))),
                            opt_int(l.lock_space.map(u64::from)),
                            opt_int(l.lock_page.map(u64::from)),
                            opt_int(l.lock_rec.map(u64::from)),
                            opt_str(&l.lock_data),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "lock_id",
                        "lock_trx_id",
                        "lock_mode",
                        "lock_type",
                        "lock_table",
                        "lock_index",
                        "lock_space",
                        "lock_page",
                        "lock_rec",
                        "lock_data",
                    ]),
                    rows,
                )
            }
            "innodb_lock_waits" => {
                let rows = self
                    .engine
                    .innodb_lock_waits()
                    .map_err(e)?
                    .into_iter()
                    .map(|w| {
                        vec![
                            Datum::str(&w.requesting_trx_id),
                            Datum::str(&w.requested_lock_id),
                            Datum::str(&w.blocking_trx_id),
                            Datum::str(&w.blocking_lock_id),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "requesting_trx_id",
                        "requested_lock_id",
                        "blocking_trx_id",
                        "blocking_lock_id",
                    ]),
                    rows,
                )
            }
            "innodb_cmp" | "innodb_cmp_reset" => {
                let rows = if lower == "innodb_cmp" {
                    self.engine.innodb_cmp()
                } else {
                    self.engine.innodb_cmp_reset()
                };
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        vec![
                            int(u64::from(r.page_size)),
                            int(r.compress_ops),
                            int(r.compress_ops_ok),
                            int(r.compress_time),
                            int(r.uncompress_ops),
                            int(r.uncompress_time),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "page_size",
                        "compress_ops",
                        "compress_ops_ok",
                        "compress_time",
                        "uncompress_ops",
                        "uncompress_time",
                    ]),
                    rows,
                )
            }
            "innodb_cmpmem" | "innodb_cmpmem_reset" => {
                let rows = if lower == "innodb_cmpmem" {
                    self.engine.innodb_cmpmem()
                } else {
                    self.engine.innodb_cmpmem_reset()
                };
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        vec![
                            int(u64::from(r.page_size)),
                            int(r.pages_used),
                            int(r.pages_free),
                            int(r.relocation_ops),
                            int(r.relocation_time),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "page_size",
                        "pages_used",
                        "pages_free",
                        "relocation_ops",
                        "relocation_time",
                    ]),
                    rows,
                )
            }
            "tables" => {
                let mut rows = Vec::new();
                let dbs: Vec<(String, String)> = self
                    .metas
                    .keys()
                    .filter_map(|n| split_name(n).map(|(d, t)| (d.to_string(), t.to_string())))
                    .collect();
                for (d, t) in dbs {
                    let mut r = vec![Datum::Null, Datum::str(&d)];
                    r.extend(self.status_row(&d, &t)?);
                    rows.push(r);
                }
                let mut cols = vec!["TABLE_CATALOG", "TABLE_SCHEMA"];
                cols.extend(STATUS_COLUMNS.iter().map(|c| match *c {
                    "Name" => "TABLE_NAME",
                    "Engine" => "ENGINE",
                    "Version" => "VERSION",
                    "Row_format" => "ROW_FORMAT",
                    "Rows" => "TABLE_ROWS",
                    "Avg_row_length" => "AVG_ROW_LENGTH",
                    "Data_length" => "DATA_LENGTH",
                    "Max_data_length" => "MAX_DATA_LENGTH",
                    "Index_length" => "INDEX_LENGTH",
                    "Data_free" => "DATA_FREE",
                    "Auto_increment" => "AUTO_INCREMENT",
                    "Create_time" => "CREATE_TIME",
                    "Update_time" => "UPDATE_TIME",
                    "Check_time" => "CHECK_TIME",
                    "Collation" => "TABLE_COLLATION",
                    "Checksum" => "CHECKSUM",
                    "Create_options" => "CREATE_OPTIONS",
                    _ => "TABLE_COMMENT",
                }));
                (names(&cols), rows)
            }
            // The columns of each table's PRIMARY and UNIQUE keys and of
            // its FOREIGN KEY constraints (sql_show.cc's
            // get_schema_key_column_usage_record), the constraints' rows
            // naming their parent columns.
            "key_column_usage" => {
                let mut rows = Vec::new();
                for (name, d, t, def) in self.server_tables() {
                    let def = &def;
                    let meta = &self.metas[&name];
                    let col = |c: usize| {
                        Datum::str(
                            meta.columns
                                .get(c)
                                .map_or(&def.columns[c].name, |m| &m.name),
                        )
                    };
                    let mut key = |cname: &str, cols: &[usize], refs: Option<(&str, &[String])>| {
                        for (i, &c) in cols.iter().enumerate() {
                            let (rs, rt, rc, pos) = match refs {
                                Some((parent, pcols)) => {
                                    let (pd, pt) = split_name(parent)
                                        .unwrap_or((d.clone(), parent.to_string()));
                                    (
                                        Datum::str(&pd),
                                        Datum::str(&pt),
                                        Datum::str(&pcols[i]),
                                        int(i as u64 + 1),
                                    )
                                }
                                None => (Datum::Null, Datum::Null, Datum::Null, Datum::Null),
                            };
                            rows.push(vec![
                                Datum::Null,
                                Datum::str(&d),
                                Datum::str(cname),
                                Datum::Null,
                                Datum::str(&d),
                                Datum::str(&t),
                                col(c),
                                int(i as u64 + 1),
                                pos,
                                rs,
                                rt,
                                rc,
                            ]);
                        }
                    };
                    if !def.primary_key.is_empty() {
                        key("PRIMARY", &def.primary_key, None);
                    }
                    for ix in def.indexes.iter().filter(|ix| ix.unique) {
                        key(&ix.name, &ix.columns, None);
                    }
                    for fk in &def.foreign {
                        key(&fk.id, &fk.columns, Some((&fk.parent, &fk.parent_columns)));
                    }
                }
                (
                    names(&[
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "COLUMN_NAME",
                        "ORDINAL_POSITION",
                        "POSITION_IN_UNIQUE_CONSTRAINT",
                        "REFERENCED_TABLE_SCHEMA",
                        "REFERENCED_TABLE_NAME",
                        "REFERENCED_COLUMN_NAME",
                    ]),
                    rows,
                )
            }
            // One row a constraint: its kind, rules and parent
            // (get_schema_constraints_record, get_referential_constraints_record).
            "table_constraints" | "referential_constraints" => {
                let referential = lower == "referential_constraints";
                let mut rows = Vec::new();
                for (_, d, t, def) in self.server_tables() {
                    let def = &def;
                    if !referential {
                        let mut row = |cname: &str, kind: &str| {
                            rows.push(vec![
                                Datum::Null,
                                Datum::str(&d),
                                Datum::str(cname),
                                Datum::str(&d),
                                Datum::str(&t),
                                Datum::str(kind),
                            ])
                        };
                        if !def.primary_key.is_empty() {
                            row("PRIMARY", "PRIMARY KEY");
                        }
                        for ix in def.indexes.iter().filter(|ix| ix.unique) {
                            row(&ix.name, "UNIQUE");
                        }
                        for fk in &def.foreign {
                            row(&fk.id, "FOREIGN KEY");
                        }
                        continue;
                    }
                    let rule =
                        |a: crate::dict::FkAction| Datum::str(a.clause().unwrap_or("RESTRICT"));
                    for fk in &def.foreign {
                        let (pd, pt) =
                            split_name(&fk.parent).unwrap_or((d.clone(), fk.parent.clone()));
                        // The parent's key the constraint matches, if it has one.
                        let unique = self.engine.table(&fk.parent).ok().and_then(|p| {
                            let cols: Option<Vec<usize>> =
                                fk.parent_columns.iter().map(|n| p.def.column(n)).collect();
                            match p.def.find_index(&cols?)? {
                                None => Some("PRIMARY".to_string()),
                                Some(i) => Some(p.def.indexes[i].name.clone()),
                            }
                        });
                        rows.push(vec![
                            Datum::Null,
                            Datum::str(&d),
                            Datum::str(&fk.id),
                            Datum::Null,
                            Datum::str(&pd),
                            unique.map_or(Datum::Null, |u| Datum::str(&u)),
                            Datum::str("NONE"),
                            rule(fk.on_update),
                            rule(fk.on_delete),
                            Datum::str(&t),
                            Datum::str(&pt),
                        ]);
                    }
                }
                let cols: &[&str] = if referential {
                    &[
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "UNIQUE_CONSTRAINT_CATALOG",
                        "UNIQUE_CONSTRAINT_SCHEMA",
                        "UNIQUE_CONSTRAINT_NAME",
                        "MATCH_OPTION",
                        "UPDATE_RULE",
                        "DELETE_RULE",
                        "TABLE_NAME",
                        "REFERENCED_TABLE_NAME",
                    ]
                } else {
                    &[
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "CONSTRAINT_TYPE",
                    ]
                };
                (names(cols), rows)
            }
            // The one storage engine there is.
            "engines" => (
                names(&[
                    "ENGINE",
                    "SUPPORT",
                    "COMMENT",
                    "TRANSACTIONS",
                    "XA",
                    "SAVEPOINTS",
                ]),
                vec![vec![
                    Datum::str("InnoDB"),
                    Datum::str("DEFAULT"),
                    Datum::str(INNODB_COMMENT),
                    Datum::str("YES"),
                    Datum::str("YES"),
                    Datum::str("YES"),
                ]],
            ),
            // The InnoDB Plugin's storage engine and its information_schema
            // tables, as the plugin declares them (ha_innodb.cc's
            // mysql_declare_plugin, i_s.cc).
            "plugins" => {
                let plugin = |name: &str, kind: &str, descr: &str| {
                    vec![
                        Datum::str(name),
                        Datum::str("1.0"),
                        Datum::str("ACTIVE"),
                        Datum::str(kind),
                        Datum::str("50145.0"),
                        Datum::str("ha_innodb_plugin.so"),
                        Datum::str("1.0"),
                        Datum::str("Innobase Oy"),
                        Datum::str(descr),
                        Datum::str("GPL"),
                    ]
                };
                let mut rows = vec![plugin("InnoDB", "STORAGE ENGINE", INNODB_COMMENT)];
                for (n, d) in [
                    ("INNODB_TRX", "InnoDB transactions"),
                    ("INNODB_LOCKS", "InnoDB conflicting locks"),
                    ("INNODB_LOCK_WAITS", "InnoDB which lock is blocking which"),
                    ("INNODB_CMP", "Statistics for the InnoDB compression"),
                    (
                        "INNODB_CMP_RESET",
                        "Statistics for the InnoDB compression; reset cumulated counts",
                    ),
                    (
                        "INNODB_CMPMEM",
                        "Statistics for the InnoDB compressed buffer pool",
                    ),
                    (
                        "INNODB_CMPMEM_RESET",
                        "Statistics for the InnoDB compressed buffer pool; reset cumulated counts",
                    ),
                ] {
                    rows.push(plugin(n, "INFORMATION SCHEMA", d));
                }
                (
                    names(&[
                        "PLUGIN_NAME",
                        "PLUGIN_VERSION",
                        "PLUGIN_STATUS",
                        "PLUGIN_TYPE",
                        "PLUGIN_TYPE_VERSION",
                        "PLUGIN_LIBRARY",
                        "PLUGIN_LIBRARY_VERSION",
                        "PLUGIN_AUTHOR",
                        "PLUGIN_DESCRIPTION",
                        "PLUGIN_LICENSE",
                    ]),
                    rows,
                )
            }
            _ => {
                let _ = c;
                return Err(SqlError::no_such_table("information_schema", table));
            }
        })
    }
}
