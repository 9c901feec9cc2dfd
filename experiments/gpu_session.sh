#!/usr/bin/env bash
# One GPU session, side by side within one deadline: the sim-routing seed table (seeds 2000-2015, fixed
# before any of them ran; each with its own format warm-up, evaluated on the held-out protocol), the GPU check
# (experiments/gpu_check.py, its bf16 padding-fix run included), the training bench's GPU column and, when JOBS
# names it, gpu_small: the gpu-small recipe for GPU_SMALL_STEPS (25) GRPO steps (pool sim), then its reward and
# parse rate per step (experiments/learning_table.py: with running means, entropy, completion length).
#     OUT=<results folder> bash experiments/gpu_session.sh [deadline_s, default 560]
#     DRY_RUN=1 OUT=<folder> JOBS=gpu_small bash experiments/gpu_session.sh   # any machine: the plan, and
#         gpu_small's train.py dry run (its recipe and options parsed); nothing else runs, nothing is collected
#     COLLECT_ONLY=1 OUT=<folder> bash experiments/gpu_session.sh   # what a session still running has so far
#         (a session started under setsid outlives one device call; its seed table: `python -m experiments.seeds
#         <recipe> --seeds ... --out <seeds folder> --table_only` on the unpacked results, any machine)
# From the project root of a GPU machine (after shared/gpu's stage.sh and finish.sh: `. /tmp/gpu/env.sh`).
# Each job runs under `timeout`; on exit, whatever happened, the small results (tables, logs' tails,
# run_info.json, metrics.jsonl, eval logs; never a model or checkpoint) go to $OUT as at most four files:
# summary.md, session.log, results.tar.gz and evals.tar.gz (the .eval logs, when under 15 MB).
# Knobs (environment): SEEDS (2000-2015), PARALLEL (8), JOBS (the jobs to run, default "seeds gpu_check bench";
# also gpu_small), GPU_SMALL_STEPS (25), GPU_SMALL_ARGS (more train.py options, e.g. "--attn_implementation sdpa"), SEED_ARGS (more sweep/train.py options, e.g. for a
# shrunk CPU try: "--limit 2 --max_steps 1 --format_warmup_steps 1"), BENCH_STEPS (3), GPU_CHECK_STEPS (4),
# RUNS (/tmp/gpu-runs), PY (python3). One torch thread per process: 8 trainings + the check + the bench on 16 cores.
set -uo pipefail
out=$(mkdir -p "${OUT:?set OUT to the folder the results go to}" && cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
deadline=${1:-560}
runs=${RUNS:-/tmp/gpu-runs}
py=${PY:-python3}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
export XDG_DATA_HOME="$runs/xdg" INSPECT_LOG_DIR="$runs/inspect-logs" INSPECT_DISPLAY=none
mkdir -p "$runs"
exec > >(tee -a "$out/session.log") 2>&1
started=$(date +%s)
say() { echo "[gpu_session +$(($(date +%s) - started))s] $*"; }

collect() {  # runs on EXIT: the small files only, packed (the transfer takes at most 8 files)
    say "collecting results"
    kill "${smi:-}" 2>/dev/null
    {
        echo "# GPU session $(date -u +%FT%TZ), deadline ${deadline}s, ran $(($(date +%s) - started))s"
        for job in seeds gpu_check bench gpu_small; do echo "- $job: ${status[$job]:-not finished}"; done
        echo; echo '## nvidia-smi'; echo '```'; cat "$runs/nvidia-smi.txt" 2>/dev/null; echo '```'
        echo; echo '## seeds.md'; cat "$runs/seeds/seeds.md" 2>/dev/null || tail -n 30 "$runs/seeds.log" 2>/dev/null
        echo; echo '## gpu_check.md'; cat "$runs/gpu-check/gpu_check.md" 2>/dev/null || tail -n 30 "$runs/gpu_check.log" 2>/dev/null
        echo; echo '## bench_train'; tail -n 12 "$runs/bench_train.log" 2>/dev/null
        echo; echo '## gpu-small'; cat "$runs/gpu-small/learning.md" 2>/dev/null || tail -n 30 "$runs/gpu_small.log" 2>/dev/null
    } >"$out/summary.md"
    (cd "$runs" && find . \( -name 'checkpoint-*' -o -name warmup -o -name xdg -o -name inspect-logs -o -name logs \
        -o -name eval \) -prune -o -type f \( -name '*.md' -o -name '*.csv' -o -name 'run_info.json' \
        -o -name '*.jsonl' -o -name '*rows.json' -o -name '*.log' -o -name '*.png' -o -name '*.txt' \) \
        -size -4M -print0 | tar --null -T - -czf "$out/results.tar.gz")
    (cd "$runs" && find . -name '*.eval' -size -4M -print0 | tar --null -T - -czf "$out/evals.tar.gz")
    [ "$(stat -c %s "$out/evals.tar.gz")" -lt 15000000 ] || rm -f "$out/evals.tar.gz"
    ls -l "$out"
    cat "$out/summary.md"  # also in the command's output, should the files not come back
}
jobs=" ${JOBS:-seeds gpu_check bench} "
wants() { [[ "$jobs" == *" $1 "* ]]; }
for job in $jobs; do
    case $job in
        seeds | gpu_check | bench | gpu_small) ;;
        *) say "no job '$job' in JOBS; the jobs: seeds gpu_check bench gpu_small"; exit 2 ;;
    esac
done
if wants seeds && wants gpu_small; then  # measured on an H200, 2026-11-28: gpu_small peaked at 118 GiB of GPU
    # memory (eager attention on few-shot prompts) and 15 of 16 seed trainings beside it died at CUDA start (OOM)
    say "JOBS: run gpu_small in a session of its own (it takes up to 118 GiB of GPU memory; the seeds die beside it)"
    exit 2
fi
read -ra small_args <<<"${GPU_SMALL_ARGS:-}"
vllm=$("$py" -c 'import importlib.util as u; print(str(u.find_spec("vllm") is not None).lower())')
small=("$py" training/train.py training/recipes/gpu-small.yaml --output_dir "$runs/gpu-small" --max_steps
    "${GPU_SMALL_STEPS:-25}" --pool sim --use_vllm "$vllm" --save_strategy no --overwrite_output_dir true
    "${small_args[@]}")
if [ -n "${DRY_RUN:-}" ]; then
    say "dry run of:${jobs% }"
    wants gpu_small || exit 0
    echo "gpu_small: ${small[*]}; then $py experiments/learning_table.py $runs/gpu-small"
    "${small[@]}" --dry_run true
    exit
fi
declare -A status pids
if [ -n "${COLLECT_ONLY:-}" ]; then  # a running session's results so far (it runs under setsid past one call)
    collect
    exit 0
fi
trap collect EXIT

nvidia-smi >"$runs/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 >"$runs/gpu-usage.txt" 2>&1 &
smi=$!
read -ra seed_args <<<"${SEED_ARGS:-}"
say "starting:${jobs% }; seeds ${SEEDS:-2000-2015} (--parallel ${PARALLEL:-8}); deadline ${deadline}s"
if wants seeds; then
    timeout -k 15 "$deadline" "$py" -m experiments.seeds training/recipes/sim-routing.yaml --seeds "${SEEDS:-2000-2015}" \
        --parallel "${PARALLEL:-8}" --use_cpu false --out "$runs/seeds" "${seed_args[@]}" >"$runs/seeds.log" 2>&1 &
    pids[seeds]=$!
fi
if wants gpu_check; then
    timeout -k 15 $((deadline - 20)) "$py" -m experiments.gpu_check --steps "${GPU_CHECK_STEPS:-4}" \
        --out "$runs/gpu-check" >"$runs/gpu_check.log" 2>&1 &
    pids[gpu_check]=$!
fi
if wants bench; then
    timeout -k 15 $((deadline - 20)) "$py" benchmarks/bench_train.py --device cuda --num_generations 8 \
        --steps "${BENCH_STEPS:-3}" >"$runs/bench_train.log" 2>&1 &
    pids[bench]=$!
fi
if wants gpu_small; then  # the table also after a cut run: the steps logged so far
    (timeout -k 15 $((deadline - 20)) "${small[@]}"; code=$?; "$py" experiments/learning_table.py "$runs/gpu-small"
        exit $code) >"$runs/gpu_small.log" 2>&1 &
    pids[gpu_small]=$!
fi
for job in bench gpu_check gpu_small seeds; do
    [ -n "${pids[$job]:-}" ] || { status[$job]="not run (JOBS)"; continue; }
    wait "${pids[$job]}"
    code=$?
    status[$job]="exit $code$([ $code -eq 124 ] && echo ' (cut by the deadline)')"
    say "$job: ${status[$job]}"
done
