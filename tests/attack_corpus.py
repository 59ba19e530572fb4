"""Hostile blocks of model code: the attack corpus run by tests/test_attack_corpus.py.

Each entry is ``(name, kind, code)``. ``kind`` says what the test expects of an isolated
executor: ``hang`` ends as ExecutionTimeout within five times the deadline, ``memory`` as
ExecutionMemoryExceeded, ``exit`` and ``channel`` as WorkerDied; every other kind (``escape``, ``file``,
``net``, ``patch``, ``fork``, ``channel``, ``secret``) must leave the host as it was: no file
outside the scratch directory and no connection to the test's socket (under ``namespace``),
the host's json/decimal/math unchanged, a trace that loads.

Placeholders: ``{canary}`` is a directory outside the scratch directory (the tests check it
stays empty), ``{port}`` a port the test listens on at 127.0.0.1. Only 127.0.0.1 is ever
contacted; fork bombs are bounded (2**5 processes) so a failure cannot take the machine down.
"""

from __future__ import annotations

# Three ways from the allowed modules alone to the `os` module's globals (no blocked name).
OPERATOR = (
    "import operator\n"
    "w = [c for c in operator.methodcaller('__subclasses__')(object) "
    "if c.__name__ == '_wrap_close'][0]\n"
    "os_ = operator.attrgetter('__init__.__globals__')(w)\n"
)
FORMATTER = (
    "import string\n"
    "f = string.Formatter()\n"
    "subs = f.get_field('0.__class__.__base__.__subclasses__', [()], {{}})[0]()\n"
    "w = [c for c in subs if c.__name__ == '_wrap_close'][0]\n"
    "os_ = f.get_field('0.__init__.__globals__', [w], {{}})[0]\n"
)
TYPING = (
    "import typing\n"
    "class A:\n"
    "    x: \"__import__('os').__dict__\"\n"
    "os_ = typing.get_type_hints(A)['x']\n"
)
CONNECT = (
    "s = os_['sys'].modules['socket'].socket() if 'socket' in os_['sys'].modules else "
    "os_['sys'].modules['importlib'].import_module('socket').socket()\n"
    "s.settimeout(0.5)\n"
    "s.connect(('127.0.0.1', {port}))\n"
)
PYCONNECT = (
    'python3 -S -c \\"import socket; s=socket.socket(); s.settimeout(0.5); '
    "s.connect(('127.0.0.1', {port}))\\\""
)

CORPUS: list[tuple[str, str, str]] = [
    # -- the three paths of the issue, each running a shell command ------------------------
    ("operator-system", "escape", OPERATOR + "os_['system']('touch {canary}/operator')"),
    ("formatter-system", "escape", FORMATTER + "os_['system']('touch {canary}/formatter')"),
    ("typing-system", "escape", TYPING + "os_['system']('touch {canary}/typing')"),
    (
        "typing-annotation-runs",
        "escape",
        "import typing\nclass B:\n    y: \"__import__('os').system('touch {canary}/annot')\"\n"
        "typing.get_type_hints(B)",
    ),
    # -- C-level hangs: no Python line runs, so no line budget can stop them ---------------
    ("power-tower", "hang", "x = 10**10**8"),
    ("catastrophic-regex", "hang", "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')"),
    ("factorial", "hang", "import math\nmath.factorial(10**7)"),
    ("sum-range", "hang", "sum(range(10**12))"),
    ("huge-pow", "hang", "pow(3, 10**9)"),
    (
        "decimal-precision",
        "hang",
        "import decimal\ndecimal.getcontext().prec = 10**7\ndecimal.Decimal(2).sqrt()",
    ),
    ("shell-sleep", "hang", OPERATOR + "os_['system']('sleep 60')"),
    # -- switching the line budget off, then looping ---------------------------------------
    (
        "settrace-none-loop",
        "hang",
        OPERATOR + "os_['sys'].settrace(None)\nwhile True:\n    pass",
    ),
    (
        "settrace-none-loop-formatter",
        "hang",
        FORMATTER + "os_['sys'].settrace(None)\nwhile True:\n    pass",
    ),
    (
        "budget-object-patched",
        "hang",
        OPERATOR + "b = os_['sys'].modules['agentic_machines.execution.budget']\n"
        "b._deadline = float('inf')\nb._local_trace = lambda *a: None\nos_['sys'].settrace(None)\n"
        "while True:\n    pass",
    ),
    # -- memory bombs -------------------------------------------------------------------------
    ("big-string", "memory", "x = 'x' * (4 * 1024**3)"),
    ("big-list", "memory", "x = [0] * 10**9"),
    ("big-bytearray", "memory", "x = bytearray(10**10)"),
    ("list-of-range", "memory", "x = list(range(10**9))"),
    ("big-bytes", "memory", "x = b'\\0' * 2**40"),
    # growing by zeroed chunks (untouched pages): the limit is reached in milliseconds, so
    # the outcome does not depend on how fast a busy machine can fill memory
    ("growing-list", "memory", "x = []\nwhile True:\n    x.append(bytes(2**28))"),
    ("growing-comprehension", "memory", "x = [bytes(2**26) for _ in range(10**6)]"),
    # -- ending the worker ------------------------------------------------------------------------
    ("os-exit-operator", "exit", OPERATOR + "os_['_exit'](7)"),
    ("os-exit-formatter", "exit", FORMATTER + "os_['_exit'](0)"),
    ("os-exit-typing", "exit", TYPING + "os_['_exit'](1)"),
    ("kill-self", "exit", OPERATOR + "os_['kill'](os_['getpid'](), 9)"),
    ("abort", "exit", OPERATOR + "os_['abort']()"),
    # -- changing modules for later runs ------------------------------------------------------------
    (
        "json-iterencode",
        "patch",
        "import json\njson.JSONEncoder.iterencode = lambda self, o, _one_shot=False: iter(['forged'])",
    ),
    ("decimal-prec", "patch", "import decimal\ndecimal.getcontext().prec = 2"),
    (
        "math-pi",
        "patch",
        OPERATOR + "os_['sys'].modules['math'].pi = 3\nos_['sys'].modules['math'].sqrt = abs",
    ),
    (
        "json-dumps",
        "patch",
        OPERATOR + "os_['sys'].modules['json'].dumps = lambda *a, **k: 'forged'\n"
        "os_['sys'].modules['json'].loads = lambda *a, **k: {{'forged': True}}",
    ),
    # -- fork bombs (bounded) ------------------------------------------------------------------------
    (
        "fork-then-hang",
        "hang",
        OPERATOR + "for _ in range(5):\n    os_['fork']()\nos_['system']('sleep 60')",
    ),
    ("shell-background", "escape", OPERATOR + "os_['system']('(sleep 60 &) ; true')"),
    # -- files outside the scratch directory -------------------------------------------------------
    (
        "os-open-canary",
        "file",
        OPERATOR + "fd = os_['open']('{canary}/opened', os_['O_WRONLY'] | os_['O_CREAT'])\n"
        "os_['write'](fd, b'pwned')",
    ),
    ("mkdir-canary", "file", OPERATOR + "os_['mkdir']('{canary}/dir')"),
    ("shell-redirect", "file", OPERATOR + "os_['system']('echo pwned > {canary}/shell')"),
    ("tmp-write", "file", OPERATOR + "os_['system']('touch /tmp/am-corpus-{token}')"),
    ("shm-write", "file", OPERATOR + "os_['system']('touch /dev/shm/am-corpus-{token}')"),
    (
        "big-file-in-scratch",
        "file",
        OPERATOR + "fd = os_['open']('big', os_['O_WRONLY'] | os_['O_CREAT'])\n"
        "os_['write'](fd, b'x' * (64 * 1024 * 1024))",
    ),
    # -- network ------------------------------------------------------------------------------------
    ("socket-connect", "net", OPERATOR + CONNECT),
    ("socket-connect-formatter", "net", FORMATTER + CONNECT),
    ("shell-connect", "net", OPERATOR + "os_['system'](\"" + PYCONNECT + '")'),
    # -- the message channel and the environment ----------------------------------------------------
    (
        "garbage-on-channel",
        "channel",
        OPERATOR + "for fd in range(3, 12):\n    try:\n        os_['write'](fd, b'garbage\\n')\n"
        "    except Exception:\n        pass",
    ),
    ("read-secrets", "secret", OPERATOR + "print(sorted(os_['environ'].items()))"),
    (
        "raise-systemexit",
        "secret",
        "import operator\nraise [c for c in operator.methodcaller('__subclasses__')(BaseException) "
        "if c.__name__ == 'SystemExit'][0](3)",
    ),
]
