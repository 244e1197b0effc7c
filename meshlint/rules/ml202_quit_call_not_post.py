"""A `/quitquitquit` call that is not a POST, so the proxy answers 405 and keeps running.

## What it does
Finds calls to the Istio agent's or Envoy's `/quitquitquit` made without a POST: curl needs `-X POST`,
`-XPOST`, `--request POST`, `-d`/`--data…` or `-F`; wget needs `--post-data`, `--post-file` or
`--method=POST`; a `python -c`, `node -e` or `perl -e` one-liner needs `requests.post(...)`, a
`Request(..., method="POST")`, `fetch(url, {method: "POST"})` or `->post(...)`.

## Why is this bad?
The agent accepts only POST from localhost; a GET gets `405 Method Not Allowed`, and curl without `-f`
even exits 0, so the script looks fine while the proxy keeps running and the Job never completes.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["sh", "-c", "trap 'curl -s http://localhost:15020/quitquitquit' EXIT; ./export"]  # expect: ML202:error
```

## Use instead
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["sh", "-c", "trap 'curl -s -X POST http://localhost:15020/quitquitquit' EXIT; ./export"]
```

## Fix safety
Safe. `--fix` adds `-X POST` right after `curl` (or `--post-data=` after `wget`), inside the script where
the call is written, or as list items of an exec-form command. Not when the call forces a GET (`-G`,
`-X GET`), nor for other clients.

## References
- istio/istio `pilot/cmd/pilot-agent/status/server.go` `handleQuit` (405 unless POST)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
    from meshlint.mesh.facts.quitcalls import QuitCall

_FIX = {
    "curl": "add -X POST to the curl command",
    "wget": "use wget --post-data='' (or --method=POST)",
    "python": 'send a POST: requests.post(url), or urllib.request.urlopen(urllib.request.Request(url, method="POST"))',
    "node": "send a POST: fetch(url, {method: 'POST'})",
    "perl": "send a POST: HTTP::Tiny->new->post(url)",
}


@rule(code="ML202", name="quit-call-not-post", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS, fix="safe")
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    for call in workload.quit_calls:
        if call.is_post or call.problem is not None:
            continue  # a call that cannot quit anyway (another port, pilot-agent in the app) is ML201's
        yield Issue(
            call.position,
            f"container {call.container.name!r} calls /quitquitquit without POST (`{call.command}`): the proxy answers 405 and keeps running",
            _FIX.get(call.tool, "send the request as a POST"),
            fix=recipe(_post, call),
        )


def _post(call: QuitCall) -> Fix | None:
    from meshlint.fix import mapping, shell

    flags = "-X POST" if call.tool == "curl" else "--post-data="
    return mapping.as_fix(f"add {flags} to the {call.tool} call", call.container.node, shell.make_post(call))


RULE = check
