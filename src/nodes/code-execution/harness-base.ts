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
import os, resource, sys

RESULT_FD = 3
USER_FILE = "<code>"
MAX_FRAMES = 5


def _json_codec():
    # The json module imports re, enum and more: as much CPU again as the interpreter's own start.
    # json.loads and json.dumps parse and write with its C part (_json), called here directly with
    # the settings they give it, so the results are the same; an interpreter without it uses json.
    try:
        import _json
        make_scanner, make_encoder = _json.make_scanner, _json.make_encoder
        quote_ascii, quote = _json.encode_basestring_ascii, _json.encode_basestring
    except (ImportError, AttributeError):
        import json
        return json.loads, json.dumps
    constants = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}

    class Settings:
        strict = True
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = constants.__getitem__

        def __init__(self, object_hook):
            self.object_hook = object_hook

    def refuse(value):
        raise TypeError("Object of type " + type(value).__name__ + " is not JSON serializable")

    def loads(text, object_hook=None):
        text = text.strip(" \t\n\r")
        value, end = make_scanner(Settings(object_hook))(text, 0)
        if end != len(text):
            raise ValueError("extra data after the JSON value")
        return value

    def dumps(value, default=refuse, allow_nan=True, ensure_ascii=True):
        encode = make_encoder({}, default, quote_ascii if ensure_ascii else quote, None, ": ", ", ", False, False, allow_nan)
        return "".join(encode(value, 0))

    return loads, dumps


json_loads, json_dumps = _json_codec()


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
        data = json_dumps(message, default=_encode, allow_nan=False, ensure_ascii=ensure_ascii)
    except (TypeError, ValueError, RecursionError) as exc:
        data = json_dumps({"ok": False, "error": "Python result is not JSON serialisable: " + str(exc)})
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
    # Tracebacks then quote the user's lines, the user's own (traceback.format_exc()) too. linecache
    # imports tokenize and re, as much CPU again as the interpreter's start: a run without a
    # traceback never imports it, so the source goes into its cache once something does.
    entry = (len(code), None, [l + "\n" for l in code.split("\n")], USER_FILE)
    if "linecache" in sys.modules:
        sys.modules["linecache"].cache[USER_FILE] = entry
    else:
        sys.meta_path.insert(0, _SeedLinecache(entry))


class _SeedLinecache:
    """A finder that lets the others find linecache, then puts the user's source in its cache once loaded."""

    def __init__(self, entry):
        self.entry = entry

    def find_spec(self, name, path=None, target=None):
        if name != "linecache":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None:
            spec.loader = _Seeding(spec.loader, self.entry)
        return spec


class _Seeding:
    def __init__(self, loader, entry):
        self.loader, self.entry = loader, entry

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.cache[USER_FILE] = self.entry


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
