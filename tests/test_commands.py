"""The command model (wave-2 spec §W4): each shell construct and each spelling of a quit call, with
the facts the rules read from it, not only their outcome."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshlint.mesh.envsources import EnvSources
from meshlint.mesh.facts.commands import CommandModel
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

POD = """apiVersion: v1
kind: Pod
metadata: {{name: job}}
spec:
  restartPolicy: Never
  containers:
    - name: job
      image: {image}
      env: {env}
      command:
        - {shell}
        - {flag}
        - |
{script}
"""


def model(script: str, env: str = "[]", shell: str = "sh", flag: str = "-c", image: str = "job:1", sources: EnvSources | None = None) -> CommandModel:
    body = textwrap.indent(textwrap.dedent(script).strip("\n"), " " * 10)
    text = POD.format(script=body, env=env, shell=shell, flag=flag, image=image)
    return CommandModel(container_of(text), sources, "", "pod.yaml")


def container_of(text: str):
    """The first container of the manifest's first pod."""
    return pod_templates(next(resources_of(load_text("pod.yaml", text).documents[0])))[0].containers[0]


def exec_model(argv: str, env: str = "[]") -> CommandModel:
    return CommandModel(container_of(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n    - name: c\n      image: c\n      env: {env}\n{argv}"))


QUIT = "http://localhost:15020/quitquitquit"
# The script starts on line 14 of POD, column 11.
FIRST = 14


def facts(call):
    """The facts of a quit call that the rules read."""
    return {
        "kind": call.kind,
        "tool": call.tool,
        "method": call.method,
        "host": call.host,
        "port": call.port,
        "path": call.path,
        "on failure": call.runs_on_failure,
        "exit trap": call.in_exit_trap,
        "dropped": call.dropped is not None,
        "quits": call.quits,
        "line": call.position.line,
        "column": call.position.column,
    }


def assert_one_call(script, expected):
    [call] = model(script).shutdown_calls
    assert {k: v for k, v in facts(call).items() if k in expected} == expected


def istio(tool="curl", method="POST", port=15020, path="/quitquitquit", host="localhost", **changes):
    row = {"kind": "istio-quit", "tool": tool, "method": method, "host": host, "port": port, "path": path}
    row |= {"on failure": True, "exit trap": False, "dropped": False, "quits": True}
    return row | {k.replace("_", " "): v for k, v in changes.items()}


@pytest.mark.parametrize(
    "script, expected",
    [
        # `;` and newlines: the call runs however the work ends.
        (f"./work; curl -fsS -X POST {QUIT}", istio(line=FIRST, column=19)),
        # `&&`: only after success.
        (f"./work && curl -X POST {QUIT}", istio(on_failure=False, line=FIRST, column=21)),
        # errexit, every spelling: set -e, -eu, -euo pipefail, -o errexit.
        (f"set -e\n./work\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 2, column=11)),
        (f"set -eu\n./work\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 2)),
        (f"set -euo pipefail\n./work\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 2)),
        (f"set -o errexit\n./work\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 2)),
        (f"#!/bin/sh -e\n./work\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 2)),
        # `set +e` turns it off again; a background step never ends the script.
        (f"set -e\nset +e\n./work\ncurl -X POST {QUIT}", istio(line=FIRST + 3)),
        (f"set -e\n./work &\nwait || true\ncurl -X POST {QUIT}", istio(line=FIRST + 3)),
        # `work || exit 1` ends the script as errexit would; `work || true` does not.
        (f"./work || exit 1\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 1)),
        (f"set -e\n./work || true\ncurl -X POST {QUIT}", istio(line=FIRST + 2)),
        (f"if ! ./work; then\n  echo failed >&2\n  exit 1\nfi\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 4)),
        (f"./work || {{ echo failed >&2; exit 1; }}\ncurl -X POST {QUIT}", istio(on_failure=False, line=FIRST + 1)),
        # inside `if work; then`: only on success; inside `if [ test ]` or a case branch: no failure skips it.
        (f"if ./work; then\n  curl -X POST {QUIT}\nfi", istio(on_failure=False, line=FIRST + 1, column=13)),
        (f'if [ -n "$X" ]; then curl -X POST {QUIT}; fi', istio(line=FIRST)),
        (f"case $MODE in\n  job) curl -X POST {QUIT};;\nesac", istio(line=FIRST + 1)),
        # a retry loop: the call is the loop's condition, which runs.
        (f"until curl -fsS -X POST {QUIT}; do sleep 1; done", istio(line=FIRST, column=17)),
        # $(...) runs its command.
        (f'status=$(curl -s -X POST {QUIT})\necho "$status"', istio(line=FIRST, column=20)),
        # traps: EXIT (or 0) runs on every exit, also when errexit ends the script.
        (f"trap 'curl -X POST {QUIT}' EXIT\nset -e\n./work", istio(exit_trap=True, line=FIRST, column=17)),
        (f"trap 'curl -X POST {QUIT}' 0\n./work", istio(exit_trap=True, line=FIRST)),
        (f"cleanup() {{ curl -fsS -X POST {QUIT}; }}\ntrap cleanup EXIT\nset -e\n./work", istio(exit_trap=True, line=FIRST)),
        # a trap installed after a step that can fail under errexit is not installed on failure.
        (f"set -euo pipefail\n./work\ntrap 'curl -X POST {QUIT}' EXIT", istio(exit_trap=True, on_failure=False, line=FIRST + 2)),
        # `exec prog` replaces the shell: no trap runs after it.
        (f"trap 'curl -X POST {QUIT}' EXIT\nexec python job.py", istio(exit_trap=True, dropped=True, quits=False, line=FIRST)),
        # ...but an exec in a subshell replaces the subshell only.
        (f"( exec ./work )\ncurl -X POST {QUIT}", istio(line=FIRST + 1)),
        # a trap on INT/TERM only never runs when the script ends by itself.
        (f"trap 'curl -X POST {QUIT}' INT TERM\n./work", istio(quits=False, line=FIRST)),
        # the health port does not quit; the Envoy admin port does; a GET gets 405.
        ("./work; curl -X POST http://localhost:15021/quitquitquit", istio(port=15021, quits=False, line=FIRST)),
        ("./work; curl -sf -XPOST http://127.0.0.1:15000/quitquitquit", istio(port=15000, host="127.0.0.1", line=FIRST)),
        ("./work; curl -X POST http://[::1]:15020/quitquitquit", istio(host="[::1]", line=FIRST)),
        (f"./work; curl {QUIT}", istio(method="GET", quits=False, line=FIRST)),
        # pilot-agent lives in the istio-proxy image only.
        ("./work; pilot-agent request POST quitquitquit", istio(tool="pilot-agent", port=15000, quits=False, line=FIRST)),
        ("./work; pilot-agent request --debug-port=15020 POST quitquitquit", istio(tool="pilot-agent", quits=False, line=FIRST)),
    ],
    ids=lambda v: v.split("\n")[-1][:40] if isinstance(v, str) else "",
)
def test_quit_call_facts_by_shell_construct(script, expected):
    assert_one_call(script, expected)


@pytest.mark.parametrize(
    "script, expected",
    [
        # curl (spec ML201 and reference §3.1 spellings)
        (f"curl -fsI -X POST {QUIT}", istio(method="POST")),
        (f"curl -fs -X POST {QUIT} -o /dev/null", istio()),
        ("curl -X POST localhost:15020/quitquitquit", istio()),
        ("curl -sf -XPOST http://127.0.0.1:15020/quitquitquit", istio(host="127.0.0.1")),
        (f"curl --request POST {QUIT}", istio()),
        (f"curl --request=POST {QUIT}", istio()),
        (f"curl -d '' {QUIT}", istio()),
        (f"curl -sd '' {QUIT}", istio()),
        (f"curl --data-raw '' {QUIT}", istio()),
        (f"curl -F x=1 {QUIT}", istio()),
        (f"curl -fsI {QUIT}", istio(method="HEAD", quits=False)),
        (f"curl -X GET {QUIT}", istio(method="GET", quits=False)),
        (f"curl -G -d x=1 {QUIT}", istio(method="GET", quits=False)),
        # wget
        (f"wget -q --post-data='' -O /dev/null {QUIT}", istio(tool="wget")),
        (f"wget --post-file=/dev/null {QUIT}", istio(tool="wget")),
        (f"wget --method=POST {QUIT}", istio(tool="wget")),
        (f"wget -qO- {QUIT}", istio(tool="wget", method="GET", quits=False)),
        # python one-liners: requests, urllib, http.client; the method decides.
        (f"""python3 -c 'import requests; requests.post("{QUIT}")'""", istio(tool="python")),
        (f"""python -c 'import requests; requests.get("{QUIT}")'""", istio(tool="python", method="GET", quits=False)),
        (f"""python3 -c 'import urllib.request as u; u.urlopen(u.Request("{QUIT}", method="POST"))'""", istio(tool="python")),
        (f"""python3 -c 'import urllib.request as u; u.urlopen("{QUIT}", data=b"")'""", istio(tool="python")),
        (f"""python3 -c 'import urllib.request as u; u.urlopen("{QUIT}")'""", istio(tool="python", method="GET", quits=False)),
        ("""python3 -c 'import http.client as h; c = h.HTTPConnection("localhost", 15020); c.request("POST", "/quitquitquit")'""", istio(tool="python")),
        ("python3 - <<'EOF'\nimport requests\nrequests.post('http://127.0.0.1:15020/quitquitquit')\nEOF", istio(tool="python", host="127.0.0.1")),
        # node: fetch is a GET unless told; http.request takes the method in its options.
        (f"""node -e 'fetch("{QUIT}", {{method: "POST"}})'""", istio(tool="node")),
        (f"""node -e 'fetch("{QUIT}")'""", istio(tool="node", method="GET", quits=False)),
        ("""node -e 'require("http").request({host: "localhost", port: 15020, path: "/quitquitquit", method: "POST"}).end()'""", istio(tool="node")),
        # perl
        (f"""perl -MHTTP::Tiny -e 'HTTP::Tiny->new->post("{QUIT}")'""", istio(tool="perl")),
        (f"""perl -MLWP::Simple -e 'get("{QUIT}")'""", istio(tool="perl", method="GET", quits=False)),
        # through wrappers and nested shells
        (f"timeout 10 curl -X POST {QUIT}", istio()),
        (f"sh -c 'curl -X POST {QUIT}'", istio()),
        (f'su app -c "curl -X POST {QUIT}"', istio()),
        # Linkerd: the same facts, kind linkerd-shutdown.
        ("curl -X POST http://localhost:4191/shutdown", istio(kind="linkerd-shutdown", port=4191, path="/shutdown")),
        ("linkerd-await --shutdown -- ./job", istio(kind="linkerd-shutdown", tool="linkerd-await", port=4191, path="/shutdown")),
        ("linkerd-await -S --port 4192 -- ./job", istio(kind="linkerd-shutdown", tool="linkerd-await", port=4192, path="/shutdown", quits=False)),
    ],
    ids=lambda v: v[:50] if isinstance(v, str) else "",
)
def test_quit_call_facts_by_spelling(script, expected):
    assert_one_call(script, expected)


@pytest.mark.parametrize(
    "script",
    [
        f"./work\n# curl -X POST {QUIT}",  # a comment is not a command
        f'echo "then run: curl -X POST {QUIT}"',  # a quoted string is data
        f"cleanup() {{ curl -X POST {QUIT}; }}\n./work",  # a function nothing calls
        f"cat <<EOF\ncurl -X POST {QUIT}\nEOF",  # a here-document is data
        "curl -X POST http://localhost:8080/shutdown",  # an app's own endpoint, not Linkerd's admin port
    ],
)
def test_what_is_no_quit_call(script):
    assert model(script).shutdown_calls == []


def test_quit_call_reasons_name_the_cause():
    [skipped] = model(f"set -euo pipefail\n./work --all\ncurl -X POST {QUIT}").shutdown_calls
    assert skipped.skipped_on_failure == "it runs after `./work --all` (line 15), and `set -euo pipefail` ends the script when that fails"
    [in_if] = model(f"if ./work; then curl -X POST {QUIT}; fi").shutdown_calls
    assert in_if.skipped_on_failure == "it runs inside `if ./work; then`, so a failing `./work` skips it"
    [late_trap] = model(f"set -e\n./work\ntrap 'curl -X POST {QUIT}' EXIT").shutdown_calls
    assert late_trap.skipped_on_failure == "its trap is installed only after `./work` (line 15), and `set -e` ends the script there when that fails"
    [dropped] = model(f"trap 'curl -X POST {QUIT}' EXIT\nexec python job.py").shutdown_calls
    assert dropped.why_not == "never runs: it is in a trap, and `exec python job.py` on line 15 replaces the shell, so the trap never runs"
    [signal] = model(f"trap 'curl -X POST {QUIT}' INT TERM\n./work").shutdown_calls
    assert signal.why_not == "runs only in a trap on INT and TERM, which a script that ends by itself never fires"
    [health] = model("./work; curl -X POST localhost:15021/quitquitquit").shutdown_calls
    assert health.why_not == "goes to port 15021 (the health port), where nothing quits the proxy (its endpoint is on 15020)"
    [remote] = model("./work; curl -X POST http://10.0.0.7:15020/quitquitquit").shutdown_calls
    assert remote.why_not == "goes to 10.0.0.7, and the proxy takes it only from localhost (it answers 403)"
    [agent] = model("./work; pilot-agent request POST quitquitquit").shutdown_calls
    assert agent.why_not == "runs pilot-agent, which exists only in the istio-proxy image, not in this container"


def test_bash_ec_turns_errexit_on():
    [call] = model(f"./work\ncurl -X POST {QUIT}", shell="bash", flag="-ec").shutdown_calls
    assert call.skipped_on_failure == "it runs after `./work` (line 14), and `bash -ec` ends the script when that fails"


def test_pilot_agent_runs_inside_the_proxy_image():
    [call] = model("pilot-agent request POST quitquitquit", image="docker.io/istio/proxyv2:1.24.0").shutdown_calls
    assert call.quits and call.port == 15000


def test_variables_are_read_from_the_container_env_and_the_script():
    env = '[{name: QUIT_URL, value: "http://127.0.0.1:15020/quitquitquit"}]'
    [from_env] = model('curl -X POST "$QUIT_URL"', env=env).shutdown_calls
    assert (from_env.host, from_env.port, from_env.quits) == ("127.0.0.1", 15020, True)
    [from_script] = model("PORT=15021\ncurl -X POST http://localhost:$PORT/quitquitquit").shutdown_calls
    assert from_script.port == 15021 and not from_script.quits
    [default] = model("curl -X POST http://localhost:${STATUS_PORT:-15020}/quitquitquit").shutdown_calls
    assert default.port == 15020 and default.quits
    [unknown] = model("curl -X POST http://localhost:$STATUS_PORT/quitquitquit").shutdown_calls
    assert unknown.port is None and unknown.quits  # not in the manifest: the benefit of the doubt


@pytest.mark.parametrize(
    "env, expected",
    [
        ('[{name: ISTIO_QUIT_API, value: "http://127.0.0.1:15020"}]', (True, True, 15020, None)),
        ('[{name: ISTIO_QUIT_API, value: "http://127.0.0.1:15020"}, {name: NEVER_KILL_ISTIO_ON_FAILURE, value: "true"}]', (True, False, 15020, None)),
        ('[{name: ENVOY_ADMIN_API, value: "http://127.0.0.1:15000"}]', (True, False, 15000, None)),
        ("[]", (False, True, None, "runs scuttle without ISTIO_QUIT_API, so it never calls /quitquitquit")),
    ],
)
def test_scuttle_quits_the_proxy_when_its_program_ends(env, expected):
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n    - name: c\n      image: c\n      env: {env}\n      command: [scuttle, python, job.py]\n"
    container = container_of(text)
    [call] = CommandModel(container).shutdown_calls
    assert (call.quits, call.runs_on_failure, call.port, call.problem) == expected
    assert call.tool == "scuttle" and call.kind == "istio-quit"


def test_exec_form_quit_call_points_at_the_url():
    [call] = exec_model('      command: ["curl", "-sf"]\n      args: ["-XPOST", "http://localhost:15020/quitquitquit"]\n').shutdown_calls
    assert (call.position.line, call.position.column, call.quits) == (10, 24, True)


# --- startup evidence -----------------------------------------------------------------------------


def evidence(script: str, env: str = "[]", **options) -> list[tuple[str, str, int]]:
    return [(e.kind, e.what, e.position.line) for e in model(script, env, **options).startup_calls]


@pytest.mark.parametrize(
    "script, env",
    [
        ("# Generate mysql server-id from pod ordinal index\nexec mysqld", "[]"),  # a comment
        ("ls /var/lib/mysql/mysql\nexec mysqld --datadir=/var/lib/mysql", "[]"),  # file paths
        ("exec app --listen 0.0.0.0:8080 --bind=:9090 --metrics-addr=[::]:9091", "[]"),  # listen addresses
        ("exec app", "[{name: HEALTH_URL, value: 'http://0.0.0.0:8080/healthz'}, {name: GRPC_HOST, value: '::'}]"),
        ("exec app --db={{ .Values.db }}", "[{name: DATABASE_URL, value: '{{ .Values.databaseUrl }}'}]"),  # placeholders
        ("exec app --data=${DATA_DIR}/x --config=$CONFIG", "[]"),  # variables that are no hosts
        ("exec app --redirect-uri=https://app.example.com/callback", "[{name: OAUTH_REDIRECT_URL, value: 'https://app.example.com/cb'}]"),
        ("trap 'curl -X POST http://reporter.ops.svc:8080/done' EXIT\n./job", "[]"),  # a call in an exit trap
        (f"./job\ncurl -fsS -X POST {QUIT}", "[]"),  # the quit call goes to the pod's own loopback
        ("curl -sf http://localhost:8080/ready && exec app", "[{name: HTTP_PROXY, value: '127.0.0.1:15002'}]"),  # loopback
        ("exec app", "[{name: REDIS_SOCKET_TYPE, value: tcp}, {name: WSREP_CLUSTER_ADDRESS, value: 'gcomm://'}]"),  # settings, no addresses
        ("mysql -u root -S /run/mysqld/mysqld.sock -e 'select 1'", "[]"),  # a local socket
    ],
)
def test_what_is_no_startup_evidence(script, env):
    assert evidence(script, env) == []


@pytest.mark.parametrize(
    "script, env, expected",
    [
        ("until nc -z db 5432; do sleep 1; done\nexec app", "[]", [("host:port", "command calls db:5432 with nc", 14)]),
        ("psql -h db.data.svc -c 'select 1'", "[]", [("host", "command calls db.data.svc with psql", 14)]),
        ("curl -fsS http://config-server:8888/app/default > /tmp/app.json\nexec app", "[]", [("url", "command calls http://config-server:8888/app/default with curl", 14)]),
        ('curl -fsS "http://${CONFIG_HOST}:8888/app"', "[]", [("url", "command calls http://${CONFIG_HOST}:8888/app with curl", 14)]),
        ("curl -fsS $CONFIG_URL", "[]", [("program", "command runs 'curl'", 14)]),
        ("pip install -r requirements.txt\nexec python app.py", "[]", [("program", "command runs 'pip install'", 14)]),
        ("python manage.py migrate && exec gunicorn app", "[]", [("program", "command runs 'migrate'", 14)]),
        ("flyway migrate", "[]", [("program", "command runs 'flyway'", 14)]),
        ("exec /cloud_sql_proxy -instances=proj:region:db=tcp:0.0.0.0:5432", "[]", [("program", "command runs 'cloud_sql_proxy'", 14)]),
        ("exec app --peers=http://app-0.app.default.svc.cluster.local:7000", "[]", [("url", "command names http://app-0.app.default.svc.cluster.local:7000", 14)]),
        ("exec app --redis-addr redis:6379", "[]", [("host:port", "command names redis:6379", 14)]),
        ("exec app", "[{name: DB_URL, value: 'postgres://$(DB_USER)@db:5432/app'}, {name: DB_USER, value: app}]", [("url", "env DB_URL=postgres://$(DB_USER)@db:5432/app", 9)]),
        ("exec app", "[{name: REDIS_HOST, value: redis-master}]", [("host", "env REDIS_HOST=redis-master", 9)]),
        ("exec app", "[{name: DATABASE_URL, valueFrom: {secretKeyRef: {name: db, key: url}}}]", [("name", "env DATABASE_URL", 9)]),
        ('wget -qO- "http://$FRONTEND_ADDR/"', "[{name: FRONTEND_ADDR, value: 'frontend:80'}]", [("host:port", "env FRONTEND_ADDR=frontend:80", 9), ("url", "command calls http://frontend:80/ with wget", 14)]),
    ],
)
def test_startup_evidence_facts(script, env, expected):
    assert evidence(script, env) == expected


def test_co_located_cloud_sql_proxy_image_is_evidence():
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: proxy, image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11', args: ['proj:region:db']}\n"
    container = container_of(text)
    [found] = CommandModel(container).startup_calls
    assert (found.kind, found.what) == ("program", "image gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11 runs the Cloud SQL proxy")


def test_envfrom_reads_configmap_addresses_and_secret_names_only():
    sources = EnvSources()
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: app-config}
data:
  SPRING_DATASOURCE_URL: jdbc:mysql://mysql.shop.svc:3306/orders
  LOG_LEVEL: info
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret}
stringData:
  REDIS_URL: redis://:hunter2@redis:6379
"""
    for document in load_text("config.yaml", text).documents:
        for resource in resources_of(document):
            sources.add(resource)
    env = "[]\n      envFrom: [{configMapRef: {name: app-config}}, {secretRef: {name: app-secret}, prefix: APP_}]"
    found = [(e.what, str(e)) for e in model("exec java -jar app.jar", env, sources=sources).startup_calls]
    assert found == [
        ("env SPRING_DATASOURCE_URL=jdbc:mysql://mysql.shop.svc:3306/orders from ConfigMap app-config", "env SPRING_DATASOURCE_URL=jdbc:mysql://mysql.shop.svc:3306/orders from ConfigMap app-config (config.yaml:5)"),
        ("env APP_REDIS_URL from Secret app-secret", "env APP_REDIS_URL from Secret app-secret (config.yaml:12)"),
    ]
    assert all("hunter2" not in what for what, _ in found)


# --- preStop sleeps ---------------------------------------------------------------------------------


def prestop(script: str, env: str = "[]"):
    text = f"""apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
    - name: web
      image: web
      env: {env}
      lifecycle:
        preStop:
          exec:
            command:
              - sh
              - -c
              - |
{textwrap.indent(textwrap.dedent(script).strip(chr(10)), " " * 16)}
"""
    container = container_of(text)
    sleep = CommandModel(container).prestop_sleep
    return None if sleep is None else (sleep.seconds, sleep.position.line, sleep.position.column, sleep.form)


@pytest.mark.parametrize(
    "script, env, expected",
    [
        ("sleep 5\nnginx -s quit", "[]", (5, 16, 17, "sleep 5")),
        ("# sleep 60\nsleep 5 && nginx -s quit", "[]", (5, 17, 17, "sleep 5")),  # the comment does not sleep
        ("sleep $DRAIN\nnginx -s quit", "[{name: DRAIN, value: '20'}]", (20, 16, 17, "sleep 20")),
        ("sleep 3\nif [ -f /tmp/busy ]; then sleep 60; fi\nsleep 2 &\nsleep 4", "[]", (7, 16, 17, "sleep 3; sleep 4")),  # maybe or in the background: not counted
        ("sleep $GRACE", "[]", None),  # the length is not in the manifest
    ],
)
def test_prestop_sleep_facts(script, env, expected):
    assert prestop(script, env) == expected


# --- through a whole run ------------------------------------------------------------------------------


def test_envfrom_configmap_in_another_file_is_cited_with_its_place(tmp_path):
    from helpers import MESHED, lint

    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: orders}\nspec:\n  template:\n    metadata: {labels: {app: orders}}\n"
        "    spec:\n      containers:\n        - name: orders\n          image: orders\n          envFrom: [{configMapRef: {name: orders}}]\n"
    )
    (tmp_path / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: orders}\ndata:\n  SPRING_DATASOURCE_URL: jdbc:postgresql://db:5432/orders\n"
    )
    report = lint([tmp_path], MESHED, base=str(tmp_path))
    [finding] = [f for f in report.findings if f.code == "ML101"]
    assert str(finding.severity) == "error"
    assert finding.message.endswith(
        f"; it calls out at startup: env SPRING_DATASOURCE_URL=jdbc:postgresql://db:5432/orders from ConfigMap orders ({tmp_path}/config.yaml:5)"
    )


def test_the_first_pass_composes_only_configmaps_and_secrets_that_could_matter():
    from meshlint.mesh.envsources import might_hold_env_source

    assert might_hold_env_source("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  DB_HOST: db\n")
    assert might_hold_env_source("apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData:\n  DATABASE_URL: x\n")
    assert not might_hold_env_source("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  app.yaml: |\n    port: 8080\n")
    assert not might_hold_env_source("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n  # http://x:8080\n")


def test_a_run_on_a_manifest_without_scripts_never_loads_the_shell_parser(tmp_path):
    import subprocess
    import sys

    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: a, image: a, command: [./server, --port, '8080'], env: [{name: DB_URL, value: 'postgres://db/a'}]}]\n"
    )
    code = (
        "import sys\nfrom meshlint.cli import main\n"
        "try:\n    main(['check', 'app.yaml'])\nexcept SystemExit:\n    pass\n"
        "print('tree_sitter' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stderr.strip().splitlines()[-1] == "False"


def test_a_pre_commit_run_on_a_plain_manifest_loads_neither_the_command_model_nor_the_stream_splitter(tmp_path):
    # Start-up is most of a pre-commit run: what a plain Deployment does not need is not imported.
    # Nor is `dataclasses`: generating a dataclass's methods costs 0.2-0.9 ms a class at every start,
    # so meshlint's records are plain classes with a written __init__.
    import subprocess
    import sys

    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: a, image: a, env: [{name: DB_URL, value: 'postgres://db/a'}]}]\n"
    )
    watched = ("meshlint.mesh.facts.quitcalls", "meshlint.mesh.facts.shell", "meshlint.engine.streams", "meshlint.source.lines", "dataclasses")
    code = (
        "import sys\nfrom meshlint.cli import main\n"
        "try:\n    main(['check', '--no-cache', 'app.yaml'])\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {watched!r} if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_job_never_completes_says_why_its_quit_call_does_not_count(tmp_path):
    from helpers import MESHED, lint_text

    text = """apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    metadata: {}
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export
          command:
            - sh
            - -c
            - |
              trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT
              exec python export.py
"""
    [finding] = [f for f in lint_text(tmp_path, text, MESHED).findings if f.code == "ML201"]
    # Only mesh.default-injection puts a sidecar in this pod (no namespace): ML201 says so, as ML101 does.
    assert finding.message.startswith("Job export never completes (injection assumed: namespace unknown): its classic istio-proxy")
    assert finding.message.endswith(
        "because nothing POSTs to localhost:15020/quitquitquit; its quit call on line 16 never runs: it is in a trap, "
        "and `exec python export.py` on line 17 replaces the shell, so the trap never runs"
    )
    assert finding.help.endswith("or run the program without `exec`, so the shell and its EXIT trap outlive it")


# --- any script ------------------------------------------------------------------------------------


_PIECES = st.sampled_from(
    [
        "set -e", "set -euo pipefail", "set +e", "./work", "exec app", "exit 1", "trap 'curl -X POST localhost:15020/quitquitquit' EXIT",
        "trap - EXIT", "trap cleanup INT TERM", "cleanup() { curl -X POST localhost:15020/quitquitquit; }", "cleanup", "&&", "||", ";",
        "|", "&", "\n", "if", "then", "fi", "else", "while", "do", "done", "case $x in a)", ";;", "esac", "(", ")", "{", "}", "$(", "`",
        '"', "'", "# comment", "sleep 5", "sleep $D", "sh -c 'x'", "sh -c", "$X", "${X:-15020}", "<<EOF", "EOF", "é", "\\",
    ]
)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=25))
def test_any_script_reads_without_error_and_keeps_positions_inside_it(pieces):
    script = " ".join(pieces)
    container = model(script)
    for command in container.run:
        assert command.position.line >= FIRST
    for call in container.shutdown_calls:
        assert call.position.line >= FIRST and call.position.column >= 1
    assert isinstance(container.startup_calls, list)


def test_a_grpc_agent_job_is_told_to_quit_its_agent_not_to_go_native(tmp_path):
    # grpc-agent keeps its agent a regular container whatever native says (reference §18.3.2, §18.2 H4;
    # istio/istio manifests/charts/istio-control/istio-discovery/files/grpc-agent.yaml at 86c9f01fd735).
    from helpers import MESHED, lint_text

    text = """apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    metadata:
      annotations: {inject.istio.io/templates: grpc-agent}
    spec:
      restartPolicy: Never
      containers: [{name: export, image: export:1, command: [./export]}]
"""
    settings = {**MESHED, "istio-version": "1.28", "kubernetes-version": "1.33"}
    found = [(f.code, str(f.severity), f.line, f.column, f.message, f.help, f.fix) for f in lint_text(tmp_path, text, settings).findings]
    assert found == [
        (
            "ML201", "error", 6, 5,
            'Job export never completes (injection assumed: namespace unknown): its agent-only istio-proxy (inject.istio.io/templates: '
            '"grpc-agent", a regular container even '
            "where native sidecars are on) keeps running after container 'export' exits, because nothing POSTs to localhost:15020/quitquitquit",
            "end the container's script with `trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT`; native sidecars do "
            "not help here, the grpc-agent template never makes its agent one",
            None,
        )
    ]
