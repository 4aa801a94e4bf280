# ranks: 2 4
# SPDX-License-Identifier: MIT
# What a job on one host exposes through its own sockets (chan/wake.c,
# interp/front.c), tried as another local program would:
# - the front end listens on 127.0.0.1 only, and the ranks' wake-up sockets
#   are bound to 127.0.0.1 only (read from /proc/PID/net/* for each one's
#   sockets);
# - clients that connect to the front end's port first (three that say
#   nothing, one with a wrong token, one with half a line) do not stop the
#   job from starting: the launcher (a wrapper around mpiexec) makes them
#   before any rank runs, and holds them until the job ends;
# - datagrams sent to the idle workers' wake-up ports from a socket of
#   another program (empty ones too) are drained and refused, never counted
#   as wake-ups: mp.stats().wakeups_refused grows by exactly what was sent
#   (less what the kernel dropped), mp.stats().wakeups by less than that.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; echo "--- out:" >&2; cat out >&2; echo "--- err:" >&2; cat err >&2; exit 1; }
K=100 # datagrams to each rank (half of them empty): well within a socket's buffer

# socks PID: one line per socket of PID: proto, local address:port (hex, as
# /proc/net/* writes them), state, tx:rx queue, drops (UDP)
cat >socks.sh <<'SH'
socks() {
  local inodes proto
  inodes=" $(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n' | tr '\n' ' ') "
  for proto in udp udp6 tcp tcp6; do
    awk -v proto="$proto" -v inodes="$inodes" \
      'NR > 1 && index(inodes, " " $10 " ") { print proto, $2, $4, $5, $13 }' "/proc/$1/net/$proto"
  done
}
SH
. ./socks.sh

# the launcher: connects to the front end (its parent) before the job runs
cat >launcher.sh <<SH
#!/bin/bash
. '$tmp/socks.sh'
socks \$PPID >'$tmp/front_socks'
port=\${MPLUA_FRONT%%:*}
exec 5<>/dev/tcp/127.0.0.1/\$port 6<>/dev/tcp/127.0.0.1/\$port 7<>/dev/tcp/127.0.0.1/\$port
exec 8<>/dev/tcp/127.0.0.1/\$port 9<>/dev/tcp/127.0.0.1/\$port
printf 'mplua1 %032d\n' 0 >&8
printf 'mplua1 ' >&9
echo connected >'$tmp/callers'
"\$@" 5>&- 6>&- 7>&- 8>&- 9>&-
SH
chmod +x launcher.sh

mkfifo cmds
MPLUA_LAUNCHER="$tmp/launcher.sh $MPIEXEC -n" "$MPLUA" -n "$N" <cmds >out 2>err &
front=$!
exec 3>cmds
wait_for() { # PATTERN in out
  local end=$((SECONDS + 120))
  until grep -q "$1" out; do
    kill -0 "$front" 2>/dev/null || fail "the job ended waiting for '$1'"
    [ "$SECONDS" -lt "$end" ] || fail "timed out waiting for '$1'"
    sleep 0.1
  done
}
echo 'print("pids", table.concat(mp.exec(function() return mp.gather(io.open("/proc/self/stat"):read("n")) end), " "))' >&3
wait_for 'pids'
[ -s callers ] || fail "the launcher did not connect its clients first"
pids=$(sed -n 's/.*pids\t//p' out)

# 1. loopback only
grep -q '^tcp [0-9A-F]*:[0-9A-F]* 0A ' front_socks || { cat front_socks >&2; fail "the front end's listener is not there"; }
! grep -v '^tcp 0100007F:' front_socks || fail "the front end listens beyond loopback"
n=0
for pid in $pids; do
  socks "$pid" | grep '^udp' >s || true
  n=$((n + $(wc -l <s)))
  ! grep -v '^udp 0100007F:' s || fail "rank pid $pid: a UDP socket beyond loopback"
done
[ "$n" -ge "$N" ] || fail "$n wake-up sockets for $N ranks"

# 2. datagrams from elsewhere
stats() { # LABEL: every rank's "wakeups:wakeups_refused"
  echo "print('$1', table.concat(mp.exec(function() local s = mp.stats() return mp.gather(tostring(s.wakeups) .. ':' .. tostring(s.wakeups_refused)) end), ' '))" >&3
  wait_for "$1"
  sed -n "s/.*$1\t//p" out
}
first=$(stats before)
drops() { for pid in $workers; do socks "$pid" | awk '$1 == "udp" { d += $5 } END { print d + 0 }'; done; }
workers=${pids#* } # rank 0 sits at the prompt: only idle workers nap (and drain)
d0=$(drops)
ports=$(for pid in $workers; do socks "$pid" | awk '$1 == "udp" { split($2, a, ":"); print a[2] }'; done |
  while read -r hex; do echo $((16#$hex)); done)
perl -MSocket -e '
  socket(my $s, PF_INET, SOCK_DGRAM, 0) or die "socket: $!";
  for my $port (@ARGV[1 .. $#ARGV]) {
    my $to = sockaddr_in($port, inet_aton("127.0.0.1"));
    for my $i (1 .. $ARGV[0] / 2) { send($s, "", 0, $to); send($s, "wake up", 0, $to) }
  }' "$K" $ports
end=$((SECONDS + 120)) # until every rank has drained its socket
until [ "$(for pid in $workers; do socks "$pid"; done | awk '$1 == "udp" && $4 !~ /:00000000$/' | wc -l)" = 0 ]; do
  [ "$SECONDS" -lt "$end" ] || fail "the ranks do not drain their wake-up sockets"
  sleep 0.1
done
d1=$(drops)
second=$(stats after)
[ "$(echo $second | wc -w)" = "$N" ] || fail "counters: '$second'"
set -- ${first#* }
second=${second#* }
i=1
for now in $second; do
  was=$1
  shift
  w0=${was%:*} r0=${was#*:} w1=${now%:*} r1=${now#*:}
  dropped=$(($(echo "$d1" | sed -n "${i}p") - $(echo "$d0" | sed -n "${i}p")))
  case "$w0$r0$w1$r1" in *[!0-9]*) fail "rank $i: no wake-up counters in mp.stats() ($was, $now)" ;; esac
  [ $((r1 - r0)) = $((K - dropped)) ] && [ $((K - dropped)) -gt 0 ] ||
    fail "rank $i: $((r1 - r0)) refused wake-ups for $K sent ($dropped dropped)"
  [ $((w1 - w0)) -lt "$K" ] || fail "rank $i: $((w1 - w0)) wake-ups taken, with $K foreign datagrams"
  i=$((i + 1))
done
exec 3>&-
wait "$front" || fail "exit status $?"
echo "ok ($N): loopback only; a silent client did not hold up the start; foreign datagrams refused"
