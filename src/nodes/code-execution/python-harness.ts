import { HARNESS_BASE } from './harness-base';

/**
 * The Python program that runs a PythonFuncNode's code: the body of `def user_function(input_model)`,
 * called with the node's input, returning a dict (protocol and limits in harness-base.ts).
 * Embedded as a string so the worker finds it whether it runs from TypeScript sources or a build.
 */
export const PYTHON_HARNESS =
  HARNESS_BASE +
  String.raw`

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


_CODE = type(compile("", "", "exec"))


def _one_line_up(code):
    # Line numbers are stored relative to a code object's first line: moving the first line of it and
    # of every function, class and comprehension inside it moves every line of the code.
    consts = tuple(_one_line_up(c) if isinstance(c, _CODE) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno - 1, co_consts=consts)


def compile_user(code):
    # Same wrapping as PySpur; the trailing pass lets a comment-only body reach the dict check.
    body = "\n".join("    " + line for line in code.split("\n"))
    source = "def user_function(input_model):\n" + body + "\n    pass\n"
    try:
        compiled = compile(source, USER_FILE, "exec")
    except SyntaxError as exc:
        raise syntax_error(exc, 1)
    # One line up, so errors and tracebacks count lines of the user's code, not the wrapper's.
    compiled = _one_line_up(compiled)
    remember_source(code)
    namespace = {"__name__": "__user__"}
    exec(compiled, namespace)
    return namespace["user_function"]


def run(memory_mb):
    payload = json_loads(sys.stdin.buffer.read().decode("utf-8"), object_hook=Model)
    try:
        user_function = compile_user(payload["code"])
    except UserCodeError as exc:
        return {"ok": False, "error": str(exc)}
    try:
        result = user_function(payload["input"])
    except MemoryError:
        return memory_error(memory_mb)
    except BaseException as exc:
        return {"ok": False, "error": describe(exc)}
    if not isinstance(result, dict):
        return {"ok": False, "error": "Python code must return a dict, got " + type(result).__name__}
    return {"ok": True, "output": result}


main(run)
`;
