"""Fill in deploy/nginx/airline.conf for one node (docs/operators/production.md "Process layout").

    python deploy/nginx/render.py --listen 80 --upstream 127.0.0.1:8000 \\
        > /etc/nginx/conf.d/airline.conf
    python deploy/nginx/render.py --listen 127.0.0.1:8080 --upstream 127.0.0.1:8000 \\
        --standalone var/nginx > var/nginx/nginx.conf

The first writes the include for a system nginx. `--standalone PREFIX` writes a whole
nginx.conf whose pid file, logs and temporary files live under PREFIX, for a nginx run
by hand (`nginx -p PREFIX -c nginx.conf`): `make proxy` and tests/e2e/test_proxy.py.
Standard library only, so it runs before the virtualenv exists.
"""

import argparse
import os
import pwd
import resource
from pathlib import Path

TEMPLATE = Path(__file__).with_name("airline.conf")

# Open files a worker takes at most: a connection costs one (two while it is proxied)
# and a few hundred bytes at rest, so the machine's limit, not memory, is the bound.
MAX_FILES = 65536
# Files a worker keeps besides connections: logs, listening sockets, temporary files.
SPARE_FILES = 64

STANDALONE = """\
# Written by deploy/nginx/render.py --standalone: do not edit, render again.
{user}worker_processes {workers};
worker_rlimit_nofile {files};
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;

events {{
    worker_connections {connections};
}}

http {{
    default_type application/octet-stream;
    access_log {access_log};
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;

{site}}}
"""


def sized() -> tuple[int, int]:
    """(worker_rlimit_nofile, worker_connections) for this machine: the hard open-files
    limit (which nginx's master may raise its workers to, up to MAX_FILES), and the
    connections that leaves a worker. A worker past its files refuses to accept, and
    every new connection waits in the listen queue: /health with it."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = MAX_FILES if hard == resource.RLIM_INFINITY else min(hard, MAX_FILES)
    return files, max(files - SPARE_FILES, 256)


def render(*, listen: str, upstream: str) -> str:
    """airline.conf with its placeholders filled in, headed by the main-context lines
    sized for this machine, which an http-context include cannot set itself."""
    files, connections = sized()
    head = (
        f"# For nginx.conf on this machine ({os.cpu_count()} cores, {files} open files):\n"
        f"#   worker_processes auto; worker_rlimit_nofile {files};\n"
        f"#   events {{ worker_connections {connections}; }}\n"
    )
    return head + _site(listen=listen, upstream=upstream)


def _site(*, listen: str, upstream: str) -> str:
    return TEMPLATE.read_text().replace("@@LISTEN@@", listen).replace("@@UPSTREAM@@", upstream)


def render_standalone(
    *, listen: str, upstream: str, prefix: Path, workers: str = "auto", access_log: bool = False
) -> str:
    """A whole nginx.conf around airline.conf, everything it writes under `prefix`
    (created here). Run as root, its workers stay root's: the files under `prefix` are
    a user's, not the system nginx's."""
    prefix = prefix.resolve()
    prefix.mkdir(parents=True, exist_ok=True)
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
    site = "".join(
        f"    {line}\n" if line else "\n"
        for line in _site(listen=listen, upstream=upstream).splitlines()
    )
    files, connections = sized()
    return STANDALONE.format(
        user=user,
        workers=workers,
        files=files,
        connections=connections,
        prefix=prefix,
        access_log=f"{prefix}/access.log" if access_log else "off",
        site=site,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True, help="nginx's listen: PORT or ADDRESS:PORT")
    parser.add_argument("--upstream", required=True, help="gunicorn's ADDRESS:PORT")
    parser.add_argument("--standalone", metavar="PREFIX", help="write a whole nginx.conf")
    parser.add_argument(
        "--workers", default="auto", help="standalone: worker processes (auto: one a core)"
    )
    parser.add_argument("--access-log", action="store_true", help="standalone: keep one")
    args = parser.parse_args()
    if args.standalone:
        print(
            render_standalone(
                listen=args.listen,
                upstream=args.upstream,
                prefix=Path(args.standalone),
                workers=args.workers,
                access_log=args.access_log,
            ),
            end="",
        )
    else:
        print(render(listen=args.listen, upstream=args.upstream), end="")


if __name__ == "__main__":
    main()
