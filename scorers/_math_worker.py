"""Child process for math-verify off the main thread: JSON request/answer per line.

Request: {"gold": str, "pred": str, "timeout": int, "positive": bool}; answer: {"equal": bool},
or {"equal": null} when the comparison ran out of CPU time. Runs in this process's main thread,
so the CPU limit (SIGPROF) works.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from math_verify.errors import TimeoutException

    from scorers.math_equiv import _verify_in_process

    out, sys.stdout = sys.stdout, sys.stderr  # stray prints must not corrupt the protocol
    for line in sys.stdin:
        equal: bool | None
        try:
            req = json.loads(line)
            equal = bool(_verify_in_process(req["gold"], req["pred"], int(req["timeout"]), bool(req.get("positive"))))
        except TimeoutException:  # past its CPU limit outside math-verify's own catch
            equal = None
        except Exception:  # a failed comparison is "not equal", never a crash
            equal = False
        out.write(json.dumps({"equal": equal}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
