"""A fork server for the test suite's Python readers: imports the heavy
modules once (pyarrow, duckdb, polars, pyiceberg, deltalake), then runs
each request in a child forked from that warm process, so a read-back
script starts in milliseconds instead of a second of imports.

usage: warm_python.py SOCKET_PATH

Listens on a Unix socket and prints "READY" once it does. A request is one
JSON line: {"argv": ["script.py" | "-c", ...], "env": {NAME: VALUE or null},
"cwd": DIR or null} — argv as `python` would take it after the
interpreter's name. The child sets (or, for null, removes) the variables,
moves to `cwd`, runs the script as __main__ (or the `-c` code) with that argv, and
answers one JSON line: {"code": exit code, "stdout": text, "stderr": text}.

Each run is a fresh fork: its globals, environment and open files are its
own, as in a process of its own. The server's one other thread only
waits on stdin, holding no lock a child needs. It exits when its parent
(the test binary) does: stdin reaches end of file.
"""
import io
import json
import os
import runpy
import signal
import socket
import sys
import tempfile
import threading
import traceback


def warm():
    # Imported for their start-up cost only; children use them as their
    # scripts import them.
    import duckdb  # noqa: F401
    import polars  # noqa: F401
    import pyarrow.dataset  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    try:
        import deltalake  # noqa: F401
        import pyiceberg.catalog.sql  # noqa: F401
        import pyiceberg.table  # noqa: F401
    except ImportError:
        pass


# Scripts end with os._exit (deltalake can abort the interpreter at a
# normal exit): in a child it must end the script, not the child before
# it answers.
REAL_EXIT = os._exit


def script_exit(code=0):
    raise SystemExit(code)


def run(conn):
    """In the child: one request, answered on `conn`."""
    # The server lets the kernel reap its children; a script's own
    # subprocesses must be waited for, with their exit codes.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os._exit = script_exit
    f = conn.makefile("rwb")
    req = json.loads(f.readline())
    for name, value in (req.get("env") or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if req.get("cwd"):
        os.chdir(req["cwd"])
    argv = req["argv"]
    # The child's own file descriptors 1 and 2 go to files, so output
    # written below Python (a library's, a subprocess's) is caught too.
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path.insert(0, "")
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - a script's failure is its exit code 1
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass

    def text(f):
        f.seek(0)
        return f.read().decode("utf-8", "replace")

    answer = json.dumps({"code": code, "stdout": text(out), "stderr": text(err)})
    f.write(answer.encode() + b"\n")
    f.flush()


def main():
    path = sys.argv[1]
    warm()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    # Stop when the test binary goes: its end of our stdin closes. The
    # watcher thread is copied into no child (fork copies only the
    # caller), and holds no lock a child needs: it only reads stdin.
    threading.Thread(target=lambda: (sys.stdin.read(), REAL_EXIT(0)), daemon=True).start()
    print("READY", flush=True)
    # Nothing more for the test binary on this pipe: it reads one line.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    while True:
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            try:
                run(conn)
            finally:
                REAL_EXIT(0)
        conn.close()


if __name__ == "__main__":
    main()
