"""Real public manifests (../shared/corpus): meshlint reads every file without a crash."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main

CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")
def test_corpus_sweep_has_no_crash_and_exits_0_or_1():
    result = CliRunner().invoke(main, ["check", str(CORPUS), "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 1), result.output[-2000:]
    assert "internal error" not in result.output
    import json

    report = json.loads(result.stdout)
    assert report["summary"]["files"] > 1000
    for finding in report["findings"]:
        assert finding["line"] >= 1 and finding["column"] >= 1
