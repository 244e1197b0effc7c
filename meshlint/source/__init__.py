"""Stage 1: from paths to documents with positions.

`inputs` decides which files a run reads; `loader` turns a file's bytes into documents (`compose`
does the YAML, read the Kubernetes way by `yaml11`); `document` is the data with its positions;
`embedded` reads YAML held inside a string value.
"""
