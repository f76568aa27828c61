/**
 * What every Python program the sandbox runs starts with (`python3 -I -B -c PROGRAM cpu_s mem_mb`):
 * its limits, the result channel and how user code's errors read. A program appends its own
 * `run(memory_mb)`, which returns the result message, and ends with `main(run)`.
 *
 * Protocol: stdin = JSON `{"code": str, "input": {...}}`; fd 3 = one JSON message, either
 * `{"ok": true, "output": {...}}` or `{"ok": false, "error": "<message>"}`. stdout and stderr
 * belong to the user's code (print() cannot corrupt the result).
 * Kept free of backticks and dollar-brace sequences so it survives as a TS template literal.
 */
export const HARNESS_BASE = String.raw`
# Only what every run needs is imported up front: a module a run may not need (traceback for errors,
# datetime for results that hold one) is imported where it is used, since the interpreter's start is
# most of a sandboxed node's own cost.
import json, os, resource, sys

RESULT_FD = 3
USER_FILE = "<code>"
MAX_FRAMES = 5


class UserCodeError(Exception):
    """The user's code cannot be compiled; the message is the error text."""


def _encode(value):
    import datetime, decimal
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if callable(getattr(value, "model_dump", None)):
        return value.model_dump()
    raise TypeError("Object of type " + type(value).__name__ + " is not JSON serializable")


def send(message, ensure_ascii):
    try:
        data = json.dumps(message, default=_encode, allow_nan=False, ensure_ascii=ensure_ascii)
    except (TypeError, ValueError, RecursionError) as exc:
        data = json.dumps({"ok": False, "error": "Python result is not JSON serialisable: " + str(exc)})
    with os.fdopen(RESULT_FD, "w", encoding="utf-8") as out:
        out.write(data)


def set_limits(cpu_seconds, memory_mb):
    # Hard limits too, so user code cannot raise them again; never above an inherited hard limit.
    def cap(kind, soft, hard):
        current = resource.getrlimit(kind)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        resource.setrlimit(kind, (soft, hard))
    cap(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    cap(resource.RLIMIT_AS, memory_mb * 1024 * 1024, memory_mb * 1024 * 1024)
    cap(resource.RLIMIT_CORE, 0, 0)


def syntax_error(exc, shift):
    line = max((exc.lineno or 1) - shift, 1)
    text = (exc.text or "").strip()
    return UserCodeError("SyntaxError: " + str(exc.msg) + " (line " + str(line) + ")" + ("\n    " + text if text else ""))


def remember_source(code):
    # Tracebacks then quote the user's lines, the user's own (traceback.format_exc()) too.
    import linecache
    linecache.cache[USER_FILE] = (len(code), None, [l + "\n" for l in code.split("\n")], USER_FILE)


def describe(exc):
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if f.filename == USER_FILE), len(frames))
    shown = frames[first:][-MAX_FRAMES:]
    text = type(exc).__name__ + ": " + str(exc)
    if shown:
        text += "\nTraceback (most recent call last):\n" + "".join(traceback.format_list(shown)).rstrip()
    return text


def memory_error(memory_mb):
    return {"ok": False, "error": "Python code exceeded the memory limit of " + str(memory_mb) + " MB (MemoryError)"}


def die_with_parent():
    # Unsandboxed, the worker runs us in our own process group; if the worker is killed (-9),
    # nothing would stop us. PR_SET_PDEATHSIG (1) asks Linux to SIGKILL (9) us when the parent dies.
    # In the sandbox the parent is the namespace's init, pid 1, whose end takes us along: ctypes,
    # a few milliseconds to import, is left out there.
    parent = os.getppid()
    if parent == 1:
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)
    except Exception:
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def main(run, ensure_ascii=False):
    die_with_parent()
    cpu_seconds, memory_mb = int(sys.argv[1]), int(sys.argv[2])
    set_limits(cpu_seconds, memory_mb)
    try:
        send(run(memory_mb), ensure_ascii)
    except MemoryError:
        send(memory_error(memory_mb), ensure_ascii)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    # Skip atexit handlers and non-daemon threads the user may have left behind.
    os._exit(0)
`;
