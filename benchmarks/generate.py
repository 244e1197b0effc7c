"""Generate a realistic manifest tree of N documents for the benchmarks.

Mixed like a real platform repository: a `platform/` folder with Namespaces (injection labels) and an
IstioOperator, then one file per app (Deployment + Service + ConfigMap) or per batch job (Job or
CronJob + ConfigMap), grouped in team folders. Deterministic for a given N and seed.

    python benchmarks/generate.py OUT_DIR --documents 10000
"""

from __future__ import annotations

import argparse
import os
import random

NAMESPACES = 20

OPERATOR = """apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  profile: default
  meshConfig:
    accessLogFile: /dev/stdout
    defaultConfig:
      terminationDrainDuration: 20s
      proxyMetadata:
        ISTIO_META_DNS_CAPTURE: "true"
  values:
    global:
      proxy:
        resources:
          requests: {cpu: 100m, memory: 128Mi}
"""

NAMESPACE = """apiVersion: v1
kind: Namespace
metadata:
  name: team-{n}
  labels:
    istio-injection: {injection}
    team: team-{n}
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
  labels:
    app: {name}
    app.kubernetes.io/part-of: shop
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
        version: v{version}
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"{annotations}
    spec:
      serviceAccountName: {name}
      terminationGracePeriodSeconds: {grace}
      containers:
        - name: {name}
          image: registry.example.com/{ns}/{name}:{version}.{patch}.0
          ports:
            - name: http
              containerPort: 8080
            - name: metrics
              containerPort: 9090
          env:
            - name: LOG_LEVEL
              value: info
            - name: {dep_env}
              value: {dep_value}
            - name: POD_NAME
              valueFrom:
                fieldRef: {{fieldPath: metadata.name}}
          resources:
            requests: {{cpu: 100m, memory: 256Mi}}
            limits: {{memory: 512Mi}}
          readinessProbe:
            httpGet: {{path: /ready, port: http}}
            periodSeconds: 5
          livenessProbe:
            httpGet: {{path: /healthz, port: http}}
            initialDelaySeconds: 10{lifecycle}
"""

SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {ns}
spec:
  selector:
    app: {name}
  ports:
    - name: http
      port: 80
      targetPort: http
"""

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
  namespace: {ns}
data:
  application.yaml: |
    server:
      port: 8080
    features:
      checkout: {flag}
      search: true
"""

JOB_SPEC = """      template:
        metadata:
          labels:
            app: {name}
        spec:
          restartPolicy: Never
          containers:
            - name: {name}
              image: registry.example.com/{ns}/{name}:1.{patch}.0
              command:
                - sh
                - -c
                - |
                  {script}
              env:
                - name: DATABASE_URL
                  value: postgres://{name}@db.{ns}.svc.cluster.local:5432/{name}
"""

SCRIPTS = (
    "trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT\n                  ./run --batch",
    "./run --batch && curl -X POST localhost:15020/quitquitquit",
    "./run --batch",
)


def app_file(rng: random.Random, index: int) -> str:
    name, ns = f"svc-{index:05d}", f"team-{rng.randrange(NAMESPACES)}"
    annotations = ""
    if rng.random() < 0.4:
        annotations = "\n        proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'"
    elif rng.random() < 0.1:
        annotations = '\n        traffic.sidecar.istio.io/excludeOutboundPorts: "5432"'
    lifecycle = ""
    if rng.random() < 0.3:
        lifecycle = f'\n          lifecycle:\n            preStop:\n              exec:\n                command: ["sleep", "{rng.choice((5, 10, 15))}"]'
    dep_env, dep_value = rng.choice(
        (
            ("DATABASE_URL", f"postgres://app@db.{ns}.svc.cluster.local:5432/{name}"),
            ("REDIS_HOST", f"redis.{ns}.svc.cluster.local:6379"),
            ("FEATURE_FLAGS", "checkout,search"),
        )
    )
    docs = [
        DEPLOYMENT.format(
            name=name, ns=ns, replicas=rng.choice((1, 2, 3)), version=rng.randrange(1, 9), patch=rng.randrange(20),
            annotations=annotations, grace=rng.choice((30, 30, 60, 15)), dep_env=dep_env, dep_value=dep_value,
            lifecycle=lifecycle,
        ),
        SERVICE.format(name=name, ns=ns),
        CONFIGMAP.format(name=name, ns=ns, flag=rng.choice(("true", "false"))),
    ]
    return "---\n".join(docs)


def batch_file(rng: random.Random, index: int) -> str:
    name, ns = f"batch-{index:05d}", f"team-{rng.randrange(NAMESPACES)}"
    spec = JOB_SPEC.format(name=name, ns=ns, patch=rng.randrange(20), script=rng.choice(SCRIPTS))
    if rng.random() < 0.5:
        head = f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  backoffLimit: 2\n"
        body = "\n".join(line[4:] for line in spec.splitlines()) + "\n"
        doc = head + body.replace("  template:", "  template:", 1)
    else:
        head = f"apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  schedule: \"0 */{rng.randrange(1, 12)} * * *\"\n  jobTemplate:\n    spec:\n"
        doc = head + spec
    return doc + "---\n" + CONFIGMAP.format(name=name, ns=ns, flag="true")


def generate(out: str, documents: int, seed: int = 1) -> tuple[int, int]:
    """Write the tree; returns (files, documents) written."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(out, "platform"), exist_ok=True)
    with open(os.path.join(out, "platform", "istio-operator.yaml"), "w") as handle:
        handle.write(OPERATOR)
    with open(os.path.join(out, "platform", "namespaces.yaml"), "w") as handle:
        handle.write("---\n".join(NAMESPACE.format(n=n, injection="enabled" if n % 5 else "disabled") for n in range(NAMESPACES)))
    files, written = 2, 1 + NAMESPACES
    index = 0
    while written < documents:
        team = os.path.join(out, "teams", f"team-{index % NAMESPACES}")
        os.makedirs(team, exist_ok=True)
        if rng.random() < 0.7:
            text, count, stem = app_file(rng, index), 3, "app"
        else:
            text, count, stem = batch_file(rng, index), 2, "batch"
        with open(os.path.join(team, f"{stem}-{index:05d}.yaml"), "w") as handle:
            handle.write(text)
        files += 1
        written += count
        index += 1
    return files, written


def stream(tree: str) -> str:
    """The tree's documents as one stream, as `helm template` prints them (`---` and a `# Source:`)."""
    parts = []
    for root, dirs, names in os.walk(tree):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".yaml"):
                with open(os.path.join(root, name)) as handle:
                    for document in handle.read().split("---\n"):
                        parts.append(f"---\n# Source: chart/templates/{name}\n{document}")
    return "".join(parts)


def crd(index: int, size: int) -> str:
    """A CustomResourceDefinition of about `size` bytes: an OpenAPI schema many levels deep, with
    descriptions, as operators ship them (no rule reads one; each must still parse)."""
    out = [
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
        f"  name: widgets{index}.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget{index}\n    plural: widgets{index}\n"
        "  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n"
        "          type: object\n          properties:\n"
    ]
    total, field = sum(map(len, out)), 0
    while total < size:
        block = (
            f"            field{field}:\n              description: Field {field} of the widget's spec; it is validated by the API server\n"
            "                and defaulted when it is left out, which operators rely on.\n"
            "              type: object\n              properties:\n"
            + "".join(
                f"                sub{n}:\n                  type: string\n                  description: sub-field {n}, don't set it by hand\n"
                f"                  enum: [a{n}, b{n}, c{n}]\n"
                for n in range(8)
            )
        )
        out.append(block)
        total += len(block)
        field += 1
    return "".join(out)


def json_configmap(size: int) -> str:
    """A ConfigMap whose data are JSON documents in block scalars (dashboards, policies), `size` bytes."""
    import json

    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\n  namespace: monitoring\ndata:\n"
    out, total, n = [head], len(head), 0
    while total < size:
        body = json.dumps({"title": f"dashboard {n}", "panels": [{"id": i, "targets": [{"expr": f"rate(x{{a=\"{i}\"}}[5m])"}], "grid": [i, i + 1, [i, {"w": 6}]]} for i in range(40)]}, indent=2)
        block = f"  dashboard-{n}.json: |\n" + "".join(f"    {line}\n" for line in body.splitlines())
        out.append(block)
        total += len(block)
        n += 1
    return "".join(out)


def mesh_context(documents: int) -> str:
    """A `mesh.context` file: Namespaces and an IstioOperator, as a platform team keeps them."""
    parts = [OPERATOR] + [NAMESPACE.format(n=n, injection="enabled" if n % 5 else "disabled") for n in range(documents - 1)]
    return "---\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--documents", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    files, documents = generate(args.out, args.documents, args.seed)
    print(f"{args.out}: {files} files, {documents} documents")


if __name__ == "__main__":
    main()
