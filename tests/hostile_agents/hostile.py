"""Agent functions that touch the process they run in, for tests/test_hostile_agents.py.

Each one calls the model, does something to its process between model calls, and calls
the model again: a checker must show the same outcomes whatever they do, and stay as it was.
"""

import contextlib
import ctypes
import io
import os
import random
import signal
import sys
import tempfile
import threading
import time

CALLS = 0  # a module global, counted by counter()


def redirect_stdout(model):
    # the 10-line reproducer of issue 35: the first model call inside redirect_stdout
    print("before the call")
    with contextlib.redirect_stdout(io.StringIO()):
        first = model("first?")
    print("after the call")
    return first + model(f"got {first}; second?")


def redirect_stderr(model):
    with contextlib.redirect_stderr(io.StringIO()):
        first = model("first?")
    return first + model(f"got {first}; second?")


def chdir(model):
    os.chdir(tempfile.mkdtemp(prefix="hostile-chdir-"))
    first = model("first?")
    return first + model(f"got {first}; second?")


def environ(model):
    os.environ["HOSTILE_AGENT"] = "was here"
    first = model("first?")
    return first + model(f"got {first}; second?")


def recursion_limit(model):
    sys.setrecursionlimit(80)
    first = model("first?")
    return first + model(f"got {first}; second?")


def signal_handler(model):
    signal.signal(signal.SIGINT, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    first = model("first?")
    return first + model(f"got {first}; second?")


def sys_path(model):
    sys.path.insert(0, "/hostile/path")
    first = model("first?")
    return first + model(f"got {first}; second?")


def sys_modules(model):
    sys.modules["hostile_module"] = sys
    sys.modules["json"] = None  # every later `import json` in this process fails
    first = model("first?")
    return first + model(f"got {first}; second?")


def exits(model):
    first = model("first?")
    if first == "a":
        sys.exit(3)
    return first + model(f"got {first}; second?")


def os_exit(model):
    first = model("first?")
    if first == "a":
        os._exit(7)
    return first + model(f"got {first}; second?")


def segfault(model):
    first = model("first?")
    if first == "a":
        ctypes.string_at(0)
    return first + model(f"got {first}; second?")


def counter(model):
    global CALLS
    CALLS += 1
    first = model(f"call {CALLS}: first?")
    CALLS += 1
    return first + model(f"call {CALLS}: got {first}; second?")


def temp_files(model):
    folder = tempfile.mkdtemp(prefix="hostile-temp-")
    with open(os.path.join(folder, "note.txt"), "w") as fh:
        fh.write("x")
    first = model("first?")
    return first + model(f"got {first}; second?")


def unseeded_random(model):
    first = model(f"first? {random.random():.6f}")
    return first + model(f"got {first}; second? {random.random():.6f}")


def threads(model):
    threading.Thread(
        target=lambda: [print("thread!") or time.sleep(0.05) for _ in range(40)], daemon=True
    ).start()
    first = model("first?")
    return first + model(f"got {first}; second?")


def blocking_tool(model):
    first = model("first?")
    if first == "a":
        time.sleep(3600)  # a tool that never answers
    return first + model(f"got {first}; second?")
