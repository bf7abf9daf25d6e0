#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, from Debian's packages (munge,
# slurmctld, slurmd), for the Slurm provisioner's tests and for trying it out.
#
#   slurm_local.sh start    start munged, slurmctld and slurmd (idempotent)
#   slurm_local.sh stop     cancel its jobs, stop exactly the daemons it
#                           started, remove its state directory
#   slurm_local.sh status   running or not (exit 0 when the node is up)
#   slurm_local.sh env      the line to eval so sbatch/squeue find it
#
# Everything lives in one state directory ($OPENAI4S_SLURM_STATE, default
# ${TMPDIR:-/tmp}/openai4s-slurm): the munge key and socket, a slurm.conf
# generated for this host's name, cores and memory, the daemons' spool, logs
# and pid files. No systemd, no /etc/slurm: clients find the cluster through
# $SLURM_CONF. Process tracking is linuxproc, so no cgroup set-up is needed.
set -euo pipefail

state="${OPENAI4S_SLURM_STATE:-${TMPDIR:-/tmp}/openai4s-slurm}"
ctld_port="${OPENAI4S_SLURM_PORT:-16817}"
conf="$state/slurm.conf"
node="$(hostname -s)"
export SLURM_CONF="$conf"

die() {
  echo "slurm_local: $*" >&2
  exit 1
}

# The pid in $1 when that process is alive and runs the program $2 (a stale
# pid file, or a reused pid, names someone else's process: never signal it).
live_pid() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  case "$(cat "/proc/$pid/comm")" in "$2"*) echo "$pid" ;; *) return 1 ;; esac
}

node_up() {
  local st
  st="$(sinfo -h -n "$node" -o %T 2>/dev/null | head -1)" || return 1
  case "$st" in idle* | mixed* | allocated*) return 0 ;; *) return 1 ;; esac
}

write_conf() {
  local cpus mem
  cpus="$(nproc)"
  mem="$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)"
  # Kernels mostly wait for their user: a test cluster offers each core four
  # times (config_overrides lets slurmd accept more CPUs than it counts), so
  # three kernels on a two-core machine are three running jobs. Memory is the
  # host's less 1 GiB for the daemons.
  cat >"$conf" <<EOF
ClusterName=openai4s
SlurmctldHost=$node
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool/%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$state/log/jobcomp.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
# Seconds, not the production minutes: a cancelled or timed-out kernel is
# gone in seconds, and an ended job's record stays long enough to be read.
KillWait=3
MinJobAge=600
SlurmdTimeout=30
InactiveLimit=0
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$((cpus * 4)) RealMemory=$((mem > 2048 ? mem - 1024 : mem)) State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE DefMemPerCPU=256 State=UP
EOF
}

start_munge() {
  if live_pid "$state/munge/munged.pid" munged >/dev/null; then return; fi
  mkdir -p "$state/munge"
  chmod 0700 "$state/munge"
  if [ ! -s "$state/munge/munge.key" ]; then
    (umask 077 && head -c 1024 /dev/urandom >"$state/munge/munge.key")
  fi
  chmod 0400 "$state/munge/munge.key"
  # --force: as root (as in this project's CI) munged refuses without it.
  munged --force --key-file="$state/munge/munge.key" \
    --socket="$state/munge/munge.socket" --pid-file="$state/munge/munged.pid" \
    --log-file="$state/log/munged.log" --seed-file="$state/munge/munged.seed"
}

start() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null ||
    die "slurmctld, slurmd and munged are needed (apt-get install slurmctld slurmd slurm-client munge)"
  mkdir -p "$state/log" "$state/ctld" "$state/spool"
  local fresh=""
  live_pid "$state/slurmctld.pid" slurmctld >/dev/null || fresh=yes
  # A cluster that is not running starts afresh: the config for this host
  # as it is now, no jobs from an earlier run (-c), no stale munge socket.
  if [ -n "$fresh" ]; then
    write_conf
    live_pid "$state/munge/munged.pid" munged >/dev/null || rm -f "$state/munge/munge.socket"*
  fi
  start_munge
  if [ -n "$fresh" ]; then
    slurmctld -c -i || die "slurmctld did not start; see $state/log/slurmctld.log"
  fi
  if ! live_pid "$state/slurmd.pid" slurmd >/dev/null; then
    slurmd -N "$node" || die "slurmd did not start; see $state/log/slurmd.log"
  fi
  for _ in $(seq 1 100); do
    if node_up; then
      echo "slurm_local: node $node up ($conf)"
      return
    fi
    sleep 0.2
  done
  die "node $node did not come up in 20 s; see $state/log/"
}

stop_daemon() {
  local pid
  pid="$(live_pid "$1" "$2")" || return 0
  kill -TERM "$pid"
  for _ in $(seq 1 50); do
    [ -d "/proc/$pid" ] || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  [ -d "$state" ] || {
    echo "slurm_local: not running"
    return
  }
  if live_pid "$state/slurmctld.pid" slurmctld >/dev/null; then
    scancel --full --quiet --partition=debug 2>/dev/null || true
    for _ in $(seq 1 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_daemon "$state/slurmd.pid" slurmd
  stop_daemon "$state/slurmctld.pid" slurmctld
  stop_daemon "$state/munge/munged.pid" munged
  rm -rf "$state"
  echo "slurm_local: stopped"
}

status() {
  if live_pid "$state/slurmctld.pid" slurmctld >/dev/null && node_up; then
    echo "slurm_local: running, node $node, SLURM_CONF=$conf"
    sinfo
    return 0
  fi
  echo "slurm_local: not running"
  return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *)
    echo "usage: slurm_local.sh start|stop|status|env" >&2
    exit 2
    ;;
esac
