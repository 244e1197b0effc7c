"""Stage 5: one run. `run` reads the mesh-wide facts first, then checks each file on its own against
them (`subjects` hands each rule what it checks), optionally in worker processes (`parallel`), and
gathers the findings and the summary (`results`). `selection` turns the config into the active rules."""
