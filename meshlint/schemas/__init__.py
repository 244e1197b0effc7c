"""JSON Schemas shipped with meshlint (config file, ProxyConfig)."""
