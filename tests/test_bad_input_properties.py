"""Any card file, however broken, ends in a site or in located errors, and never harms site/.

Hypothesis writes card files of every kind: real cards with one field mutated or their text
edited (tabs, stray quotes, a byte-order mark, invalid UTF-8, YAML oddities), random YAML
documents, random text and bytes, and hostile constructs (tags, aliases, deep nesting, huge
numbers). Each is built in-process by the command line into a directory that already holds a
site. The build must either succeed or exit 1 with only ``path:line:column: ...`` lines and
the summary line; a traceback fails the test, and a failed build must leave the site byte for
byte as it was.

CI (CI=true) runs 1,000 examples of the main property, reproducibly; a local run fewer.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import ALL_CARD_PATHS, MODELS
from generator.build import pipeline
from generator.cards.card import TOP_LEVEL_KEYS
from generator.cli import _parser, main
from generator.counting.families import FAMILIES

# A small catalog card: its site is the one every example must leave alone when it fails.
GOOD_CARD = MODELS / "bert-uncased-l2-h128-a2.yaml"
CARD_TEXTS = [path.read_text(encoding="utf-8") for path in ALL_CARD_PATHS]
CARD_DATA = [yaml.safe_load(text) for text in CARD_TEXTS]
LOCATED = re.compile(r"(?P<path>.+?):(?P<line>[1-9]\d*):(?P<column>[1-9]\d*): \S.*")
SUMMARY = re.compile(r"error: (?P<count>\d+) problem\(s\) in \d+ file\(s\); .*")
SECONDS_PER_BUILD = 20  # a hang fails the example instead of stalling CI


def _build_help() -> str:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        _parser().parse_args(["build", "--help"])
    return out.getvalue()


# Builds run without the search index: Pagefind is a subprocess per build and has its own tests.
# One edition: bad input fails before a page is written, and every edition renders the same objects.
# The Chinese pages are checked on a sample (tests/browser/test_edition.py); this halves each example.
BUILD_OPTIONS = [*(["--no-search"] if "--no-search" in _build_help() else []), "--language", "en"]


# ---------------------------------------------------------------------------------------------
# Values and text fragments
# ---------------------------------------------------------------------------------------------

SIZES = st.one_of(
    st.integers(min_value=-3, max_value=600),
    st.sampled_from([0, -1, 1, 3, 7, 64, 770, 2**31 - 1, 2**31, 2**63, 10**40, -(2**31)]),
)
# Strings safe_dump will quote, so they stay strings: the "768" that is not 768.
NUMBERLIKE = st.sampled_from(
    ["768", "0x300", "768.0", "1e3", "true", "yes", "on", "~", "null", "", " ", "1_000", "0o17", "1:30", "=", "<<"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    SIZES,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=24),
    NUMBERLIKE,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)
# Raw YAML put straight into a card's text: the constructs safe_dump never writes.
SNIPPETS = st.sampled_from(
    [
        "yes",
        "no",
        "on",
        "~",
        "0x300",
        "0o1400",
        "0b1100000000",
        "1:20:30",
        "768.",
        ".inf",
        "-.inf",
        ".nan",
        "1e3",
        "1.0e+3",
        "2001-12-14t21:59:43.10-05:00",
        "2002-12-14",
        "=",
        "<<",
        "'unclosed",
        '"unclosed',
        '"\\x41\\u263A\\U0001F600"',
        '"\\ud800"',
        "[",
        "]",
        "{",
        "}",
        "{a: 1, a: 2}",
        "[1, [2, [3]]]",
        "&anchor 1",
        "*anchor",
        "<<: *anchor",
        "!!int abc",
        "!!int 0x",
        "!!float x",
        "!!bool maybe",
        "!!null x",
        "!!str 768",
        "!!seq abc",
        "!!map abc",
        "!!binary aGVsbG8=",
        "!!set {a, b}",
        "!!omap [a: 1]",
        "!!pairs [a: 1]",
        "!!timestamp nope",
        "!!python/object/apply:os.system [echo]",
        "!!python/object/new:builtins.int [1]",
        "!!python/name:os.system",
        "!!python/module:os",
        "!!python/tuple [1, 2]",
        "!custom value",
        "!<tag:example.com,2000:x> y",
        "? complex key\n: value",
        "---",
        "...",
        "%YAML 1.1",
        "%TAG !py! tag:yaml.org,2002:python/",
        "|\n  block\n  text",
        ">-\n  folded",
        "- a\n- b",
        "\t",
        "\x00",
        "\x07",
        "\x85",
        "\u2028",
        "\u202e",
        "\ufeff",
        "\ud7ff",
        "#comment",
        "1" * 120,
        "1" * 5000,
        "0b" + "1" * 3000,
        ":".join(["1"] + ["30"] * 400),
        "9" * 99,
        "[" * 200 + "]" * 200,
        "- " * 60 + "x",
    ]
)


def _places(data: Any, keys: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path in a card's data, containers included."""
    yield keys
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _places(value, (*keys, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _places(value, (*keys, index))


def _dump(data: Any, draw: st.DrawFn) -> str:
    return yaml.safe_dump(
        data,
        allow_unicode=draw(st.booleans()),
        sort_keys=False,
        default_flow_style=draw(st.sampled_from([False, None, True])),
        width=draw(st.sampled_from([80, 4096])),
    )


# ---------------------------------------------------------------------------------------------
# Card files
# ---------------------------------------------------------------------------------------------


@st.composite
def mutated_cards(draw: st.DrawFn) -> bytes:
    """A real card with one field replaced, deleted, renamed or added."""
    import copy

    data = copy.deepcopy(draw(st.sampled_from(CARD_DATA)))
    place = draw(st.sampled_from(list(_places(data))))
    action = draw(st.sampled_from(["replace", "replace", "delete", "rename", "add"]))
    if not place:
        data = draw(VALUES) if action == "replace" else data
        return _dump(data, draw).encode("utf-8")
    parent = data
    for key in place[:-1]:
        parent = parent[key]
    last = place[-1]
    if action == "replace":
        current = parent[last]
        if isinstance(current, str) and draw(st.booleans()):
            parent[last] = draw(st.text(min_size=1, max_size=40).filter(str.strip))  # odd but valid text
        elif isinstance(current, int) and not isinstance(current, bool) and draw(st.booleans()):
            parent[last] = draw(SIZES)
        else:
            parent[last] = draw(VALUES)
    elif action == "delete":
        del parent[last]
    elif action == "rename" and isinstance(parent, dict):
        new_key = draw(
            st.sampled_from([*TOP_LEVEL_KEYS, "num_labels", "hidden_size", "dim", "n_heads"]) | st.text(max_size=15)
        )
        parent[new_key] = parent.pop(last)
    elif isinstance(parent, dict):
        parent[draw(st.text(max_size=15))] = draw(VALUES)
    else:
        parent.append(draw(VALUES))
    if isinstance(data, dict) and "family" in place[:1] and action == "replace" and draw(st.booleans()):
        data["family"] = draw(st.sampled_from(sorted(FAMILIES)))  # a real family with another's config
    return _dump(data, draw).encode("utf-8")


@st.composite
def edited_texts(draw: st.DrawFn) -> bytes:
    """A real card's text with a few edits: raw YAML constructs, tabs, lost characters, copied lines."""
    lines = draw(st.sampled_from(CARD_TEXTS)).splitlines(keepends=True)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        index = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
        line = lines[index] if lines else ""
        edit = draw(st.sampled_from(["value", "insert", "delete", "duplicate", "indent", "unicode"]))
        if edit == "value" and ":" in line:
            key = line.split(":", 1)[0]
            lines[index] = f"{key}: {draw(SNIPPETS)}\n"
        elif edit == "insert":
            at = draw(st.integers(min_value=0, max_value=len(line)))
            lines[index] = line[:at] + draw(SNIPPETS) + line[at:]
        elif edit == "delete" and line:
            start = draw(st.integers(min_value=0, max_value=len(line) - 1))
            lines[index] = line[:start] + line[start + draw(st.integers(min_value=1, max_value=4)) :]
        elif edit == "duplicate":
            lines.insert(index, line)
        elif edit == "indent":
            lines[index] = draw(st.sampled_from(["\t", " ", "  ", "    ", " \t"])) + line
        else:
            at = draw(st.integers(min_value=0, max_value=len(line)))
            lines[index] = line[:at] + draw(st.text(min_size=1, max_size=6)) + line[at:]
    text = "".join(lines)
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    raw = text.encode(encoding, errors="surrogatepass" if encoding.startswith("utf") else "replace")
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    return raw


@st.composite
def random_documents(draw: st.DrawFn) -> bytes:
    """A mapping with card keys (and others) holding any values."""
    keys = st.sampled_from(TOP_LEVEL_KEYS) | st.text(max_size=10)
    data = draw(st.dictionaries(keys, VALUES, max_size=8))
    if draw(st.booleans()):
        data.setdefault("family", draw(st.sampled_from(sorted(FAMILIES))))
        data.setdefault("head", draw(st.sampled_from(["base", "masked-lm", "pretraining", "sequence-classification"])))
        data.setdefault("title", draw(st.text(min_size=1, max_size=20)))
    return _dump(data, draw).encode("utf-8")


def hostile_documents() -> st.SearchStrategy[bytes]:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    documents = [
        laughs,
        "title: " + "[" * 5000 + "]" * 5000 + "\n",
        "title: " + "{a: " * 2000 + "1" + "}" * 2000 + "\n",
        "config:\n" + "".join(" " * i + "a:\n" for i in range(1, 200)),
        "title: " + "9" * 5000 + "\n",
        "title: !!python/object/apply:os.system ['true']\nfamily: bert\nhead: base\n",
        "!!python/object:builtins.dict {}\n",
        "%TAG !py! tag:yaml.org,2002:python/\n---\ntitle: !py!object/apply:os.system ['true']\n",
        "--- a\n--- b\n",
        "title: t\nfamily: bert\nhead: base\nconfig:\n  num_hidden_layers: 2147483647\n",
        "title: t\nfamily: albert\nhead: base\nconfig:\n  num_hidden_groups: 100000\n  inner_group_num: 100000\n",
        "title: t\nfamily: mobilebert\nhead: base\nconfig:\n  num_feedforward_networks: 2147483647\n",
        "title: t\nfamily: bert\nhead: base\nconfig:\n  vocab_size: 2147483647\n  hidden_size: 2147483647\n"
        "  num_attention_heads: 1\n  intermediate_size: 2147483647\n",
        "title: x\n" + "notes: " + "y" * 300_000 + "\n",
    ]
    return st.sampled_from(documents).map(lambda text: text.encode("utf-8"))


CARD_FILES = st.one_of(
    mutated_cards(),
    mutated_cards(),
    mutated_cards(),
    edited_texts(),
    edited_texts(),
    random_documents(),
    st.text(max_size=200).map(lambda text: text.encode("utf-8", errors="surrogatepass")),
    st.binary(max_size=200),
    hostile_documents(),
)
FILE_NAMES = st.sampled_from(
    ["card.yaml", "card.yaml", "card.yaml", "bert-uncased-l2-h128-a2.yaml", "Bad Name.yaml", "x.yml", "..yaml"]
)


# ---------------------------------------------------------------------------------------------
# The property
# ---------------------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def previous_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site built from one good card: what every failing example must leave untouched."""
    work = tmp_path_factory.mktemp("previous")
    (work / "models").mkdir()
    shutil.copy(GOOD_CARD, work / "models")
    status, _, err = run_build(work / "models", work / "site")
    assert status == 0, err
    previous_files(work / "site")  # its hashes, before any example's build could write through a link
    return work / "site"


@pytest.fixture(scope="module", autouse=True)
def one_fingerprint() -> Iterator[None]:
    """The builds' cache key worked once, not once an example: it hashes every source file (20 ms).

    The sources do not change during the test, so the key is the one each build would work out.
    Autouse, so the test function's source, from which Hypothesis derives its examples, stays as it was.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "fingerprint", functools.cache(pipeline.fingerprint))
        yield


# The previous site's files and their hashes, taken once (not before each example): every example's copy of it
# must still hold exactly these. A helper, not a fixture: Hypothesis derives the CI profile's examples
# (derandomize=True) from the test function's source, which stays as it was.
previous_files = functools.cache(snapshot)


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"a build took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_build(models: Path, out: Path) -> tuple[int, str, str]:
    """Run ``python -m generator build`` in this process; any exception escapes and fails the test."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), time_limit(SECONDS_PER_BUILD):
        status = main(["build", "--models", str(models), "--out", str(out), *BUILD_OPTIONS])
    return status, stdout.getvalue(), stderr.getvalue()


def check_build(previous_site: Path, files: dict[str, bytes]) -> None:
    """Build the given card files over a copy of the previous site and check the outcome."""
    with tempfile.TemporaryDirectory(prefix="atlas-prop-") as name:
        work = Path(name)
        models, out = work / "models", work / "site"
        models.mkdir()
        for file_name, content in files.items():
            (models / file_name).write_bytes(content)
        # Linked, not copied: 8 MB a build, 1,000 times. A failed build that wrote through a link changes
        # a file from the hashes previous_files took before the first example, so it fails the check below.
        shutil.copytree(previous_site, out, copy_function=os.link)
        started = time.perf_counter()
        status, _, err = run_build(models, out)
        elapsed = time.perf_counter() - started
        assert "Traceback" not in err
        assert sorted(p.name for p in work.iterdir()) == ["models", "site"], "staging left behind"
        if status == 0:
            event("the build succeeded")
            assert (out / "index.html").is_file() and (out / ".bert-atlas-site").is_file()
            return
        event("the build failed")
        assert status == 1, err
        lines = err.splitlines()
        assert len(lines) >= 2, err
        summary = SUMMARY.fullmatch(lines[-1])
        assert summary, f"last line is not the summary: {lines[-1]!r}"
        assert int(summary["count"]) == len(lines) - 1, err
        for line in lines[:-1]:
            located = LOCATED.fullmatch(line)
            assert located, f"not a located error: {line!r}"
            assert Path(located["path"]).resolve().is_relative_to(models.resolve()), line
        assert snapshot(out) == previous_files(previous_site), "a failed build changed the previous site"
        assert elapsed < SECONDS_PER_BUILD


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(card=CARD_FILES, name=FILE_NAMES, with_good_card=st.booleans())
def test_any_card_file_builds_or_fails_with_located_errors(
    previous_site: Path, card: bytes, name: str, with_good_card: bool
) -> None:
    files = {name: card}
    if with_good_card and name != GOOD_CARD.name:
        files[GOOD_CARD.name] = GOOD_CARD.read_bytes()
    check_build(previous_site, files)
