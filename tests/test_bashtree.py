"""The tree-sitter edge: scripts become plain syntax trees with character offsets."""

from __future__ import annotations

from meshlint.mesh.facts.bashtree import parse


def test_offsets_count_characters_not_bytes():
    script = 'echo "é ü"; curl -X POST localhost:15020/quitquitquit'
    tree = parse(script)
    command = [c for c in tree.children if c.type == "command"][1]
    assert command.text == script[command.start:command.end] == "curl -X POST localhost:15020/quitquitquit"
    assert [c.field for c in command.children] == ["name", "argument", "argument", "argument"]


def test_a_deeply_nested_script_does_not_exhaust_the_stack():
    script = "(" * 3000 + "true" + ")" * 3000
    assert parse(script).type == "program"


def test_unparsable_text_is_kept_in_error_nodes():
    tree = parse("if then fi {{ .Values.x }}")
    assert tree.text == "if then fi {{ .Values.x }}"

