/**
 * The Python program that runs a PythonFuncNode's code (`python3 -I -S -B -c HARNESS cpu_s mem_mb`).
 * Embedded as a string so the worker finds it whether it runs from TypeScript sources or a build.
 *
 * Protocol: stdin = JSON `{"code": str, "input": {...}}`; fd 3 = one JSON message, either
 * `{"ok": true, "output": {...}}` or `{"ok": false, "error": "<message for the node error>"}`.
 * stdout and stderr belong to the user's code (print() cannot corrupt the result).
 * Kept free of backticks and dollar-brace sequences so it survives as a TS template literal.
 */
export const PYTHON_HARNESS = String.raw`
import ast, datetime, decimal, json, linecache, os, resource, sys, traceback

RESULT_FD = 3
USER_FILE = "<code>"
MAX_FRAMES = 5


class UserCodeError(Exception):
    """The user's code cannot be compiled; the message is the node's error text."""


class Model(dict):
    """A dict whose keys read as attributes too, like the pydantic models PySpur passes in."""

    def __getattribute__(self, name):
        # Fields win over dict methods, so a field called "items" or "values" reads as the field.
        if not name.startswith("__") and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        return dict.__getattribute__(self, name)

    def __getattr__(self, name):
        raise AttributeError("no field " + repr(name))

    def __setattr__(self, name, value):
        self[name] = value

    def model_dump(self, **_kwargs):
        return _plain(self)


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _encode(value):
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


def send(message):
    try:
        data = json.dumps(message, default=_encode, allow_nan=False, ensure_ascii=False)
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


def compile_user(code):
    # Same wrapping as PySpur; the trailing pass lets a comment-only body reach the dict check.
    body = "\n".join("    " + line for line in code.split("\n"))
    source = "def user_function(input_model):\n" + body + "\n    pass\n"
    try:
        tree = ast.parse(source, filename=USER_FILE)
    except SyntaxError as exc:
        raise syntax_error(exc, 1)
    # Shift line numbers so errors and tracebacks count lines of the user's code, not the wrapper's.
    ast.increment_lineno(tree, -1)
    try:
        compiled = compile(tree, USER_FILE, "exec")
    except SyntaxError as exc:
        raise syntax_error(exc, 0)
    linecache.cache[USER_FILE] = (len(code), None, [l + "\n" for l in code.split("\n")], USER_FILE)
    namespace = {"__name__": "__user__"}
    exec(compiled, namespace)
    return namespace["user_function"]


def describe(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if f.filename == USER_FILE), len(frames))
    shown = frames[first:][-MAX_FRAMES:]
    text = type(exc).__name__ + ": " + str(exc)
    if shown:
        text += "\nTraceback (most recent call last):\n" + "".join(traceback.format_list(shown)).rstrip()
    return text


def run(memory_mb):
    payload = json.loads(sys.stdin.buffer.read().decode("utf-8"), object_hook=Model)
    try:
        user_function = compile_user(payload["code"])
    except UserCodeError as exc:
        return {"ok": False, "error": str(exc)}
    try:
        result = user_function(payload["input"])
    except MemoryError:
        return {"ok": False, "error": "Python code exceeded the memory limit of " + str(memory_mb) + " MB (MemoryError)"}
    except BaseException as exc:
        return {"ok": False, "error": describe(exc)}
    if not isinstance(result, dict):
        return {"ok": False, "error": "Python code must return a dict, got " + type(result).__name__}
    return {"ok": True, "output": result}


def die_with_parent():
    # Unsandboxed, the worker runs us in our own process group; if the worker is killed (-9),
    # nothing would stop us. PR_SET_PDEATHSIG asks Linux to SIGKILL us when the parent dies.
    # (In the sandbox the parent is the namespace's init, pid 1, which takes us along anyway.)
    parent = os.getppid()
    try:
        import ctypes, signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def main():
    die_with_parent()
    cpu_seconds, memory_mb = int(sys.argv[1]), int(sys.argv[2])
    set_limits(cpu_seconds, memory_mb)
    try:
        send(run(memory_mb))
    except MemoryError:
        send({"ok": False, "error": "Python code exceeded the memory limit of " + str(memory_mb) + " MB (MemoryError)"})
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    # Skip atexit handlers and non-daemon threads the user may have left behind.
    os._exit(0)


main()
`;
