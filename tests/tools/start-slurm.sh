#!/usr/bin/env bash
# Starts a one-host Slurm cluster in DIR for tests/campaign.rs: munged with
# a fresh key, slurmctld and slurmd in the foreground (as background jobs
# of this script's caller, which kills them), on ports PORT and PORT+1 and
# a munge socket of their own, so that nothing clashes with a system
# Slurm. Writes DIR/slurm.conf (pass it as SLURM_CONF) and waits until the
# node is idle. Usage: start-slurm.sh DIR PORT
set -euo pipefail
dir=$(realpath -m "$1")
port=$2
host=$(hostname -s)
mkdir -p "$dir"/{state,spool,munge,log}
head -c 1024 /dev/urandom > "$dir/munge/munge.key"
chmod 600 "$dir/munge/munge.key"
cat > "$dir/slurm.conf" <<CONF
ClusterName=innosim
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
munged -F -f --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/log/munged.log" --pid-file="$dir/munge/munged.pid" \
    --seed-file="$dir/munge/seed" > "$dir/log/munged.out" 2>&1 &
for _ in $(seq 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
slurmd -D -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1 &
for _ in $(seq 300); do
    sinfo -h -o %t 2>/dev/null | grep -qx idle && exit 0
    sleep 0.1
done
echo "start-slurm: the node never came up idle; logs in $dir/log" >&2
exit 1
