# ranks: 2 3  quick: 2
# SPDX-License-Identifier: MIT
# A collective file I/O whose start fails on one rank, and whose stand-in
# (the same call on no elements, which the other members' parts wait for)
# fails to start too: the others' I/O can never complete and ROMIO's
# requests cannot be abandoned, so the job ends with the rank, the call, the
# file and both reasons said, and a non-zero status: never a hang (the
# runner's timeout). Each collective kind in turn, at the last rank.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
for op in Write_at_all Read_all Iwrite_at_all Write_ordered Write_all_begin; do
  cat >job.lua <<LUA
mp.exec(function(path)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, path, "w+")
  local a = mp.array("f64", 3):fill(mp.rank)
  if mp.rank == mp.size - 1 then mpi._file_fault("standin") end
  local op = "$op"
  if op == "Write_at_all" then f:Write_at_all(24 * mp.rank, a)
  elseif op == "Read_all" then f:Read_all(3, "f64")
  elseif op == "Iwrite_at_all" then mpi.Wait(f:Iwrite_at_all(24 * mp.rank, a))
  elseif op == "Write_ordered" then f:Write_ordered(a)
  else f:Write_all_begin(a); f:Write_all_end() end
  f:Close()
end, "$tmp/standin.bin")
print("not reached")
LUA
  status=0
  run job.lua >out 2>err || status=$?
  [ "$status" != 0 ] && ! grep -q "not reached" out || { echo "FAIL ($op): status $status"; cat out err; exit 1; }
  want="mplua: \[rank $((N - 1))/$N\] mp.mpi.File.$op: '$tmp/standin.bin': cannot start this rank's part (.*) nor its stand-in on no elements (.*), which the other members' collective I/O waits for: ending the job"
  grep -q "$want" err || { echo "FAIL ($op): no report of the rank"; cat out err; exit 1; }
done
echo "mpi_file_standin ok"
