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
answers one JSON line, {"code": exit code, "stdout": N, "stderr": M},
then the N bytes the script wrote to stdout and the M it wrote to stderr,
as written (a read-back's output is megabytes of JSON: quoted again
inside a JSON string, it would cost its writer and its reader as much
again).

Each run is a fresh fork: its globals, environment and open files are its
own, as in a process of its own. The objects of the warm imports are
frozen out of the garbage collector (gc.freeze) before the first fork: a
child's full collection would otherwise walk every one of them, writing
to each page it walks, and so copy the server's heap page by page. The
server's one other thread only waits on stdin, holding no lock a child
needs. It exits when its parent (the test binary) does: stdin reaches
end of file.

usage: warm_python.py SOCKET_PATH --spark

The Spark read-backs' server: one Spark session (one JVM) for the whole
suite instead of one a read-back.
Requests run one at a time in this process, not in a fork (the JVM and
its gateway are not fork-safe); what a script changes (variables,
directory, argv, the module search path) is put back after it. Spark's
file-listing cache is off (`filesourcePartitionFileCacheSize` 0), so a
folder read twice is listed twice. A script's `getOrCreate()` gets this
session.
"""
import gc
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
    import sqlite3  # noqa: F401

    import pyarrow.acero  # noqa: F401
    import pyarrow.compute  # noqa: F401
    import pyarrow.dataset  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    try:
        import deltalake  # noqa: F401
        import deltalake.fs  # noqa: F401
        import pyiceberg.catalog.sql  # noqa: F401
        import pyiceberg.table  # noqa: F401
        # What a read-back imports only once it reads (pyiceberg's Arrow
        # reader and Avro decoder, SQLAlchemy's sqlite dialect), which each
        # forked child would import again.
        import pyiceberg.avro.decoder_fast  # noqa: F401
        import pyiceberg.io.pyarrow  # noqa: F401
        import pyiceberg.table.puffin  # noqa: F401
        import sqlalchemy.dialects.sqlite  # noqa: F401
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
    answer(conn)


def run_in_process(conn):
    """In the Spark server: one request, answered on `conn`, then this
    process's state put back as it was."""
    env, cwd, argv, path = dict(os.environ), os.getcwd(), list(sys.argv), list(sys.path)
    fds = os.dup(1), os.dup(2)
    streams = sys.stdout, sys.stderr
    try:
        answer(conn)
    finally:
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        for fd in fds:
            os.close(fd)
        sys.stdout, sys.stderr = streams
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv[:], sys.path[:] = argv, path
        conn.close()


def cpu_seconds():
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def answer(conn):
    """Reads one request from `conn`, runs it here, answers it."""
    cpu_at_start = cpu_seconds()
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

    def raw(f):
        f.seek(0)
        return f.read()

    log = os.environ.get("CHAINETL_TEST_COST_LOG")
    if log:
        # What this read-back cost, by test and script (docs/testing.md).
        with open(log, "a") as f_log:
            f_log.write(json.dumps({
                "test": os.environ.get("CHAINETL_TEST_NAME"),
                "what": argv[0] if argv[0] != "-c" else "-c " + argv[1][:40],
                "cpu": cpu_seconds() - cpu_at_start,
            }) + "\n")
    stdout, stderr = raw(out), raw(err)
    f.write(json.dumps({"code": code, "stdout": len(stdout), "stderr": len(stderr)}).encode() + b"\n")
    f.write(stdout)
    f.write(stderr)
    f.flush()


def spark_session():
    """The session every Spark script's `getOrCreate()` gets."""
    import java_runtime

    java_runtime.require()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.hive.filesourcePartitionFileCacheSize", "0")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def no_huge_pages():
    """Transparent huge pages off for this process and its children
    (prctl PR_SET_THP_DISABLE, which fork and exec keep). A read-back's
    libraries ask for huge pages for their heaps; a child that lives a
    fraction of a second then zeroes two megabytes for each page it
    touches first, and exits before the page pays back."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main():
    no_huge_pages()
    path = sys.argv[1]
    spark = sys.argv[2:] == ["--spark"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    # Nothing but READY goes to the test binary on this pipe (it reads one
    # line): the JVM started below inherits descriptor 1, and a full pipe
    # nobody reads would stall it.
    ready = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    warm()
    if spark:
        try:
            spark_session()
        except SystemExit as e:  # no Java: each script's require() says so
            sys.stderr.write(f"{e.code}\n")
        os._exit = script_exit
    else:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
        gc.freeze()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    # Stop when the test binary goes: its end of our stdin closes. The
    # watcher thread is copied into no child (fork copies only the
    # caller), and holds no lock a child needs: it only reads stdin.
    threading.Thread(target=lambda: (sys.stdin.read(), REAL_EXIT(0)), daemon=True).start()
    ready.write("READY\n")
    ready.close()
    while True:
        conn, _ = server.accept()
        if spark:
            run_in_process(conn)
            continue
        if os.fork() == 0:
            server.close()
            try:
                run(conn)
            finally:
                REAL_EXIT(0)
        conn.close()


if __name__ == "__main__":
    main()
