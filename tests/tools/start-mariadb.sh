#!/usr/bin/env bash
# Starts a scratch MariaDB server for `innosim diff`: a new data directory
# under DIR, listening on 127.0.0.1:PORT (and DIR/mysqld.sock), root with an
# empty password (mysql_native_password), and InnoDB 5.1's defaults where
# MariaDB has the setting. Prints the server's URL once it answers; the
# server runs until `mariadb-admin -h127.0.0.1 -PPORT -uroot shutdown` (or
# kill $(cat DIR/mysqld.pid)). Usage: start-mariadb.sh DIR PORT
set -euo pipefail
dir=${1:?usage: start-mariadb.sh DIR PORT}
port=${2:?usage: start-mariadb.sh DIR PORT}
command -v mariadbd >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
command -v mariadbd >/dev/null || { echo "mariadbd is not installed (Debian: mariadb-server)" >&2; exit 3; }
mkdir -p "$dir/tmp"
dir=$(cd "$dir" && pwd)
# Each server's temporary files in its own directory: bootstraps running at
# once in one /tmp have failed (1051 Unknown table 'mysql.tmp_user_sys').
if [ ! -d "$dir/data/mysql" ]; then
    mariadb-install-db --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --user="$(id -un)" \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
        { cat "$dir/install.log" >&2; exit 1; }
fi
# --no-defaults: none of Debian's /etc/mysql settings (utf8mb4 among them);
# latin1 is the compiled default, as in MySQL 5.1.
mariadbd --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --user="$(id -un)" \
    --bind-address=127.0.0.1 --port="$port" --socket="$dir/mysqld.sock" \
    --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
    --skip-log-bin --innodb-buffer-pool-size=64M --innodb-log-file-size=48M \
    --innodb-strict-mode=OFF --innodb-default-row-format=compact --sql-mode='' \
    --innodb-snapshot-isolation=OFF --innodb-deadlock-detect=ON \
    --innodb-lock-wait-timeout=50 --max-connections=200 \
    --optimizer-switch=extended_keys=off \
    --character-set-server=latin1 --collation-server=latin1_swedish_ci \
    >"$dir/stdout.log" 2>&1 &
for _ in $(seq 1 300); do
    if mariadb-admin --no-defaults -h127.0.0.1 -P"$port" -uroot ping >/dev/null 2>&1; then
        echo "mysql://root@127.0.0.1:$port"
        exit 0
    fi
    sleep 0.1
done
echo "mariadbd did not answer on port $port; its log:" >&2
tail -20 "$dir/error.log" >&2
exit 1
