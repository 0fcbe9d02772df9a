"""corral for Python: confined commands through libcorral.so (ctypes, standard library only).

A harness in under ten lines:

    import corral
    with corral.ExecutorSet(toml='[sandbox]\\nmode = "workspace-write"\\n', workspace="/src/app") as tools:
        agent = tools.executor("agent-1")              # its own HOME and TMPDIR
        result = agent.run_command("make test")        # gate, then the sandbox
        print(result.exit_code, result.stdout.decode())
        denied = agent.run(["touch", "/etc/x"])        # a refusal is the command's failure...
        # ...and corral's own refusals raise corral.CorralError with .code ("refused_by_gate", ...)

Every call goes through corral's gate and the same sandbox as `corral run`
(docs/executors.md). The library is found through $CORRAL_LIBRARY, else
the linker's search for libcorral.so.0.
"""

import ctypes
import ctypes.util
import json
import os

__all__ = ["CorralError", "ExecutorSet", "Executor", "Process", "RunResult", "SIGNAL_INTERRUPT",
           "SIGNAL_TERMINATE", "SIGNAL_KILL"]

SIGNAL_INTERRUPT, SIGNAL_TERMINATE, SIGNAL_KILL = 0, 1, 2
ENDED_BY = ("command", "output_limit", "deadline", "cancelled", "signal")


def _load():
    path = os.environ.get("CORRAL_LIBRARY") or ctypes.util.find_library("corral") or "libcorral.so.0"
    lib = ctypes.CDLL(path)
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    err = ctypes.POINTER(ctypes.c_void_p)
    handle = ctypes.c_void_p
    out = ctypes.POINTER(ctypes.c_void_p)
    sig = {
        "corral_errc_name": (ctypes.c_char_p, [ctypes.c_int]),
        "corral_string_free": (None, [ctypes.c_void_p]),
        "corral_policy_from_toml": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, out, err]),
        "corral_policy_from_json": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, out, err]),
        "corral_policy_free": (None, [handle]),
        "corral_set_create": (ctypes.c_int, [handle, ctypes.c_char_p, ctypes.c_int, out, err]),
        "corral_set_executor": (ctypes.c_int, [handle, ctypes.c_char_p, out, err]),
        "corral_set_close": (None, [handle]),
        "corral_set_free": (None, [handle]),
        "corral_executor_level": (ctypes.c_int, [handle]),
        "corral_executor_report": (ctypes.c_void_p, [handle]),
        "corral_executor_home": (ctypes.c_char_p, [handle]),
        "corral_executor_tmpdir": (ctypes.c_char_p, [handle]),
        "corral_run_argv": (ctypes.c_int, [handle, ctypes.c_char_p, c_char_pp, ctypes.c_size_t,
                                           ctypes.POINTER(_RunResult), err]),
        "corral_run_result_free": (None, [ctypes.POINTER(_RunResult)]),
        "corral_process_prepare": (ctypes.c_int, [handle, ctypes.POINTER(_ProcessOptions), out, err]),
        "corral_process_start": (ctypes.c_int, [handle, err]),
        "corral_process_stdin": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_int), err]),
        "corral_process_stdout": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_int), err]),
        "corral_process_stderr": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_int), err]),
        "corral_process_pty": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_int), err]),
        "corral_process_close_stdin": (ctypes.c_int, [handle, err]),
        "corral_process_resize": (ctypes.c_int, [handle, ctypes.c_ushort, ctypes.c_ushort, err]),
        "corral_process_signal": (ctypes.c_int, [handle, ctypes.c_int, err]),
        "corral_process_wait": (ctypes.c_int, [handle, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                               ctypes.POINTER(ctypes.c_int), err]),
        "corral_process_protected_left": (c_char_pp, [handle, ctypes.POINTER(ctypes.c_size_t)]),
        "corral_process_free": (None, [handle]),
    }
    for name, (restype, argtypes) in sig.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


class _RunResult(ctypes.Structure):
    _fields_ = [("stdout_data", ctypes.c_void_p), ("stdout_len", ctypes.c_size_t),
                ("stderr_data", ctypes.c_void_p), ("stderr_len", ctypes.c_size_t),
                ("exit_code", ctypes.c_int), ("signal", ctypes.c_int), ("output_limit", ctypes.c_int),
                ("protected_left", ctypes.POINTER(ctypes.c_char_p)), ("protected_left_count", ctypes.c_size_t)]


class _ProcessOptions(ctypes.Structure):
    _fields_ = [("dir", ctypes.c_char_p), ("argv", ctypes.POINTER(ctypes.c_char_p)),
                ("env", ctypes.POINTER(ctypes.c_char_p)), ("tty", ctypes.c_int), ("rows", ctypes.c_ushort),
                ("columns", ctypes.c_ushort), ("deadline_ms", ctypes.c_long), ("terminate_grace_ms", ctypes.c_long)]


_lib = None


def _c():
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


class CorralError(Exception):
    """One of corral's typed errors: .errc (the number), .code ("set_closed", ...), the message."""

    def __init__(self, errc, message):
        self.errc = errc
        self.code = _c().corral_errc_name(errc).decode()
        super().__init__("%s: %s" % (self.code, message))


def _call(function, *args):
    message = ctypes.c_void_p()
    errc = function(*args, ctypes.byref(message))
    if errc != 0:
        text = ctypes.string_at(message.value).decode(errors="replace") if message.value else ""
        _c().corral_string_free(message)
        raise CorralError(errc, text)


def _strings(items):
    if items is None:
        return None
    array = (ctypes.c_char_p * (len(items) + 1))()
    for i, item in enumerate(items):
        array[i] = os.fsencode(item)
    array[len(items)] = None
    return array


def _text(value):
    return None if value is None else os.fsencode(value)


class RunResult:
    """What one run produced: stdout and stderr (bytes), exit_code, signal (0: none), output_limit, and
    protected_left: what the command made at a protected path (a git hook, a .envrc) that corral could not
    take out; it may run outside the sandbox, so inspect it (nearly always empty)."""

    def __init__(self, raw):
        self.stdout = ctypes.string_at(raw.stdout_data, raw.stdout_len) if raw.stdout_data else b""
        self.stderr = ctypes.string_at(raw.stderr_data, raw.stderr_len) if raw.stderr_data else b""
        self.exit_code = raw.exit_code
        self.signal = raw.signal
        self.output_limit = bool(raw.output_limit)
        self.protected_left = [os.fsdecode(raw.protected_left[i]) for i in range(raw.protected_left_count)]

    def __repr__(self):
        return "RunResult(exit_code=%d, stdout=%r, stderr=%r)" % (self.exit_code, self.stdout[:80], self.stderr[:80])


class ExecutorSet:
    """Owns executors, their scratch and every process tree they start (close() or `with`).

    toml / json: a config file's tables ([sandbox], [approval]); neither: the user's config files.
    """

    def __init__(self, toml=None, json=None, workspace=None, scratch_root=None, max_executors=0):
        policy = ctypes.c_void_p()
        if json is not None:
            _call(_c().corral_policy_from_json, _text(json), _text(workspace), ctypes.byref(policy))
        else:
            _call(_c().corral_policy_from_toml, _text(toml), _text(workspace), ctypes.byref(policy))
        try:
            self._set = ctypes.c_void_p()
            _call(_c().corral_set_create, policy, _text(scratch_root), max_executors, ctypes.byref(self._set))
        finally:
            _c().corral_policy_free(policy)
        self._executors = {}

    def executor(self, key):
        handle = ctypes.c_void_p()
        _call(_c().corral_set_executor, self._set, _text(key), ctypes.byref(handle))
        return Executor(self, handle)

    def close(self):
        if self._set:
            _c().corral_set_close(self._set)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # Closed, not freed: an Executor kept past the block gets "set_closed", never freed memory.
        self.close()

    def __del__(self):
        handle = getattr(self, "_set", None)
        if handle:
            _c().corral_set_free(handle)
            self._set = ctypes.c_void_p()


class Executor:
    """Runs commands under the set's policy, with a HOME and TMPDIR of its own."""

    def __init__(self, owner, handle):
        self._owner = owner  # keeps the set alive
        self._handle = handle

    @property
    def level(self):
        return ("full", "degraded", "none")[_c().corral_executor_level(self._handle)]

    @property
    def home(self):
        return os.fsdecode(_c().corral_executor_home(self._handle))

    @property
    def tmpdir(self):
        return os.fsdecode(_c().corral_executor_tmpdir(self._handle))

    def report(self):
        text = _c().corral_executor_report(self._handle)
        try:
            return json.loads(ctypes.string_at(text).decode())
        finally:
            _c().corral_string_free(text)

    def run(self, argv, cwd="", max_output=0):
        raw = _RunResult()
        _call(_c().corral_run_argv, self._handle, _text(cwd), _strings(list(argv)), max_output, ctypes.byref(raw))
        try:
            return RunResult(raw)
        finally:
            _c().corral_run_result_free(ctypes.byref(raw))

    def run_command(self, shell, cwd="", max_output=0):
        return self.run(["/bin/sh", "-c", shell], cwd, max_output)

    def prepare(self, argv, dir="", env=None, tty=False, rows=0, columns=0, deadline_ms=0, terminate_grace_ms=0):
        return Process(self, argv, dir, env, tty, rows, columns, deadline_ms, terminate_grace_ms)


class Process:
    """One command driven by hand: start(), the stdin/stdout/stderr (or pty) descriptors, wait()."""

    def __init__(self, executor, argv, dir, env, tty, rows, columns, deadline_ms, terminate_grace_ms):
        self._executor = executor
        self._argv = _strings(list(argv))
        self._env = _strings(["%s=%s" % item for item in (env or {}).items()])
        options = _ProcessOptions(_text(dir), self._argv, self._env, 1 if tty else 0, rows, columns, deadline_ms,
                                  terminate_grace_ms)
        self._handle = ctypes.c_void_p()
        _call(_c().corral_process_prepare, executor._handle, ctypes.byref(options), ctypes.byref(self._handle))

    def start(self):
        _call(_c().corral_process_start, self._handle)

    def _fd(self, function):
        fd = ctypes.c_int(-1)
        _call(function, self._handle, ctypes.byref(fd))
        return fd.value

    @property
    def stdin(self):
        return self._fd(_c().corral_process_stdin)

    @property
    def stdout(self):
        return self._fd(_c().corral_process_stdout)

    @property
    def stderr(self):
        return self._fd(_c().corral_process_stderr)

    @property
    def pty(self):
        return self._fd(_c().corral_process_pty)

    def close_stdin(self):
        _call(_c().corral_process_close_stdin, self._handle)

    def resize(self, rows, columns):
        _call(_c().corral_process_resize, self._handle, rows, columns)

    def signal(self, which):
        _call(_c().corral_process_signal, self._handle, which)

    def wait(self):
        """(exit_code, signal, ended_by): ended_by is "command", "deadline", "signal", "cancelled"."""
        code, sig, ended = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        _call(_c().corral_process_wait, self._handle, ctypes.byref(code), ctypes.byref(sig), ctypes.byref(ended))
        return code.value, sig.value, ENDED_BY[ended.value]

    def protected_left(self):
        """After wait(): as RunResult.protected_left."""
        count = ctypes.c_size_t()
        paths = _c().corral_process_protected_left(self._handle, ctypes.byref(count))
        return [os.fsdecode(paths[i]) for i in range(count.value)]

    def close(self):
        if self._handle:
            _c().corral_process_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()
