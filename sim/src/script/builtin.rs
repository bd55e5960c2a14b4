//! The files of `mysql-test/include/` and `mysql-test/r/` that tests
//! source or require and that innosim answers itself: the capability
//! checks ask the server what it is (so a server without InnoDB, or with
//! an embedded library, or without ucs2, fails them as MySQL's would), and
//! the waiting helpers poll on the simulated clock. These are innosim's
//! own texts in mysqltest's language, not copies of MySQL's files; a suite
//! directory's own file of the same name comes first.

/// A built-in include file's text, by its path as tests write it.
pub(super) fn include(path: &str) -> Option<&'static str> {
    let name = path.trim_start_matches("./");
    Some(match name {
        "include/have_innodb.inc" => {
            "--disable_query_log\n\
             --require r/true.require\n\
             select (support = 'YES' or support = 'DEFAULT' or support = 'ENABLED') as `TRUE` \
             from information_schema.engines where engine = 'innodb';\n\
             --enable_query_log\n"
        }
        "include/have_innodb_plugin.inc" | "suite/innodb/include/have_innodb_plugin.inc" => {
            "--disable_query_log\n\
             --require r/true.require\n\
             select (PLUGIN_LIBRARY LIKE 'ha_innodb_plugin%') as `TRUE` \
             from information_schema.plugins where PLUGIN_NAME='InnoDB';\n\
             --enable_query_log\n"
        }
        "include/not_embedded.inc" => {
            "--require r/not_embedded.require\n\
             --disable_query_log\n\
             select version() like '%embedded%' as 'have_embedded';\n\
             --enable_query_log\n"
        }
        "include/have_ucs2.inc" => {
            "--require r/have_ucs2.require\n\
             --disable_query_log\n\
             show collation like 'ucs2_general_ci';\n\
             --enable_query_log\n"
        }
        "include/have_utf8.inc" => {
            "--require r/have_utf8.require\n\
             --disable_query_log\n\
             show collation like 'utf8_general_ci';\n\
             --enable_query_log\n"
        }
        // Polls $wait_condition every 0.1 simulated seconds, for
        // $wait_timeout seconds (30 when unset).
        "include/wait_condition.inc" => {
            "--disable_query_log\n\
             let $wait_counter= 300;\n\
             if ($wait_timeout)\n{\n  let $wait_counter= `SELECT $wait_timeout * 10`;\n}\n\
             let $wait_timeout= 0;\n\
             while ($wait_counter)\n{\n\
               let $success= `$wait_condition`;\n\
               if ($success)\n{\nlet $wait_counter= 0;\n}\n\
               if (!$success)\n{\nreal_sleep 0.1;\ndec $wait_counter;\n}\n\
             }\n\
             if (!$success)\n{\necho Timeout in wait_condition.inc for $wait_condition;\n}\n\
             --enable_query_log\n"
        }
        "include/wait_until_rows_count.inc" => {
            "let $wait_condition= select count(*) = $count from $table;\n\
             --source include/wait_condition.inc\n"
        }
        // innosim's clean restart: the server shuts down and starts again
        // on the same disk.
        "include/restart_mysqld.inc" => "--restart\n",
        _ => return None,
    })
}

/// A built-in `--require` file's text.
pub(super) fn require(path: &str) -> Option<&'static str> {
    Some(match path.trim_start_matches("./") {
        "r/true.require" => "TRUE\n1\n",
        "r/not_embedded.require" => "have_embedded\n0\n",
        "r/have_ucs2.require" => {
            "Collation\tCharset\tId\tDefault\tCompiled\tSortlen\n\
             ucs2_general_ci\tucs2\t35\tYes\tYes\t1\n"
        }
        "r/have_utf8.require" => {
            "Collation\tCharset\tId\tDefault\tCompiled\tSortlen\n\
             utf8_general_ci\tutf8\t33\tYes\tYes\t1\n"
        }
        _ => return None,
    })
}
