# ranks: 2 4
# SPDX-License-Identifier: MIT
# The nap words the ranks of a host share (chan/wake.c) cannot be taken
# over or pulled away by anyone else:
# - no name to create first: objects planted in /dev/shm under every name
#   the job could have used (/mplua-<pid>-<port> of the host's first rank:
#   the job runs in PID and network namespaces of its own, where its pids
#   and ports are few and known, with a /dev/shm of its own) are left as
#   they were, and the job runs;
# - nobody can resize them under the job (a truncated mapping kills a rank
#   with SIGBUS): truncating each rank's mapping of them (as root, through
#   /proc/PID/map_files) fails, and the ranks go on napping and waking
#   each other.
# Needs root (namespaces, /proc/PID/map_files): SKIPPED otherwise (status 77, which ctest shows as skipped).
set -eu
N=${1:?usage: $0 RANKS}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (namespaces, /proc/PID/map_files)"; exit 77; }
command -v unshare >/dev/null && command -v ip >/dev/null || { echo "SKIPPED: needs unshare and ip"; exit 77; }

cp "$here/lib/ring.lua" . # a task where every rank naps and is woken, many times

# 1. planted names: inside the namespaces pids come in turn from 1 and ports
# from 40000-40099, so /mplua-<pid>-<port> for the next pids and all those
# ports covers a name made of the host's first rank's pid and wake-up port.
cat >plant.sh <<'SH'
set -eu
mount -t tmpfs -o mode=1777 shm /dev/shm
ip link set lo up
sysctl -qw net.ipv4.ip_local_port_range="40000 40099"
# (the port as such a name would carry it: in network byte order)
ports=$(for p in $(seq 40000 40099); do echo $(((p & 255) << 8 | p >> 8)); done)
next=$(sh -c 'echo $$') # pids are given in turn: the job's come a few after this one
pid=$((next + 1))
while [ "$pid" -le $((next + 30)) ]; do # (builtins only: no pid is used)
  for port in $ports; do printf x >"/dev/shm/mplua-$pid-$port"; done
  pid=$((pid + 1))
done
chown nobody /dev/shm/mplua-*
chmod 666 /dev/shm/mplua-*
before=$(ls /dev/shm | grep -c '^mplua-')
status=0
"$MPIEXEC" -n "$N" "$MPLUA" -e 'print("ring", dofile("ring.lua")(100))' >out 2>err || status=$?
after=$(find /dev/shm -maxdepth 1 -name 'mplua-*' -user nobody -size 1c | wc -l)
echo "planted $before, intact $after, status $status"
SH
MPLUA=$MPLUA MPIEXEC=$MPIEXEC N=$N unshare --pid --net --mount --fork --mount-proc sh plant.sh >verdict 2>&1 ||
  { cat verdict >&2; fail "the namespaced run failed"; }
grep -qx "planted 3000, intact 3000, status 0" verdict ||
  { cat verdict out err >&2; fail "a planted object was adopted or the job failed"; }
[ "$(cat out)" = "ring	$((100 * 101 / 2))" ] || { cat out err >&2; fail "the ring among planted names"; }

# 2. truncating the mappings
mkfifo cmds
"$MPIEXEC" -n "$N" "$MPLUA" <cmds >out 2>err &
job=$!
exec 3>cmds
wait_for() { # PATTERN: in out (after the prompts rank 0 writes)
  local end=$((SECONDS + 120))
  until grep -q "$1" out; do
    kill -0 "$job" 2>/dev/null || { cat out err >&2; fail "the job ended waiting for '$1'"; }
    [ "$SECONDS" -lt "$end" ] || fail "timed out waiting for '$1'"
    sleep 0.1
  done
}
echo 'ring = dofile("ring.lua") print("pids", table.concat(mp.exec(function() return mp.gather(io.open("/proc/self/stat"):read("n")) end), " "))' >&3
wait_for 'pids'
pids=$(sed -n 's/.*pids\t//p' out)
[ "$(echo $pids | wc -w)" = "$N" ] || fail "pids: '$pids'"
mapped=0 truncated=0
for pid in $pids; do
  for range in $(awk '/mplua/ && $2 ~ /^rw.s/ {print $1}' "/proc/$pid/maps"); do
    mapped=$((mapped + 1))
    if truncate -s 0 "/proc/$pid/map_files/$range" 2>/dev/null; then truncated=$((truncated + 1)); fi
  done
done
[ "$N" = 1 ] || [ "$mapped" -ge "$N" ] || fail "found $mapped mappings of nap words for $N ranks"
echo 'print("ring", ring(200))' >&3
wait_for 'ring'
[ "$(sed -n 's/.*ring\t//p' out)" = "$((200 * 201 / 2))" ] || { cat out err >&2; fail "the ring after the truncation"; }
[ "$truncated" = 0 ] || fail "$truncated of $mapped mappings could be truncated"
exec 3>&-
wait "$job" || fail "the job's exit status $?"
echo "ok ($N): 3000 planted names left alone, $mapped mappings of nap words not truncated"
