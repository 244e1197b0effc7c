"""The one place that talks to tree-sitter: a shell script as a small, typed syntax tree.

tree-sitter-bash parses what POSIX sh, dash, ash and bash accept, and recovers from what it does not
(an ERROR node around the part it could not read). Its tree is turned into plain `Syntax` values
with character offsets (tree-sitter counts bytes), so the rest of meshlint never sees the library.
The library and its grammar are imported on the first parse: a run whose containers hold no script
never loads them.
"""

from bisect import bisect_right
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import tree_sitter


class Syntax(NamedTuple):
    """A node of the tree: its grammar type, the field it fills in its parent (`condition`, `body`,
    `name`, `argument`...), where it stands in the script and its text."""

    type: str
    field: str | None
    start: int  # character offsets into the script
    end: int
    script: str  # the whole script, shared by every node of its tree
    named: bool
    children: "tuple[Syntax, ...]"

    @property
    def text(self) -> str:
        """Cut from the script when asked: a node keeping its own copy would make nested nodes (a
        long `&&` chain nests to the left) hold the script many times over."""
        return self.script[self.start:self.end]

    def __repr__(self) -> str:
        return f"Syntax({self.type} {self.text!r} @ {self.start})"

    def named_children(self) -> "list[Syntax]":
        return [c for c in self.children if c.named]

    def fields(self, name: str) -> "list[Syntax]":
        return [c for c in self.children if c.field == name]

    def first(self, *types: str) -> "Syntax | None":
        return next((c for c in self.children if c.type in types), None)


_parser: "tree_sitter.Parser | None" = None


@lru_cache(maxsize=512)
def parse(script: str) -> Syntax:
    """The syntax tree of a shell script (its root is a `program`). Trees are immutable and say where
    things are relative to the script, so one tree serves every container that runs the same script
    (a chart's pods, a tree's generated jobs): each is parsed once."""
    data = script.encode("utf-8", "surrogatepass")
    root = parser().parse(data).root_node
    return _convert(root, script, _char_offsets(script, data), len(data))


def parser() -> "tree_sitter.Parser":
    """The one shell parser of this process, made on first use."""
    global _parser
    if _parser is None:
        import tree_sitter

        _parser = tree_sitter.Parser(tree_sitter.Language(_bash_language()))
    return _parser


def _bash_language() -> object:
    """The grammar, from tree-sitter-bash's compiled binding. The package's `__init__` also imports
    `importlib.resources` for its highlight queries, which meshlint never reads, and that import is a
    costly part of loading the parser; so the binding is loaded on its own where it is found, and the
    package is imported as usual otherwise."""
    import importlib.machinery
    import importlib.util
    import os

    spec = importlib.util.find_spec("tree_sitter_bash")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_binding" + suffix)
            if os.path.isfile(path):
                loader = importlib.machinery.ExtensionFileLoader("tree_sitter_bash._binding", path)
                binding = importlib.util.spec_from_file_location("tree_sitter_bash._binding", path, loader=loader)
                if binding is not None:
                    module = importlib.util.module_from_spec(binding)
                    loader.exec_module(module)
                    language = getattr(module, "language", None)
                    if callable(language):
                        return language()
    import tree_sitter_bash

    return tree_sitter_bash.language()


def _char_offsets(script: str, data: bytes) -> list[int] | None:
    """Byte offset of each character, when the script is not ASCII (None: bytes are characters)."""
    if len(data) == len(script):
        return None
    starts, offset = [], 0
    for char in script:
        starts.append(offset)
        offset += len(char.encode("utf-8", "surrogatepass"))
    return starts


def _convert(root: "tree_sitter.Node", script: str, starts: list[int] | None, size: int) -> Syntax:
    """Copy the tree bottom-up without recursion (a deeply nested script must not exhaust the stack)."""

    def char(byte: int) -> int:
        if starts is None:
            return byte
        return len(script) if byte >= size else bisect_right(starts, byte) - 1

    # Post-order walk: each node is finished once all its children are.
    stack: list[tuple[tree_sitter.Node, str | None, list[Syntax]]] = [(root, None, [])]
    pending: list[list[tuple[tree_sitter.Node, str | None]]] = [_children(root)]
    while True:
        node, field, done = stack[-1]
        todo = pending[-1]
        if todo:
            child, child_field = todo.pop()
            stack.append((child, child_field, []))
            pending.append(_children(child))
            continue
        start, end = char(node.start_byte), char(node.end_byte)
        syntax = Syntax(node.type, field, start, end, script, node.is_named, tuple(done))
        stack.pop()
        pending.pop()
        if not stack:
            return syntax
        stack[-1][2].append(syntax)


def _children(node: "tree_sitter.Node") -> "list[tuple[tree_sitter.Node, str | None]]":
    """A node's children with their fields, last first (they are popped from the end)."""
    return [(child, node.field_name_for_child(i)) for i, child in reversed(list(enumerate(node.children)))]
