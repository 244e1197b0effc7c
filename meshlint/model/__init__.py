"""Stage 2: Kubernetes resources read from documents: kinds, identities, pod templates, containers.

Mesh-agnostic: what Istio or Linkerd make of a pod is the mesh context's business (`meshlint.mesh`).
"""
