"""Readers of the facts inside a pod: what its commands do, which traffic its sidecar captures, its
durations and its ProxyConfig. Each is a pure function of the manifest; the workload view calls them
once per workload."""
