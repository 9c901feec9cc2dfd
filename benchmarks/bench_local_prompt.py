"""Prompt processing of the in-process llama.cpp conductor, in CPU-seconds (issue 32.2).

    python benchmarks/bench_local_prompt.py [--requant Q8_0 Q4_0] [--json out.json]

One llama.cpp thread, the real conductor prompt (sim pool, ~1,400 tokens), 16 generated tokens
per call, each arrangement on a fresh (cold) server in this process; CPU-seconds are the
process's own (llama.cpp runs in it), so other jobs on the machine do not count.

* speed: one call alone: prompt tokens per CPU-second (llama.cpp's `prompt_n` over the
  call's CPU-seconds), for the shipped GGUF and, with `--requant`, for copies of it whose
  Q4_1 tensors are re-encoded (gguf's own quantizer) in a temporary folder.
* first calls: two questions at once on a cold 2-slot server, as the provider sent them
  before (both together) and as it sends them now (the first alone, then the other, which
  starts from the first's cached prompt prefix): prompt tokens processed, CPU-seconds, and
  each call's seconds outside the server's prompt and generation timers.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = ("What is the sum of the first 20 odd numbers?", "How many positive divisors does 360 have?")
GENERATED = 16


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def conductor_prompt(question: str) -> str:
    from solvers.conducting import Settings, conductor_messages
    from workers.pools import load_pool

    descriptions = [w.description for w in load_pool("sim").workers]
    return conductor_messages(question, descriptions, Settings())[0].text


def ask(address: str, question: str) -> dict:
    """One chat completion; the server's timings and the seconds outside them."""
    body = {"messages": [{"role": "user", "content": conductor_prompt(question)}], "max_tokens": GENERATED,
            "ignore_eos": True, "temperature": 0.7}  # fmt: skip
    request = urllib.request.Request(address + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    start = time.perf_counter()
    with opener.open(request, timeout=3600) as response:
        timings = json.loads(response.read())["timings"]
    wall = time.perf_counter() - start
    server_s = (timings["prompt_ms"] + timings["predicted_ms"]) / 1000
    return {"prompt_tokens": timings["prompt_n"], "outside_timers_s": round(wall - server_s, 2)}


def cold_server(gguf: Path):
    from workers.local_provider import LocalServer, ServerSettings

    return LocalServer(gguf, ServerSettings().resolved())  # not get_server's: always a fresh one


def speed(gguf: Path) -> dict:
    server = cold_server(gguf)
    try:
        before = cpu_seconds()
        call = ask(server.address, QUESTIONS[0])
        cpu = cpu_seconds() - before
    finally:
        server.close()
    tokens = call["prompt_tokens"]
    return {"prompt_tokens": tokens, "cpu_s": round(cpu, 2), "tokens_per_cpu_s": round(tokens / cpu)}


def first_calls(gguf: Path, together: bool) -> dict:
    server = cold_server(gguf)
    calls: dict[str, dict] = {}

    def run(question: str) -> None:
        calls[question] = ask(server.address, question)

    try:
        before = cpu_seconds()
        if together:
            threads = [threading.Thread(target=run, args=(q,)) for q in QUESTIONS]
            for t in threads:
                t.start()
                time.sleep(0.5)  # as an eval's samples start: one request reaches the server first
            for t in threads:
                t.join()
        else:
            for q in QUESTIONS:
                run(q)
        cpu = cpu_seconds() - before
    finally:
        server.close()
    ordered = [calls[q] for q in QUESTIONS]
    return {"arrangement": "together (before)" if together else "first alone (now)", "cpu_s": round(cpu, 2),
            "prompt_tokens": [c["prompt_tokens"] for c in ordered],
            "outside_timers_s": [c["outside_timers_s"] for c in ordered]}  # fmt: skip


def requantized_copy(source: Path, kind: str, folder: Path) -> Path:
    """`source` with its Q4_1 tensors dequantized and re-encoded as `kind` (gguf's quantizer)."""
    import gguf
    from gguf import quants

    target = gguf.GGMLQuantizationType[kind]
    reader = gguf.GGUFReader(source)
    path = folder / f"{source.stem}.{kind}.gguf"
    writer = gguf.GGUFWriter(path, arch=str(reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()))
    for field in reader.fields.values():
        if field.name != gguf.Keys.General.ARCHITECTURE and not field.name.startswith("GGUF."):
            kinds = field.types
            writer.add_key_value(field.name, field.contents(), kinds[0], sub_type=kinds[-1] if len(kinds) > 1 else None)
    for tensor in reader.tensors:
        data, kind_of = tensor.data, tensor.tensor_type
        if kind_of == gguf.GGMLQuantizationType.Q4_1:
            data, kind_of = quants.quantize(quants.dequantize(data, kind_of), target), target
        writer.add_tensor(tensor.name, data, raw_dtype=kind_of)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requant", nargs="*", default=[], help="also time copies re-encoded as these (Q8_0, Q4_0)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    from workers.local_provider import resolve_model

    shipped = resolve_model("smollm2-135m")[1]
    results: dict = {"speed": {}, "first_calls": []}
    with tempfile.TemporaryDirectory(prefix="bench-prompt-") as folder:
        ggufs = {"Q4_1 (shipped)": shipped} | {k: requantized_copy(shipped, k, Path(folder)) for k in args.requant}
        for name, path in ggufs.items():
            results["speed"][name] = speed(path)
            print(name, results["speed"][name], file=sys.stderr, flush=True)
    for together in (True, False):
        results["first_calls"].append(first_calls(shipped, together))
        print(results["first_calls"][-1], file=sys.stderr, flush=True)
    print("| GGUF | prompt tokens | CPU s | prompt tokens per CPU-second |\n|---|---:|---:|---:|")
    for name, r in results["speed"].items():
        print(f"| {name} | {r['prompt_tokens']} | {r['cpu_s']} | {r['tokens_per_cpu_s']} |")
    print("\n| two first calls on a cold server | CPU s | prompt tokens processed | s outside the server's timers |")
    print("|---|---:|---|---|")
    for r in results["first_calls"]:
        print(f"| {r['arrangement']} | {r['cpu_s']} | {r['prompt_tokens']} | {r['outside_timers_s']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
