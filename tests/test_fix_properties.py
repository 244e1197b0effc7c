"""Properties of `--fix` over every fix fixture and the shipped examples, on variants of them that a
fix must not care about (CRLF line breaks, a BOM, comment lines above, no final line break):

- the fixed file is the fixture's `.fixed.yaml` made the same variant, byte for byte;
- the fixed findings are gone and no finding appears that was not there before;
- a second `--fix` changes nothing;
- every round changed only the lines its edits cover, and the rest of each file is kept byte for byte.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import CONFIG_COMMENT, ROOT, RULES, TESTDATA, config_from
from meshlint.configset import ConfigSet
from meshlint.engine.run import run
from meshlint.fix import verify
from meshlint.fix.edits import Edit, Text, insertion
from meshlint.fix.rounds import fix_session

CASES = sorted(p for p in (TESTDATA / "fix").glob("*/*.yaml") if not p.name.endswith(".fixed.yaml") and not p.name.startswith("nofix_"))
EXAMPLES = ROOT / "examples"


def variant(data: bytes, newline: str, bom: bool, header: int, final_break: bool) -> bytes:
    text = data.decode("utf-8")
    lines = text.split("\n")
    if header:
        # After a `# config:` line, which must stay first.
        at = 1 if lines[0].startswith("# config:") else 0
        lines[at:at] = [f"# reviewed by team {n}" for n in range(header)]
    text = "\n".join(lines)
    if not final_break:
        text = text.rstrip("\n")
    text = text.replace("\n", newline)
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


def session(folder: Path, paths: list[Path], unsafe: bool):
    settings_text = CONFIG_COMMENT.search(paths[0].read_text(encoding="utf-8-sig")) if paths[0].is_file() else None
    config = config_from(json.loads(settings_text.group(1)) if settings_text else None, base=str(folder))
    return fix_session(lambda: run([str(p) for p in paths], ConfigSet(config, forced=True), RULES, [], beyond=len(paths) > 1), unsafe=unsafe)


def about(findings) -> Counter:
    return Counter((f.path, f.resource, f.code) for f in findings)


def check_rounds(outcome) -> None:
    """Each round is exactly its edits applied, and lines no edit covers are kept, in order."""
    for done in outcome.rounds:
        for path, (before, edits) in done.items():
            after = Text(before).apply(edits)
            assert verify.load(path, after) is not None and not verify.load(path, after).problems
            kept = _untouched_lines(before, edits)
            assert _subsequence(kept, after.split(b"\n")), f"{path}: lines outside the edits changed"


def _untouched_lines(data: bytes, edits: tuple[Edit, ...]) -> list[bytes]:
    covered = set()
    for e in edits:
        covered.update(range(e.line, e.end_line + 1))
    return [line for n, line in enumerate(data.split(b"\n"), start=1) if n not in covered]


def _subsequence(needles: list[bytes], haystack: list[bytes]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(CASES),
    newline=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    header=st.integers(min_value=0, max_value=2),
    final_break=st.booleans(),
)
def test_fix_on_variants_of_the_fixtures(case, newline, bom, header, final_break):
    unsafe = case.name.startswith("unsafe_")
    expected = variant(case.with_name(case.name.removesuffix(".yaml") + ".fixed.yaml").read_bytes(), newline, bom, header, final_break)
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        path = folder / case.name
        path.write_bytes(variant(case.read_bytes(), newline, bom, header, final_break))
        outcome = session(folder, [path], unsafe)
        assert outcome.fixed.get(str(path)) == expected, outcome.notes
        check_rounds(outcome)
        assert [f for f in outcome.report.findings if f.code == case.parent.name] == []
        assert not about(outcome.report.findings) - about(outcome.first.findings)
        path.write_bytes(expected)
        assert session(folder, [path], unsafe).changed == []


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(newline=st.sampled_from(["\n", "\r\n"]), bom=st.booleans(), header=st.integers(min_value=0, max_value=2), unsafe=st.booleans())
def test_fix_on_variants_of_the_examples(newline, bom, header, unsafe):
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory) / "examples"
        shutil.copytree(EXAMPLES, folder)
        paths = sorted(folder.rglob("*.yaml"))
        for path in paths:
            path.write_bytes(variant(path.read_bytes(), newline, bom, header, True))
        outcome = session(Path(directory), [folder], unsafe)
        assert outcome.changed, "the examples have findings that --fix settles"
        check_rounds(outcome)
        assert not about(outcome.report.findings) - about(outcome.first.findings)
        assert [f for f in outcome.report.findings if f.fixable(unsafe)] == []
        for path in outcome.changed:
            Path(path).write_bytes(outcome.fixed[path])
            assert Text(outcome.fixed[path]).newline == newline
        assert session(Path(directory), [folder], unsafe).changed == []


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab: #\"'é", max_size=8), min_size=1, max_size=6),
    newline=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    spots=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 9), st.text(alphabet="xy\n", max_size=4)), max_size=4),
)
def test_edits_change_nothing_outside_them(lines, newline, bom, spots):
    """Insertions land where they say, and every other byte (BOM, line breaks included) is kept."""
    data = (b"\xef\xbb\xbf" if bom else b"") + newline.join(lines).encode("utf-8")
    text = Text(data)
    edits = sorted({(min(line, len(lines)), column): insertion(min(line, len(lines)), column, new) for line, column, new in spots}.values())
    result = text.apply(edits)
    # Remove what was inserted, from the end backwards: the original bytes come back.
    rebuilt = result.decode("utf-8")
    body_start = 1 if bom else 0
    offsets = [text.offset(e.line, e.column) for e in edits]
    shift = 0
    pieces = []
    last = 0
    for offset, edit in zip(offsets, edits, strict=True):
        pieces.append(rebuilt[body_start + last + shift : body_start + offset + shift])
        shift += len(edit.text)
        last = offset
    pieces.append(rebuilt[body_start + last + shift :])
    assert ("\ufeff" if bom else "") + "".join(pieces) == data.decode("utf-8")


def _manifest(step: int, compact: bool, metadata: str, config: str, comment: bool) -> str:
    """A Deployment written one of the ways people write them."""
    i = " " * step

    def at(level: int, text: str) -> str:
        return i * level + text

    note = "  # the web tier" if comment else ""
    lines = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", at(1, "name: web"), "spec:", at(1, "selector:"),
             at(2, "matchLabels: {app: web}"), at(1, "template:")]
    annotations = {
        "none": [],
        "json": [at(4, "proxy.istio.io/config: '{\"terminationDrainDuration\": \"10s\"}'")],
        "json-double": [at(4, 'proxy.istio.io/config: "{\\"terminationDrainDuration\\": \\"10s\\"}"')],
        "block": [at(4, "proxy.istio.io/config: |"), at(5, "terminationDrainDuration: 10s")],
        "block-strip": [at(4, "proxy.istio.io/config: |-"), at(5, "# drain"), at(5, "terminationDrainDuration: 10s")],
        "other": [at(4, 'prometheus.io/scrape: "true"')],
    }[config]
    if metadata == "absent" and not annotations:
        pass  # a template without metadata: the fix makes it
    elif metadata == "flow-labels":
        lines += [at(2, "metadata:"), at(3, "labels: {app: web, sidecar.istio.io/inject: \"true\"}" + note)]
        lines += [at(3, "annotations:"), *annotations] if annotations else []
    elif metadata == "flow-annotations" and config in ("json", "other"):
        flow = annotations[0].strip()
        lines += [at(2, "metadata:"), at(3, "labels:"), at(4, "app: web"), at(4, "sidecar.istio.io/inject: \"true\"" + note), at(3, f"annotations: {{{flow}}}")]
    else:
        lines += [at(2, "metadata:"), at(3, "labels:"), at(4, "app: web"), at(4, "sidecar.istio.io/inject: \"true\"" + note)]
        lines += [at(3, "annotations:"), *annotations] if annotations else []
    item = "- " if compact else i + "- "
    lines += [at(2, "spec:"), at(3, "containers:"), at(3, item + "name: web"), at(3, (" " * len(item)) + "image: web:1")]
    lines += [at(3, (" " * len(item)) + 'env: [{name: API_URL, value: "http://api:8080"}]')]  # a peer it may dial as it starts
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    step=st.sampled_from([2, 4]),
    compact=st.booleans(),
    metadata=st.sampled_from(["absent", "block", "flow-labels", "flow-annotations"]),
    config=st.sampled_from(["none", "json", "json-double", "block", "block-strip", "other"]),
    comment=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_the_hold_goes_in_however_the_template_is_written(step, compact, metadata, config, comment, newline):
    """ML101's fix on many ways of writing a pod template: the race is gone, nothing else changes in
    the data but the hold, and the file keeps its line breaks."""
    from meshlint.source.loader import load_text

    text = _manifest(step, compact, metadata, config, comment)
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        path = folder / "web.yaml"
        path.write_bytes(text.replace("\n", newline).encode())
        settings_ = {"mesh": {"default-injection": "enabled"}}
        config_ = config_from(settings_, base=str(folder))
        outcome = fix_session(lambda: run([str(path)], ConfigSet(config_, forced=True), RULES, [], beyond=False))
        assert outcome.changed == [str(path)], (text, outcome.notes)
        assert [f.code for f in outcome.report.findings] == []
        after = outcome.fixed[str(path)].decode()
        assert after.count("\r\n") == after.count("\n") if newline == "\r\n" else "\r" not in after
        before_data = load_text("a", text).documents[0].data
        after_data = load_text("b", after.replace("\r\n", "\n")).documents[0].data
        template = after_data["spec"]["template"]
        hold = template["metadata"]["annotations"].pop("proxy.istio.io/config")
        old = before_data["spec"]["template"].setdefault("metadata", {}).setdefault("annotations", {}).pop("proxy.istio.io/config", None)
        body = load_text("c", hold).documents[0].data
        assert body.pop("holdApplicationUntilProxyStarts") is True
        assert body == (load_text("d", old).documents[0].data if old else {})
        if not template["metadata"]["annotations"]:
            del template["metadata"]["annotations"]
            before_data["spec"]["template"]["metadata"].pop("annotations", None)
        assert after_data == before_data


# A stream of small documents, as `helm template` writes them, for the checks that read only the
# parts of a file an edit changes.
_STREAM = "".join(
    f"---\n# Source: chart/templates/{n}.yaml\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: n{n}\n  labels: {{app: a{n}}}\n"
    f"spec:\n  ports:\n    - port: {8000 + n}\n  note: |\n    line one\n    line two\n"
    for n, kind in enumerate(["Service", "ConfigMap", "Service", "Deployment", "Service"])
)
_PIECES = ["", "x", "x: 1", ": ", "\n", "\n---\n", "---", "'", '"', "#", "- a\n", "\n  extra: 2", "%YAML 1.1\n", "  ", "{", "]", "\t"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(1, 75), st.integers(1, 30), st.integers(0, 2), st.integers(0, 12), st.sampled_from(_PIECES)), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(1, 75), st.integers(1, 12)), max_size=3),
    st.booleans(),
)
def test_reading_the_changed_parts_says_what_reading_the_whole_says(spots, touched, crlf):
    data = (_STREAM.replace("\n", "\r\n") if crlf else _STREAM).encode()
    edits = [Edit(line, column, line + down, column + right if down == 0 else right + 1, text) for line, column, down, right, text in spots]
    try:
        after = Text(data).apply(edits)
    except ValueError:
        with pytest.raises(ValueError):
            verify.problem_of_edits("s.yaml", data, edits, touched)
        return
    expected = verify.whole_problem("s.yaml", data, after, frozenset(touched))
    assert verify.problem_of_edits("s.yaml", data, edits, touched) == expected
    assert verify.problem_after("s.yaml", data, after, touched) == expected


def test_a_round_takes_the_fixes_that_overlap_none_taken_before_as_asking_each_would():
    import random

    from meshlint.findings import Finding, Severity
    from meshlint.fix.edits import make_fix
    from meshlint.fix.rounds import _compatible

    chance = random.Random(19)
    for _ in range(200):
        findings = []
        for n in range(chance.randint(1, 30)):
            edits = []
            for _ in range(chance.randint(1, 3)):
                line, column = chance.randint(1, 20), chance.randint(1, 6)
                end = (line, column) if chance.random() < 0.5 else (line + chance.randint(0, 2), chance.randint(1, 6))
                end = max(end, (line, column))
                edits.append(Edit(line, column, end[0], end[1], "x"))
            isolation = [(chance.randint(1, 20), chance.randint(1, 3)) for _ in range(chance.randint(0, 2))]
            fix = make_fix("t", chance.choice(["a.yaml", "b.yaml"]), edits, isolation=isolation)
            if fix is not None:
                findings.append(Finding(fix.path, 1, 1, "ML101", "r", Severity.ERROR, f"m{n}", "h", fix=fix))
        naive: list[Finding] = []
        for finding in findings:
            if not any(finding.fix.overlaps(other.fix) for other in naive):
                naive.append(finding)
        assert _compatible(findings) == naive


@given(st.text(alphabet="a\r\n", max_size=40), st.booleans())
def test_a_text_knows_where_its_lines_start_and_how_they_end(text, bom):
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    starts, i = [0], 0
    while True:  # the lines, one break at a time: \r\n, \r or \n
        breaks = [n for n in (text.find("\r", i), text.find("\n", i)) if n >= 0]
        if not breaks:
            break
        i = min(breaks) + (2 if text.startswith("\r\n", min(breaks)) else 1)
        starts.append(i)
    first = min([n for n in (text.find("\r"), text.find("\n")) if n >= 0], default=-1)
    newline = "\n" if first < 0 else "\r\n" if text.startswith("\r\n", first) else text[first]
    assert (Text(data).starts, Text(data).newline) == (starts, newline)


@pytest.mark.parametrize(("text", "edit"), [
    ("a: 1\n---", Edit(2, 4, 2, 4, "x")),  # at the very end, after a last `---`
    ("a: 1\n---\nfoo\n---\xa0bar\n---\nc: 3\n", Edit(4, 1, 4, 1, "--- ")),  # YAML does not split at `---` and a no-break space
    ("foo\n---\u3000bar\n", Edit(2, 1, 2, 1, "--- ")),
    ('a: 1\n...\x85%TAG !! tag:example.com,2000:\n---\nb: !!int "1"\n---\nc: 3\n', Edit(4, 4, 4, 13, "1")),  # a directive after a NEL
    ('a: 1\n...\r%TAG !! tag:example.com,2000:\n---\nb: !!int "1"\n---\nc: 3\n', Edit(4, 4, 4, 10, "")),
    ("# " + "[" * 795 + "\na: 1\n---\nb: 1\n---\nc: 1\n---\nd: 1\n", Edit(8, 5, 8, 5, " # [[[[[[[[[[")),  # brackets counted over the whole text
])
def test_what_the_parts_cannot_settle_is_left_to_the_whole_reading(text, edit):
    """Cases found in review, where reading the changed parts alone answered otherwise."""
    data = text.encode()
    after = Text(data).apply([edit])
    expected = verify.whole_problem("s.yaml", data, after, frozenset())
    assert verify.problem_of_edits("s.yaml", data, [edit], ()) == expected
    assert verify.problem_after("s.yaml", data, after, ()) == expected
