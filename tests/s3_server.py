"""moto's S3 server for the test suite, started by tests/it/common.rs.

usage: s3_server.py PORT

Serves on 127.0.0.1:PORT until its stdin reaches end of file (the test
binary went), then exits. With CHAINETL_TEST_COST_LOG set, it appends the
CPU it used to that file then (docs/testing.md).

moto 5 lists its own package folder (a listdir and a stat of each entry)
for every request it routes. The list is the same for the life of the
process, so it is read once here.

S3 applies a write whole, its conditions (If-None-Match: *, If-Match)
checked and the object stored in one step. moto checks, then stores, on
a thread a request: two creators of one key at once could both be told
they created it. So here writes (PUT, POST, DELETE) are applied one at
a time, each request's body read first, outside the lock, so that a
client stopped mid-body holds up no one.
Reads are not held up.

moto's XML serializer parses every timestamp it writes again (dateutil),
for each key of a listing: here each distinct timestamp is converted
once.

Each request is logged (to stderr) only with CHAINETL_TEST_MOTO_LOG set,
where the suite keeps that log; otherwise the log would be thrown away,
its cost paid on every request (figures: docs/testing.md).
"""
import io
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


def one_write_at_a_time(app):
    """`app`, applying writes one at a time (see the module doc)."""
    from werkzeug.wsgi import get_input_stream

    lock = threading.Lock()

    def serve(environ, start_response):
        if environ.get("REQUEST_METHOD") not in ("PUT", "POST", "DELETE"):
            return app(environ, start_response)
        # A chunked body ends where the server says (input_terminated);
        # any other is Content-Length long, or empty.
        if environ.get("wsgi.input_terminated") or (environ.get("CONTENT_LENGTH") or "").isdigit():
            body = get_input_stream(environ).read()
        else:
            body = b""
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        environ.pop("wsgi.input_terminated", None)
        with lock:
            return list(app(environ, start_response))

    return serve


def convert_each_timestamp_once():
    """moto's timestamp conversion, remembered by value (see the module doc)."""
    from moto.core import serialize

    convert = serialize.TimestampSerializer._convert_timestamp_to_str
    done = {}

    def remembered(self, value, timestamp_format):
        key = (value, timestamp_format)
        if key not in done:
            done[key] = convert(self, value, timestamp_format)
        return done[key]

    serialize.TimestampSerializer._convert_timestamp_to_str = remembered


def main():
    threading.Thread(target=end_with_stdin, daemon=True).start()
    import moto.backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from moto.server import MotoRequestHandler
    from werkzeug.serving import run_simple

    convert_each_timestamp_once()
    modules = tuple(moto.backends.list_of_moto_modules())
    moto.backends.list_of_moto_modules = lambda: modules
    os.environ.setdefault("MOTO_PORT", sys.argv[1])
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True
    handler = MotoRequestHandler
    if not os.environ.get("CHAINETL_TEST_MOTO_LOG"):
        class Unlogged(MotoRequestHandler):
            def log_request(self, *args, **kwargs):
                pass

        handler = Unlogged
    run_simple("127.0.0.1", int(sys.argv[1]), one_write_at_a_time(app), threaded=True, request_handler=handler)


if __name__ == "__main__":
    main()
