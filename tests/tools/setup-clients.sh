#!/usr/bin/env bash
# Installs the real MySQL clients the tests drive innosim serve with, when
# missing: the mariadb command-line client and sysbench from Debian's
# packages, PyMySQL from PyPI; and the real server innosim diff compares
# innosim with (mariadb-server: tests/diff_mariadb.rs starts its mariadbd
# on a scratch directory); and Debian's Chromium, which renders innosim
# report's page in tests/report.rs; and Slurm with munge, which runs a
# campaign's shards in tests/campaign.rs. Part of the README's test command (and so of
# .ci/run); fails loudly rather than letting a test skip.
set -euo pipefail
need_apt=()
command -v mariadb >/dev/null 2>&1 || need_apt+=(mariadb-client)
command -v sysbench >/dev/null 2>&1 || need_apt+=(sysbench)
{ command -v mariadbd || [ -x /usr/sbin/mariadbd ]; } >/dev/null 2>&1 || need_apt+=(mariadb-server)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# A one-host Slurm for tests/campaign.rs (tests/tools/start-slurm.sh).
command -v sbatch >/dev/null 2>&1 || need_apt+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || need_apt+=(munge)
if ((${#need_apt[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -q "${need_apt[@]}" >/dev/null 2>&1 ||
        { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi
python3 -c 'import pymysql' 2>/dev/null || python3 -m pip install -q 'PyMySQL==1.1.1'
command -v mariadb >/dev/null && command -v sysbench >/dev/null && python3 -c 'import pymysql' &&
    { command -v mariadbd || [ -x /usr/sbin/mariadbd ]; } >/dev/null && [ -x /usr/bin/chromium ] &&
    command -v sbatch >/dev/null && [ -x /usr/sbin/munged ] && [ -x /usr/sbin/slurmd ]
