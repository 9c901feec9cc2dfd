#!/usr/bin/env bash
# The project for a GPU lease of the development tools, in three transfers that each fit 64 MiB beside the
# working tree (about 11 MB travels with every call): ../shared/gpu/build.sh's bundle with its SmolLM2 parts cut
# 20 + 40 + the rest MB, then the device calls to make, back to back (a machine is given back 30 s after a call).
# As run on an H200 on 2026-11-28 (experiments/results-2026-11-28.md): staged in 27 s of device time.
#     PY=/path/to/venv/bin/python bash experiments/gpu_stage.sh   # from the project root, after committing
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../shared/gpu/build.sh
cat .gpu/a/smol.0* .gpu/b/smol.0* >.gpu/smol.tar
rm -f .gpu/a/smol.0* .gpu/b/smol.0*
mkdir -p .gpu/c
cut() { dd if=.gpu/smol.tar of="$1" iflag=skip_bytes,count_bytes skip="$2" ${3:+count=$3} status=none; }
cut .gpu/a/smol.00 0 20000000
cut .gpu/c/smol.01 20000000 40000000
cut .gpu/b/smol.02 60000000
rm .gpu/smol.tar
du -sh .gpu/a .gpu/c .gpu/b
cat <<'EOF'
device calls, one after another:
1. carry [".gpu/a"]:  bash .gpu/a/stage.sh
2. carry [".gpu/c"]:  cp .gpu/c/smol.01 /tmp/gpu/
3. carry [".gpu/b"]:  cp /tmp/gpu/smol.01 .gpu/b/ && bash /tmp/gpu/finish.sh .gpu/b && . /tmp/gpu/env.sh &&
   cd /tmp/gpu/project && (SEEDS=2000-2007 PARALLEL=8 JOBS=seeds OUT=/tmp/go setsid nohup bash
   experiments/gpu_session.sh 1500 >/tmp/go.out 2>&1 </dev/null &); <wait up to the call's end or
   /tmp/go/summary.md>; COLLECT_ONLY=1 OUT=$OUT bash experiments/gpu_session.sh; cp /tmp/go/session.log $OUT/
4. (if device time is left) the same wait and COLLECT_ONLY from /tmp/gpu/project, after `. /tmp/gpu/env.sh`
Then here: tar -xzf results.tar.gz, and python -m experiments.seeds training/recipes/sim-routing.yaml
--seeds 2000-2015 --out <unpacked>/seeds --table_only
EOF
