#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, to try profiles/slurm before a site's cluster (and
# what tests/test_slurm.py runs the demo on). Needs root and Debian's slurm-wlm and munge
# (apt-get install -y slurm-wlm munge).
#
#   tests/slurm/one_node_cluster.sh up STATE_DIR     # munged, slurmctld, slurmd; partitions cpu and gpu
#   tests/slurm/one_node_cluster.sh down STATE_DIR   # cancels the jobs, stops the daemons, removes the config
#
# The node says it has 16 CPUs, 128 GB and four GPUs whatever the machine has (SlurmdParameters=
# config_overrides), like a GPU node the profile is written for; the GPUs are counted, not real
# (gres.conf names four character devices that every machine has as their device files), and a
# job that asks for one gets its CUDA_VISIBLE_DEVICES. Without
# slurmdbd there is no accounting: sacct has nothing to say, so jobs are followed with squeue and
# read back with `scontrol show job -d` (completed jobs stay an hour, MinJobAge).
set -euo pipefail

action=${1:?up or down}
state=$(realpath -m "${2:?a state directory}")
conf_dir=/etc/slurm  # where srun inside a job looks: Snakemake's SLURM plugin clears SLURM_CONF there
conf=$conf_dir/slurm.conf
marker="# knowprobe one-node test cluster"

case $action in
up)
    if [ -e "$conf" ] && ! grep -q "$marker" "$conf"; then
        echo "$conf exists and is not this script's: a SLURM is configured here already" >&2
        exit 3
    fi
    mkdir -p "$state"/munge "$state"/spool "$state"/state "$state"/log "$conf_dir"
    dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
    chmod 600 "$state/munge/munge.key"
    munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.socket" \
        --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" \
        --seed-file="$state/munge/munged.seed"
    host=$(hostname -s)
    cat >"$conf" <<EOF
$marker (state in $state)
ClusterName=knowprobe
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$state/state
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
MinJobAge=3600
JobCompType=jobcomp/filetxt
JobCompLoc=$state/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
# memory limits are enforced by sampling each job's memory every second
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=task=1
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=16 RealMemory=128000 Gres=gpu:4 State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host MaxTime=INFINITE State=UP
EOF
    # four character devices that exist everywhere stand for the GPUs' device files
    for device in /dev/null /dev/zero /dev/full /dev/urandom; do
        echo "Name=gpu File=$device"
    done >"$conf_dir/gres.conf"
    slurmctld
    slurmd
    for _ in $(seq 60); do
        if sinfo -h -o %T 2>/dev/null | grep -q idle; then
            sinfo
            exit 0
        fi
        sleep 0.5
    done
    echo "the cluster did not come up: see $state/log/" >&2
    exit 1
    ;;
down)
    scancel --user="$(id -un)" 2>/dev/null || true
    scontrol shutdown 2>/dev/null || true
    for pid_file in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munge/munged.pid"; do
        [ -e "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
    done
    if [ -e "$conf" ] && grep -q "$marker" "$conf"; then
        rm -f "$conf" "$conf_dir/gres.conf"
    fi
    ;;
*)
    echo "usage: $0 up|down STATE_DIR" >&2
    exit 2
    ;;
esac
