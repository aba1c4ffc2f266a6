"""moto's S3 server for the test suite, started by tests/it/common.rs.

usage: s3_server.py PORT

Serves on 127.0.0.1:PORT until its stdin reaches end of file (the test
binary went), then exits. With CHAINETL_TEST_COST_LOG set, it appends the
CPU it used to that file then (docs/testing.md).

moto 5 lists its own package folder (a listdir and a stat of each entry)
for every request it routes. The list is the same for the life of the
process, so it is read once here.
"""
import json
import os
import resource
import sys
import threading


def end_with_stdin():
    sys.stdin.read()
    log = os.environ.get("CHAINETL_TEST_COST_LOG")
    if log:
        r = resource.getrusage(resource.RUSAGE_SELF)
        with open(log, "a") as f:
            f.write(json.dumps({"what": "moto", "cpu": r.ru_utime + r.ru_stime}) + "\n")
    os._exit(0)


def main():
    threading.Thread(target=end_with_stdin, daemon=True).start()
    import moto.backends
    from moto.server import main as serve

    modules = tuple(moto.backends.list_of_moto_modules())
    moto.backends.list_of_moto_modules = lambda: modules
    serve(["-H", "127.0.0.1", "-p", sys.argv[1]])


if __name__ == "__main__":
    main()
