"""Command line: ``python -m generator build``, ``import``, ``serve`` and ``count``."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import gc
import io
import os
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

# Only what the parser and every command need; each command imports its own work (below), so that
# ``count``, ``import`` and ``--help`` do not load the site's templates, pages and renderer.
from generator.build.cache import DEFAULT_CACHE
from generator.cards.problems import InputError, display_path, report
from generator.parallel import available_jobs
from generator.site.page import LANGUAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Build the BERT Parameter Atlas: model cards in, a static HTML site out.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    build_cmd = commands.add_parser(
        "build",
        help="validate the cards and build the site",
        description="Validate every model card, count its tensors and write the site. On any problem "
        "nothing is written and the previous site is left as it was.",
    )
    build_cmd.add_argument(
        "--models",
        type=Path,
        default=Path("models"),
        metavar="DIR",
        help="directory of YAML model cards (default: models/)",
    )
    build_cmd.add_argument(
        "--out", type=Path, default=Path("site"), metavar="DIR", help="output directory (default: site/)"
    )
    build_cmd.add_argument(
        "--base-url",
        type=_base_url,
        metavar="URL",
        help="where the site will be published, e.g. https://user.github.io/repo/; used only for canonical "
        "links, the sitemap and Open Graph tags (links inside the site stay relative)",
    )
    build_cmd.add_argument(
        "--language",
        metavar="CODE",
        help=f"build this edition alone, at the root: the folder of content/ its prose comes from (default: every "
        f"folder of content/, {LANGUAGE} at the root and each other under <CODE>/)",
    )
    build_cmd.add_argument("--no-search", action="store_true", help="skip the Pagefind search index")
    build_cmd.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        metavar="N",
        help=f"processes that write model pages at once (default: the processors available, here {available_jobs()})",
    )
    build_cmd.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE,
        metavar="DIR",
        help=f"where a build keeps what it made for the next one to reuse (default: {DEFAULT_CACHE}/)",
    )
    build_cmd.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the cache: build everything afresh"
    )
    # serve's builder (build/serve.py): one build for each line read from stdin, each exit status written
    # to the pipe whose descriptor is given, until stdin closes.
    build_cmd.add_argument("--serve-builds", type=int, metavar="FD", help=argparse.SUPPRESS)
    talk = build_cmd.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    talk.add_argument("-v", "--verbose", action="store_true", help="print each stage of the build with its time")
    serve_cmd = commands.add_parser(
        "serve",
        help="build, preview on localhost, and rebuild when a card, template, text or module changes",
        description="Build the site, serve it on 127.0.0.1, and rebuild whenever a file under the models "
        "directory, templates/, content/ or generator/ changes. Stop with Ctrl-C.",
    )
    serve_cmd.add_argument("--models", type=Path, default=Path("models"), metavar="DIR", help="default: models/")
    serve_cmd.add_argument("--out", type=Path, default=Path("site"), metavar="DIR", help="default: site/")
    serve_cmd.add_argument("--port", type=_port, default=8000, metavar="PORT", help="default: 8000")
    import_cmd = commands.add_parser(
        "import",
        help="write a model card from a transformers config.json",
        description="Write models/<ID>.yaml from a transformers config.json; its model_type picks the family "
        "and, without --head, the class its architectures names picks the head (ForSequenceClassification, "
        "ForMaskedLM, ForPreTraining; Model or none: base). Keys the family's config class does not know "
        "are left out and listed.",
    )
    import_cmd.add_argument("config", type=Path, metavar="CONFIG.json", help="a transformers config.json")
    import_cmd.add_argument("--id", required=True, dest="card_id", metavar="NAME", help="the card's id and file name")
    import_cmd.add_argument(
        "--head",
        metavar="HEAD",
        help="base, pretraining, masked-lm or sequence-classification (default: what architectures names)",
    )
    import_cmd.add_argument(
        "--models", type=Path, default=Path("models"), metavar="DIR", help="where to write the card (default: models/)"
    )
    import_cmd.add_argument("--force", action="store_true", help="overwrite an existing card")
    count_cmd = commands.add_parser(
        "count",
        help="print a card's parameters, FLOPs and memory for one training step",
        description="Count one card: its parameters, the FLOPs of the forward and backward of one training "
        "step, the activation bytes autograd keeps (fp32 and bf16) and the training memory with Adam "
        "(a lower bound: no allocator overhead, temporaries or workspaces), at a batch size and length.",
    )
    count_cmd.add_argument("card", type=Path, metavar="CARD.yaml", help="a model card")
    count_cmd.add_argument("--batch", type=_positive, default=1, metavar="B", help="batch size (default: 1)")
    count_cmd.add_argument(
        "--seq", type=_positive, metavar="S", help="sequence length (default: max_position_embeddings or 512, the less)"
    )
    count_cmd.add_argument("--json", action="store_true", help="print one JSON object of integers")
    tuning = count_cmd.add_argument_group(
        "fine-tuning", "train part of the model, as peft 0.21 does (default: all of it)"
    )
    tuning.add_argument(
        "--method",
        choices=("full", "head", "bitfit", "lora", "ia3", "prompt-tuning"),
        default="full",
        help="what trains: everything, the head, the biases and the head, LoRA, IA³ or a prompt (default: full)",
    )
    tuning.add_argument("--rank", type=_positive, metavar="R", help="LoRA's rank r (default: 8)")
    tuning.add_argument(
        "--targets",
        type=_names,
        metavar="NAMES",
        help="modules LoRA or IA³ adapts, by name or name ending, comma-separated (default: peft's own for the family)",
    )
    tuning.add_argument(
        "--feedforward", type=_names, metavar="NAMES", help="IA³ targets whose input is scaled (default: peft's own)"
    )
    tuning.add_argument(
        "--virtual-tokens", type=_positive, metavar="N", help="prompt tuning's number of virtual tokens (default: 20)"
    )
    return parser


def _names(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected module names separated by commas, found {text!r}")
    return names


def _positive(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:  # '²' is a digit, not a number
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 up, found {text!r}")
    return int(text)


# What an address may not hold unescaped (RFC 3986): spaces and controls, quotes, angle brackets and the like.
_NOT_IN_URLS = frozenset(' "<>\\^`{|}') | {chr(c) for c in range(32)} | {chr(127)}


def _base_url(text: str) -> str:
    """An absolute http(s) address with a host, no query or fragment: the sitemap and canonical links
    are made from it, and a typo would only show once the site was published."""
    parts = urllib.parse.urlsplit(text)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or "?" in text  # a query, even an empty one
        or "#" in text  # a fragment, likewise
        or any(char in _NOT_IN_URLS for char in text)
    ):
        raise argparse.ArgumentTypeError(
            f"expected an absolute http:// or https:// address without a query or fragment, "
            f"such as https://user.github.io/repo/, found {text!r}"
        )
    return text


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, found {text!r}")
    return int(text)


def _import(args: argparse.Namespace) -> int:
    from generator.cards.importer import import_config

    try:
        result = import_config(args.config, args.card_id, args.head, args.models, force=args.force)
    except InputError as error:
        return report(error, "no card was written")
    if result.choice.warning:
        print(f"warning: {result.choice.warning}", file=sys.stderr)
    print(f"head: {result.choice.head.value} ({result.choice.reason})")
    if result.dropped:
        print(
            f"warning: left out {len(result.dropped)} key(s) that {args.config} carries but the config class "
            f"does not know: {', '.join(result.dropped)}",
            file=sys.stderr,
        )
    print(f"wrote {display_path(result.path)}")
    return 0


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    """No garbage collection while a build runs, from before its imports on (``gc.collect`` still works);
    the collector is as it was afterwards, for a caller that runs ``main`` in its own process.

    A build makes millions of small tuples and frozen objects and no reference cycle: reference
    counting frees each as it goes (tests/test_garbage.py checks every step a build takes for a card).
    The collector would still walk every young object: at CPython's default it ran about a thousand
    times in a catalog build and took a quarter of its CPU time, and collecting every 50,000 objects
    instead still took a twentieth.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    # Numbers and messages hold "×", "≈" and "→": on a terminal or a pipe that cannot encode them (an ASCII
    # locale, a Windows code page), each is written as an escape, as Python writes stderr, not a traceback.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    try:
        if args.command == "import":
            return _import(args)
        if args.command == "count":
            from generator.count import count

            return count(args)
        if args.command == "serve":
            from generator.build.serve import serve

            return serve(args.models, args.out, args.port)
        if args.serve_builds is not None:
            return _builds_on_request(args, args.serve_builds)
        return _build(args)
    except KeyboardInterrupt:  # Ctrl-C: what was being written is removed on the way here (staged_site)
        left = f"; {display_path(args.out)}/ was left unchanged" if args.command == "build" else ""
        print(f"\ninterrupted{left}", file=sys.stderr)
        return 130  # as a shell reports a command stopped by SIGINT
    except BrokenPipeError:  # the reader left (`count CARD | head -2`): stop quietly, as `yes | head` does
        _drop_output()  # what is still buffered would fail again on the way out
        return 141  # as a shell reports a command stopped by SIGPIPE
    except OSError as error:
        if error.errno not in _CANNOT_WRITE:
            raise
        return _not_written(error)


def run() -> NoReturn:
    """The command line as a program: ``python -m generator`` and the ``bert-atlas`` script."""
    leave(main())


def leave(status: int) -> NoReturn:
    """End the process with ``status`` once its output is out (``python -m generator``).

    Without the interpreter's teardown, which frees every object a build left, one by one: some 20 ms
    at the end of a catalog build, where the system takes the whole process back at once. What was
    registered to run at exit (multiprocessing's, logging's) runs first.
    """
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with the descriptor closed, and nothing was written
                stream.flush()
    except BrokenPipeError:
        _drop_output()
        status = 141
    except OSError as error:
        if error.errno not in _CANNOT_WRITE:
            raise
        status = _not_written(error)
    atexit._run_exitfuncs()
    os._exit(status)


# A file system that takes no more (`count CARD --json > out.json` on a full disk): said in one line.
_CANNOT_WRITE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _not_written(error: OSError) -> int:
    _drop_output()
    where = f" {error.filename}" if error.filename else " the output"
    with contextlib.suppress(OSError):
        print(f"error: cannot write{where}: {error.strerror or error}", file=sys.stderr, flush=True)
    return 1


def _drop_output() -> None:
    """Send what is left of stdout nowhere: what is buffered there cannot be written either."""
    if sys.stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _builds_on_request(args: argparse.Namespace, replies: int) -> int:
    """Build once for each line read from stdin, and write each build's exit status to the descriptor
    ``replies``, until stdin closes (serve's builder, build/serve.py). What the code alone works out
    stays from one build to the next; serve starts a new builder when the code, templates or content
    change."""
    with os.fdopen(replies, "w", encoding="ascii") as out:
        while True:
            try:
                if not sys.stdin.readline():
                    return 0
            except KeyboardInterrupt:  # a terminal's Ctrl-C reaches serve and this child: no build to report
                return 130
            status = _build(args)  # a Ctrl-C during the build is the build's to report (main)
            try:
                out.write(f"{status}\n")
                out.flush()
                # _build froze what a build left so that the process's exit skips it; this process goes
                # on, so what the build left unreachable is collected before the next request.
                gc.unfreeze()
                gc.collect()
            except KeyboardInterrupt:  # the build is done and reported: nothing was left unchanged
                return 130


def _build(args: argparse.Namespace) -> int:
    with _collector_off():
        return _build_without_collector(args)


def _build_without_collector(args: argparse.Namespace) -> int:
    from generator.build.pipeline import build
    from generator.build.progress import Progress
    from generator.site.content import editions as content_editions
    from generator.site.page import SettingError
    from generator.site.render import SiteOptions
    from generator.site.search import SearchIndexError

    # Frozen, what was imported is never visited by a collection again, which also spares forked
    # workers from copying the pages that hold it (a collection writes to every object it visits).
    gc.freeze()
    started = time.perf_counter()
    progress = Progress.for_terminal(quiet=args.quiet, verbose=args.verbose)
    try:
        editions = content_editions() if args.language is None else ()
        options = SiteOptions.from_environment(
            args.base_url, search=not args.no_search, language=args.language or LANGUAGE, editions=editions
        )
        cache = None if args.no_cache else args.cache_dir
        result = build(args.models, args.out, options, progress, args.jobs, cache)
        # What is left now (the families' declarations, the compiled templates) lives until the process ends;
        # frozen, the collections that run as the interpreter shuts down skip it (~1.5 s of a catalog build).
        gc.freeze()
    except InputError as error:
        progress.abandon()
        return report(error, f"{display_path(args.out)}/ was left unchanged")
    except (SearchIndexError, SettingError) as error:
        progress.abandon()
        print(f"error: {error}; {display_path(args.out)}/ was left unchanged", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - started
    if not args.quiet:
        print(
            f"built {result.cards} models into {display_path(args.out)}/: {result.pages} pages, "
            f"{result.files} files, {result.bytes / 1e6:.1f} MB in {elapsed:.2f} s"
        )
    return 0
