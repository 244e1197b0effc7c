"""Stage 3: the mesh context, what applies to each workload, resolved once per run.

`context` collects the mesh-wide facts (mesh config sources, Namespaces, Services,
PeerAuthentications); `workload` resolves one workload's view from them, every effective value a
`Setting` that knows where it came from; `istio` is the vocabulary; `facts/` hold the readers of the
facts inside a pod (commands, quit calls, preStop sleeps, startup evidence, interception, durations,
ProxyConfig). Rules read the view and never work these facts out themselves.
"""
