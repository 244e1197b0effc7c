"""Calls that tell a classic Istio sidecar to exit: `POST localhost:15020/quitquitquit` (reference §3).

A Job's pod completes only when every container has exited, and a classic istio-proxy never exits by
itself; so a batch container has to ask it to. This module finds those calls in container commands,
exec-form or inside `sh -c` scripts, and records how each one is made: by which tool, whether it is a
POST (the agent answers anything else with 405 and keeps running), and whether it also runs when the
work fails.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts.shell import is_shell, segment_position, segments
from meshlint.mesh.facts.shell import words as _words
from meshlint.model.pod import Container
from meshlint.source.document import Node

_QUIT = re.compile(r"(?:(?:localhost|127\.0\.0\.1|\[::1\])?:(15020|15000))?/?quitquitquit")
_SKIP_WORDS = frozenset(("exec", "sudo", "command", "then", "do", "else", "{", "(", "!", "nohup", "time"))
_SET_E = re.compile(r"(^|[\s;])set\s+-[a-zA-Z]*e", re.M)
_TRAP_EXIT = re.compile(r"(^|[\s;])trap\s+.*\b(EXIT|0)\b", re.M)
_CURL_POST = re.compile(r"^(-X\s*POST|--request(=|\s+)POST|-d.*|--data.*|-F.*|--form.*|--json.*)$")


class QuitCall(NamedTuple):
    container: Container
    command: str  # the simple command that makes the call, as written
    position: Position
    tool: str
    port: str | None
    is_post: bool
    in_exit_trap: bool
    skipped_on_failure: str | None  # why a failed run would not reach it, or None


def quit_calls(container: Container) -> list[QuitCall]:
    """The quit calls a container makes, each placed where it is written (inside block scripts too)."""
    argv = container.argv
    texts = [n.text or "" for n in argv]
    if not any("quitquitquit" in t for t in texts):
        return []
    shell = bool(texts) and is_shell(texts[0])
    calls: list[QuitCall] = []
    for node, text in zip(argv, texts, strict=False):
        if "quitquitquit" not in text:
            continue
        if shell or "\n" in text or " " in text.strip():
            calls.extend(_from_script(container, node, text))
        else:  # exec form: the whole argv is the one command
            words = texts
            calls.append(_call(container, " ".join(words), words, node.pos, text, in_trap=False, skipped=None))
    return calls


def _call(
    container: Container, command: str, words: list[str], position: Position, url_text: str, in_trap: bool, skipped: str | None
) -> QuitCall:
    tool, args = _tool(words)
    match = _QUIT.search(url_text)
    port = match.group(1) if match else None
    return QuitCall(container, command.strip(), position, tool, port, _is_post(tool, args, words), in_trap, skipped)


def _tool(words: list[str]) -> tuple[str, list[str]]:
    for i, word in enumerate(words):
        if word in _SKIP_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            continue
        if word == "timeout" and i + 1 < len(words):
            continue
        if re.fullmatch(r"[0-9]+[smh]?", word) and i > 0 and words[i - 1] == "timeout":
            continue
        return word.rsplit("/", 1)[-1], words[i + 1:]
    return "", []


def _is_post(tool: str, args: list[str], words: list[str]) -> bool:
    joined = " ".join(args)
    if tool == "curl":
        for i, arg in enumerate(args):
            nxt = args[i + 1] if i + 1 < len(args) else ""
            if _CURL_POST.match(arg) or (arg in ("-X", "--request") and nxt == "POST"):
                return True
            if arg.startswith("-") and not arg.startswith("--") and "d" in arg[1:] and "X" not in arg:
                return True  # combined short flags such as -sd ''
        return False
    if tool == "wget":
        return bool(re.search(r"--post-data|--post-file|--method(=|\s+)POST", joined))
    if tool == "pilot-agent":
        return "POST" in args
    # Other clients (python, httpie, a program of its own): give them the benefit of the doubt.
    return True


def _from_script(container: Container, node: Node, script: str) -> list[QuitCall]:
    calls = []
    exit_trap = bool(_TRAP_EXIT.search(script))
    for start, end, separator in segments(script):
        segment = script[start:end]
        if "quitquitquit" not in segment:
            continue
        position = segment_position(node, script, start)
        words = _words(segment)
        if words[:1] == ["trap"] and len(words) >= 2:
            signals = words[2:]
            inner = _words(words[1])
            on_exit = "EXIT" in signals or "0" in signals
            calls.append(_call(container, segment, inner, position, words[1], in_trap=on_exit, skipped=None))
            continue
        skipped = None
        set_e = _SET_E.search(script, 0, start)
        if separator == "&&":
            skipped = "it runs only after `&&`, so a failing command before it skips it"
        elif set_e and not exit_trap:
            skipped = "the script runs with `set -e` and no `trap ... EXIT`, so a failing command ends it before the call"
        calls.append(_call(container, segment, words, position, segment, in_trap=False, skipped=skipped))
    return calls
