"""Child process for math-verify off the main thread: JSON request/answer per line.

Request: {"gold": str, "pred": str, "timeout": int, "positive": bool}; answer: {"equal": bool}.
Runs in this process's main thread, so the CPU limit (SIGPROF) and math-verify's alarm work.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from scorers.math_equiv import _verify_in_process

    out, sys.stdout = sys.stdout, sys.stderr  # stray prints must not corrupt the protocol
    for line in sys.stdin:
        try:
            req = json.loads(line)
            equal = _verify_in_process(req["gold"], req["pred"], int(req["timeout"]), bool(req.get("positive")))
        except Exception:  # a failed comparison is "not equal", never a crash
            equal = False
        out.write(json.dumps({"equal": bool(equal)}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
