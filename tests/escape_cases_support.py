"""The escape suite's hostile programs, each with the error it must end in: the suite plays them and the rules
document's sandbox table must name every outcome."""

CASES = [
    # id, source, error type, reason, line, words in the message
    ("read-file", 'text = eval(\'open("/etc/passwd").read()\')\nlog(text)\n', "PermissionError", "runtime_error", 1, "no files"),
    ("list-dir", 'import os\nlog(os.listdir("/"))\n', "PermissionError", "runtime_error", 2, "no files"),
    ("environment", 'import os\nlog(os.environ)\n', "PermissionError", "runtime_error", 2, "environment"),
    ("os-system", 'import os\nrun = eval("os.system")\nrun("touch pwned")\n', "AttributeError", "runtime_error", 2, "system"),
    ("socket", 'import socket\nsocket.socket()\n', "ModuleNotFoundError", "runtime_error", 1, "socket"),
    ("subprocess", 'import subprocess\nsubprocess.run(["id"])\n', "ModuleNotFoundError", "runtime_error", 1, "subprocess"),
    ("ctypes", 'import ctypes\nctypes.CDLL(None)\n', "ModuleNotFoundError", "runtime_error", 1, "ctypes"),
    ("builtins", 'import builtins\nlog(builtins)\n', "ModuleNotFoundError", "runtime_error", 1, "builtins"),
    ("dunder-import", 'x = 1\neval("__import__(\'os\')")\n', "NameError", "runtime_error", 2, "__import__"),
    ("subclasses", 'x = 1\nk = eval("().__class__.__base__.__subclasses__()")\nlog(k)\n', "AttributeError", "runtime_error", 2, "__class__"),
    ("globals", 'def f() -> int:\n    return 1\nlog(f.__globals__)\n', "AttributeError", "runtime_error", 3, "__globals__"),
    ("frames", 'import sys\nlog(eval("sys._getframe()"))\n', "AttributeError", "runtime_error", 2, "_getframe"),
    ("code-object", 'f = lambda: 0\nlog(f.__code__)\n', "AttributeError", "runtime_error", 2, "__code__"),
    ("traceback", 'try:\n    x = 1 // 0\nexcept Exception as e:\n    log(e.__traceback__)\n', "AttributeError", "runtime_error", 4, "__traceback__"),
    ("infinite-loop", 'log("spinning")\nwhile True:\n    pass\n', "TimeoutError", "wall_clock", None, "time limit"),
    ("memory-bomb", 'x = "a" * (10 ** 9)\n', "MemoryError", "limit", 1, "memory limit"),
    ("memory-growth", 'xs = []\nwhile True:\n    xs.append("x" * 100000)\n', "MemoryError", "limit", None, "memory limit"),
    ("oversized-value", 's = "x" * 6000000\nlog(s, s, s)\n', "ValueError", "runtime_error", None, "too large"),
    ("deep-recursion", 'def f(n: int) -> int:\n    return f(n + 1)\nf(0)\n', "RecursionError", "limit", 2, "recursion"),
]
