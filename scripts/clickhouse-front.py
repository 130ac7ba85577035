#!/usr/bin/env python3
"""The smallest HTTP front that speaks ClickHouse's HTTP interface, over a real
ClickHouse engine (chdb-core, in-process, the current release on PyPI).

What is real: parsing, planning and running every statement, the MergeTree and
ReplacingMergeTree engines, FINAL, insert_deduplication_token, readonly, the
RowBinary reader and writer, query settings. All of that is ClickHouse's own
code inside chdb. What this front adds (and nothing more): the HTTP part of
`clickhouse-server` that the `clickhouse` Rust crate uses —

  * the statement from the `query` URL parameter, the body appended to it
    (INSERT data) or the body alone when there is no `query`;
  * URL parameters that are settings become a SETTINGS clause; `database`
    becomes the current database, `default_format` the output format;
  * INSERT ... FORMAT F with a body: the body is written to a temporary file
    and the engine reads it with `INSERT ... FROM INFILE` (its own parser);
  * the user and password from X-ClickHouse-User/X-ClickHouse-Key, HTTP basic
    auth or the `user`/`password` parameters, checked against
    DIAG_CLICKHOUSE_USER/DIAG_CLICKHOUSE_PASSWORD (code 516 when wrong);
  * an exception as HTTP 500 (400 for syntax, 404 for unknown tables, 403 for
    auth) with X-ClickHouse-Exception-Code and the engine's message as body;
  * GET /ping answers "Ok.".
  * For fault tests only: while the file named by DIAG_CLICKHOUSE_REFUSE
    exists, every request is answered 503; while DIAG_CLICKHOUSE_SLOW names a
    file that exists, each INSERT is done, then its answer waits the seconds
    the file holds (and the file `<that name>.held` says one is held) (a confirmation that comes late, or never: the window in
    which a client killed mid-batch has sent rows it was not told were taken).

One engine session serves every request, one at a time (chdb is not
thread-safe); that is enough for tests and benchmarks on one machine.
"""

import base64
import os
import re
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from chdb import session as chdb_session

# URL parameters that are not settings (clickhouse-server's HTTPHandler).
NOT_SETTINGS = {
    "query", "database", "default_format", "user", "password", "quota_key",
    "query_id", "session_id", "session_timeout", "session_check", "role",
    "compress", "decompress", "buffer_size", "wait_end_of_query", "stacktrace",
}
SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
INSERT_FORMAT = re.compile(
    r"^\s*(INSERT\s+INTO\s+.+?)\s+FORMAT\s+([A-Za-z0-9]+)\s*$", re.I | re.S
)
DB_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

LOCK = threading.Lock()
SESSION = None
USER = os.environ.get("DIAG_CLICKHOUSE_USER", "default")
PASSWORD = os.environ.get("DIAG_CLICKHOUSE_PASSWORD", "")
REFUSE = os.environ.get("DIAG_CLICKHOUSE_REFUSE", "")
SLOW = os.environ.get("DIAG_CLICKHOUSE_SLOW", "")
TMP = None


def quote(value):
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def settings_clause(params):
    parts = []
    for key, value in params:
        if key in NOT_SETTINGS or key.startswith("param_"):
            continue
        if not SETTING_NAME.match(key):
            raise Fault(115, f"Unknown setting {key}", 400)
        if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={quote(value)}")
    return " SETTINGS " + ", ".join(parts) if parts else ""


class Fault(Exception):
    def __init__(self, code, message, status=500):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def engine_fault(error):
    text = str(error)
    m = re.search(r"Code:\s*(\d+)", text)
    code = int(m.group(1)) if m else 1000
    status = {62: 400, 60: 404, 81: 404, 164: 403, 516: 403}.get(code, 500)
    return Fault(code, text if text.startswith("Code:") else f"Code: {code}. DB::Exception: {text}", status)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # NB: the headers and the body go out in two writes; with Nagle's algorithm
    # and the client's delayed ACK each small reply waited about 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet: the tests read stderr only on failure
        if os.environ.get("DIAG_CLICKHOUSE_LOG"):
            sys.stderr.write("front: " + fmt % args + "\n")

    def do_GET(self):
        self.handle_request(b"")

    def do_POST(self):
        length = self.headers.get("Content-Length")
        if length is not None:
            body = self.rfile.read(int(length))
        elif self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self.read_chunked()
        else:
            body = b""
        self.handle_request(body)

    def read_chunked(self):
        out = bytearray()
        while True:
            line = self.rfile.readline().strip()
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return bytes(out)
            out += self.rfile.read(size)
            self.rfile.readline()

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def credentials(self, params):
        user = self.headers.get("X-ClickHouse-User")
        key = self.headers.get("X-ClickHouse-Key")
        auth = self.headers.get("Authorization", "")
        if user is None and auth.lower().startswith("basic "):
            user, _, key = base64.b64decode(auth[6:]).decode().partition(":")
        if user is None:
            user = params.get("user", "default")
            key = params.get("password", "")
        return user, key or ""

    def handle_request(self, body):
        url = urllib.parse.urlsplit(self.path)
        if REFUSE and os.path.exists(REFUSE):
            return self.reply(503, b"refusing (fault test)\n")
        if url.path == "/ping":
            return self.reply(200, b"Ok.\n")
        pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
        params = dict(pairs)
        try:
            user, key = self.credentials(params)
            if user != USER or key != PASSWORD:
                raise Fault(516, f"Code: 516. DB::Exception: {user}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)", 403)
            self.delay = 0
            result = self.run(params, pairs, body)
            if self.delay:
                # NB: a marker the fault tests wait for: an insert is taken, its answer held.
                open(SLOW + ".held", "w").close()
                time.sleep(self.delay)
            self.reply(200, result, [("Content-Type", "application/octet-stream")])
        except Fault as f:
            message = f.message if f.message.startswith("Code:") else f"Code: {f.code}. DB::Exception: {f.message}"
            self.reply(f.status, (message + "\n").encode(), [("X-ClickHouse-Exception-Code", str(f.code))])

    def run(self, params, pairs, body):
        query = params.get("query")
        settings = settings_clause(pairs)
        database = params.get("database", "")
        if database and not DB_NAME.match(database):
            raise Fault(81, f"Database {database} does not exist", 404)
        fmt = params.get("default_format", "TabSeparated")
        with LOCK:
            try:
                if database:
                    SESSION.query(f"USE {database}")
                if query is not None and body:
                    m = INSERT_FORMAT.match(query)
                    if m:
                        return self.insert(m.group(1), m.group(2), settings, body)
                    query = query + "\n" + body.decode()
                elif query is None:
                    text = body.decode()
                    m = INSERT_FORMAT.match(text.split("\n", 1)[0]) if "\n" in text else None
                    query = text
                    if m:
                        return self.insert(m.group(1), m.group(2), settings, text.split("\n", 1)[1].encode())
                query = query.strip().rstrip(";")
                if settings:
                    query = add_settings(query, settings)
                result = SESSION.query(query, fmt)
                data = result.bytes() if result is not None else b""
                return data or b""
            except Fault:
                raise
            except Exception as e:  # the engine's exception, passed on as the server would
                raise engine_fault(e)

    def insert(self, head, fmt, settings, data):
        fd, path = tempfile.mkstemp(dir=TMP, suffix=".bin")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            SESSION.query(f"{head} FROM INFILE {quote(path)}{settings} FORMAT {fmt}")
            if SLOW and os.path.exists(SLOW):
                with open(SLOW) as f:
                    # NB: waited for outside the engine's lock (handle_request),
                    # so that other clients can see the rows meanwhile.
                    self.delay = float(f.read().strip() or "3")
            return b""
        finally:
            os.unlink(path)


def add_settings(query, settings):
    """SETTINGS go before a trailing FORMAT clause."""
    m = re.search(r"\s+FORMAT\s+[A-Za-z0-9]+\s*$", query, re.I)
    if m:
        return query[: m.start()] + settings + query[m.start():]
    return query + settings


def main():
    global SESSION, TMP
    data_dir, port = sys.argv[1], int(sys.argv[2])
    os.makedirs(data_dir, exist_ok=True)
    TMP = os.path.join(data_dir, "tmp")
    os.makedirs(TMP, exist_ok=True)
    SESSION = chdb_session.Session(os.path.join(data_dir, "engine"))
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"clickhouse front on 127.0.0.1:{port}, engine {SESSION.query('SELECT version()', 'TSV').bytes().decode().strip()}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
