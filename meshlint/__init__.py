"""meshlint: a static linter for Kubernetes manifests and Istio sidecar lifecycle hazards."""

__version__ = "0.1.0"
