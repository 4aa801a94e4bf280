# SPDX-License-Identifier: MIT
# Two "hosts" on this machine for the nodes_*.sh tests (sourced after N is
# set; not a test itself): network namespaces NS_A and NS_B joined by a veth
# pair, each end named mpnet0, with addresses in a /30 of 10.213.0.0/16 that
# exists only inside the two namespaces. The host names are the namespace
# names; a line for each is added to /etc/hosts (under flock, so parallel
# runs do not lose each other's lines) and removed on every way out.
#
# mpiexec (hydra) runs inside NS_A; it starts its proxies through
# netns_launch.sh (as its ssh launcher), which runs them with `ip netns exec
# HOST`. UCX is forced onto TCP over mpnet0, so bytes between the hosts cross
# the veth (MPICH sees two nodes: shared memory only between ranks of one
# host). Ranks 0 .. ceil(N/2)-1 run on host A, the others on host B (the
# "remote" host).
#
# Functions: nodes_up (or print SKIPPED and exit 77: ctest's skip), nodes_run ARGS (mplua
# at N ranks across the hosts), nodes_pids NS (the mplua ranks in a
# namespace), nodes_wait_exit (wait for a job, telling an exit hang apart),
# nodes_fail MSG (report a failed job: MSG, $status, files out and err; exit 1).
: "${MPLUA:?}" "${MPIEXEC:?}"
_nodes_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
cd "$tmp"
unset LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 MPLUA_DISABLED
NS_A="" NS_B="" _nodes_hosts_lines=""

nodes_skip() {
  echo "SKIPPED: $* (this test runs across two network namespaces: it needs root and iproute2)"
  exit 77
}

_nodes_hosts_edit() { # add|del: our two lines in /etc/hosts, edited in place
  (
    flock 9
    if [ "$1" = add ]; then
      printf '%s\n' "$_nodes_hosts_lines" >>/etc/hosts
    else
      grep -vxF -e "${_nodes_hosts_lines%%$'\n'*}" -e "${_nodes_hosts_lines#*$'\n'}" \
        /etc/hosts >"$tmp/hosts.new" || true
      cat "$tmp/hosts.new" >/etc/hosts
    fi
  ) 9</etc/hosts
}

nodes_down() {
  trap '' INT TERM HUP # a second signal must not cut the clean-up short
  set +e
  local ns p
  for ns in $NS_A $NS_B; do # what the test started there: mpiexec, proxies, ranks
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  [ -z "$_nodes_hosts_lines" ] || _nodes_hosts_edit del
  _nodes_hosts_lines=""
  for ns in $NS_A $NS_B; do ip netns del "$ns" 2>/dev/null; done
  NS_A="" NS_B=""
  cd / && rm -rf "$tmp"
}

# What an earlier run could not clean up (killed with SIGKILL, e.g. by a
# ctest timeout): namespaces named after a test process that is gone, and
# their /etc/hosts lines. Nothing else is touched.
_nodes_reap() {
  local ns pid p
  for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(mplua-[0-9]*-[0-9a-f]*-[ab]\).*/\1/p'); do
    pid=${ns#mplua-}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null && continue
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  (
    flock 9
    local line keep=""
    while IFS= read -r line; do
      case $line in
        *" mplua-"*"# mplua test")
          ns=${line#* }
          ns=${ns%% *}
          [ -e "/run/netns/$ns" ] || continue ;;
      esac
      keep="$keep$line"$'\n'
    done </etc/hosts
    [ "$keep" = "$(cat /etc/hosts)"$'\n' ] || printf '%s' "$keep" >/etc/hosts
  ) 9</etc/hosts
}

nodes_up() {
  trap 'nodes_down' EXIT
  [ "$(id -u)" = 0 ] || nodes_skip "not root"
  command -v ip >/dev/null || nodes_skip "no 'ip' command"
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  _nodes_reap
  local id x ns
  id=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  x=$((0x${id:0:2}))
  NS_A="mplua-$$-$id-a" NS_B="mplua-$$-$id-b"
  ip netns add "$NS_A" 2>/dev/null || { NS_A="" NS_B=""; nodes_skip "cannot create a network namespace"; }
  ip netns add "$NS_B" 2>/dev/null || nodes_skip "cannot create a second network namespace"
  ip link add mpnet0 netns "$NS_A" type veth peer name mpnet0 netns "$NS_B" 2>/dev/null ||
    nodes_skip "cannot create a veth pair"
  ip -n "$NS_A" addr add "10.213.$x.1/30" dev mpnet0
  ip -n "$NS_B" addr add "10.213.$x.2/30" dev mpnet0
  for ns in "$NS_A" "$NS_B"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set mpnet0 up
  done
  for _ in $(seq 1000); do # the carrier comes up a moment after both ends are up
    ip -n "$NS_A" link show mpnet0 | grep -q 'state UP' &&
      ip -n "$NS_B" link show mpnet0 | grep -q 'state UP' && break
    sleep 0.01
  done
  _nodes_hosts_lines="10.213.$x.1 $NS_A # mplua test"$'\n'"10.213.$x.2 $NS_B # mplua test"
  _nodes_hosts_edit add
  printf '%s:%d\n%s:%d\n' "$NS_A" $(((N + 1) / 2)) "$NS_B" $((N / 2)) >"$tmp/hostfile"
  echo "nodes: host $NS_A (10.213.$x.1) runs ranks 0..$(((N + 1) / 2 - 1)), host $NS_B (10.213.$x.2) the others; UCX over TCP on mpnet0"
}

# mplua at N ranks across the two hosts; the arguments go to mplua.
nodes_run() {
  ip netns exec "$NS_A" env UCX_TLS=tcp UCX_NET_DEVICES=mpnet0 \
    "$MPIEXEC" -f "$tmp/hostfile" -launcher ssh -launcher-exec "$_nodes_dir/netns_launch.sh" \
    -localhost "$NS_A" -n "$N" "$MPLUA" "$@"
}

nodes_fail() {
  echo "FAIL ($N): $1 (status $status)"
  echo "  stdout:"; cat out; echo "  stderr:"; cat err
  exit 1
}

# The pids of the ranks ($MPLUA processes) in namespace NS, one a line.
nodes_pids() {
  local p name
  name=$(basename "$MPLUA" | cut -c1-15)
  for p in $(ip netns pids "$1" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$name" ] && echo "$p"
  done
  return 0
}

# nodes_wait_exit PID MARKER FILE: wait for job PID (bounded) and set
# `status` to its exit status. A job that printed MARKER into FILE (its work
# is done) gets 30 s more to exit; any job gets 150 s in all. A job still
# running then is a hang: reported (nodes_down kills it); returns 1, with
# nodes_exit_hung=1 if the work was done (a hang at exit).
nodes_wait_exit() {
  local pid=$1 marker=$2 file=$3 start=$SECONDS done_at="" p
  nodes_exit_hung=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$done_at" ] && grep -qF -- "$marker" "$file" 2>/dev/null; then done_at=$SECONDS; fi
    if [ -n "$done_at" ] && [ $((SECONDS - done_at)) -ge 30 ]; then break; fi
    [ $((SECONDS - start)) -lt 150 ] || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    if [ -n "$done_at" ]; then
      nodes_exit_hung=1
      echo "the job did its work ('$marker') but did not exit within 30 s:" \
        "hung at exit (MPI_Finalize over UCX/TCP, openucx/ucx#8738)"
    else
      echo "FAIL ($N): the job did not end within 150 s ('$marker' never printed)"
    fi
    for p in $(nodes_pids "$NS_A") $(nodes_pids "$NS_B"); do
      echo "  rank pid $p in $(ip netns identify "$p"): state $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)," \
        "wchan $(cat "/proc/$p/wchan" 2>/dev/null)"
    done
    status=124
    return 1
  fi
  status=0
  wait "$pid" || status=$?
}
