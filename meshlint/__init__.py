"""meshlint: a static linter for Kubernetes manifests and Istio sidecar lifecycle hazards."""

__version__ = "0.1.0"

# A note on records: immutable values are NamedTuples, and the dataclasses generate only `__init__`
# (eq=False, repr=False). Every generated method is compiled at import, and a pre-commit run pays for
# each of them on every commit; none of these objects is compared or printed.
