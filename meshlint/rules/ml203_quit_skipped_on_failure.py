"""The quit call runs only when the job succeeds, so a failed run leaves the pod running forever.

## What it does
Reports a `/quitquitquit` call that a failure would skip, when no other quit call of the container
runs however the work ends: one chained after `&&` (`./work && curl -X POST …`), inside
`if ./work; then`, after `./work || exit`, or after a step that can fail while errexit is on
(`set -e`, `set -euo pipefail`, `set -o errexit`, `bash -ec`, a `#!/bin/sh -e` first line); and an
exit trap installed only after such a step (a failing run ends before the trap exists). Silent under
`restartPolicy: OnFailure`: there the kubelet restarts the failed container in the same pod, which
retries with the proxy still running, so quitting on success only is right (an EXIT trap would stop
the proxy at the first failure, and every retry would run without it: istio/istio#45627).

## Why is this bad?
When the work fails, the shell stops before the quit call. The app container exits with an error but
the classic sidecar keeps running, so the pod never finishes, the Job's backoff never starts, and a
CronJob keeps the failed pod around forever.

## Example
```yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: sync
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: sync
              image: sync:1.0
              command: ["sh", "-c", "./sync && curl -X POST localhost:15020/quitquitquit"]  # expect: ML203:warning
```

## Use instead
```yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: sync
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: sync
              image: sync:1.0
              command: ["sh", "-c", "trap 'curl -X POST localhost:15020/quitquitquit' EXIT; ./sync"]
```

## Fix safety
Unsafe: `--fix --unsafe-fixes` takes the quit call out of the script's flow and runs it from
`trap '...' EXIT` at the top, so it also runs when the work fails. Only for plain scripts (no `if`,
loops, functions or subshells) without an EXIT trap of their own, where the call follows `&&`, `;` or
stands on its own line.

## References
- POSIX shell `trap` (EXIT runs however the script ends)
- istio/istio#45627 (a classic sidecar that exits in a run-to-completion pod is never restarted)
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


@rule(code="ML203", name="quit-skipped-on-failure", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS, fix="unsafe")
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if workload.template.restart_policy == "OnFailure":
        return  # the failed container retries in the same pod, with its proxy: quit on success only
    calls = workload.quit_calls
    for call in calls:
        covered = any(other.quits and other.runs_on_failure and other.container is call.container for other in calls)
        if call.skipped_on_failure and call.quits and not covered:
            yield Issue(
                call.position,
                f"container {call.container.name!r} quits the proxy only when the work succeeds (`{call.command}`): {call.skipped_on_failure}",
                "make the quit run however the script ends: `trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT` at the top",
                fix=recipe(_trap, call),
            )


def _trap(call: QuitCall) -> Fix | None:
    """Unsafe: the proxy is then told to quit also when the work fails, which is the point, but it
    changes what the script does on every run."""
    from meshlint.fix import mapping, shell
    from meshlint.fix.edits import UNSAFE

    return mapping.as_fix("run the quit call from `trap '...' EXIT` at the top of the script", call.container.node, shell.trap_on_exit(call), UNSAFE)


RULE = check
