"""Write the ground truth for compute and memory: FLOPs and saved activations, measured with torch.

Run with the ``reference`` extra installed (torch and transformers), normally through
`make reference`. For every card that ``tools/reference.py`` covers (the catalog and the test
cards; a family transformers does not implement has no forward here, so it is left out), this
builds the card's class from its config as that script does, with eager attention, and runs
one training step at several batch sizes b and sequence lengths s, as the project defines it:

* inputs: ``input_ids`` of shape (b, s) only; the model in training mode, dropout as configured;
* labels: ``masked-lm`` (b, s); ``pretraining`` (b, s), and a sentence label (b,) where the
  family declares one (``GroundTruth.sentence_label``; a discriminator takes (b, s) alone);
  ``sequence-classification`` (b,), floats when there is one label; ``base``: none, and the
  backward starts from ``last_hidden_state.sum()``;
* FLOPs: what ``torch.utils.flop_counter.FlopCounterMode`` counts, for the forward (loss
  included) and for the backward, separately;
* activation bytes: the distinct storages that autograd saves during the forward
  (``torch.autograd.graph.saved_tensors_hooks``), counted once each however many ops save them,
  without the model's own tensors (parameters, and buffers such as ``position_ids``, which
  exist whether or not anything runs); with the model in fp32, and cast to bf16.

Everything runs on the meta device, which has every shape and no data, so full-size configs
(s = 8192) cost no memory; ``--check-cpu`` runs the smallest point of each small model on
real CPU tensors as well and fails if any figure differs from the meta run.

Each figure is a polynomial in b and s: degree 1 in b (every op is batched, and nothing but
the inputs, the labels and the batch-free tensors is saved once per step) and at most 2 in s
(the attention scores are s × s). The points are every (b, s) with b in {1, 2} and s in
{1, 2, 3, P}, and (3, 3): the six with s ≤ 3 determine such a polynomial, and (1, P), (2, P)
and (3, 3) check it, two of them at s = P. A family adds the lengths where a formula could
bend (``GroundTruth.lengths``: a relative span's edge, and one past it), to show that nothing
changes there. What the tool reads from the generator is only such inputs, never a count.

A classifier that picks its labelled rows with ``(labels >= 0).nonzero()`` has a shape that
depends on the data, which the meta device refuses unless told to assume that every element is
nonzero. The step's labels are zeros, each of them >= 0, so that assumption is what a real run
does, and it is turned on: every card runs on the meta device, under one set of kernels. (They
matter in bf16: the meta kernel of ``native_layer_norm``, like CUDA's, returns its mean and
reciprocal deviation in fp32, and the CPU kernel of torch 2.13 in bf16.) A class that
cannot run such a step (a segment table with no rows; a sentence head given another number of
labels than it reads its logits in, which has no loss then) gets a file with the error
instead of points. transformers' check for padding without an attention mask calls ``.item()``,
which meta tensors refuse; it only warns, so it is turned off.

Output: ``tests/reference/compute/<id>.json``; ``--explain`` prints, per module, the FLOPs and
the saved tensors of one point instead of writing anything. ``--sample`` measures instead every
config of ``tests/reference/sample/configs.json`` that transformers built (``tools/config_sample.py``:
random small configs of every family and head, sentinel values drawn often) at four points,
(1, 1), (2, min(3, P)), (1, min(7, P)) and (3, P), into ``tests/reference/sample/compute.json``:
checks of the declarations on configs nobody chose, where the cards' points prove the formulas.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
import torch.fx.experimental._config
import transformers
import yaml
from torch.utils.flop_counter import FlopCounterMode

from reference import FAMILIES, build_config, ground_truth, implemented, model_of, write_json

ROOT = Path(__file__).resolve().parent.parent
# Only a warning, and it reads a value (.item()), which the meta device cannot (modeling_utils.py).
transformers.PreTrainedModel.warn_if_padding_and_no_attention_mask = lambda self, *args: None
# The labels of a step are zeros: nonzero() on ``labels >= 0`` keeps every row, as the meta device is told.
torch.fx.experimental._config.meta_nonzero_assume_all_nonzero = True


def _skip_full_mask(padding_mask: Any, kv_length: int, local_attention_size: int | None = None) -> bool:
    """A class that makes its own all-ones mask has it skipped on a CPU, where
    ``padding_mask.all()`` holds; the meta device cannot read it, and the step never pads."""
    if padding_mask is not None and padding_mask.device.type == "meta":
        return local_attention_size is None or kv_length < local_attention_size
    return _ignore_bidirectional_mask(padding_mask, kv_length, local_attention_size)


_ignore_bidirectional_mask = transformers.masking_utils._ignore_bidirectional_mask_sdpa
transformers.masking_utils._ignore_bidirectional_mask_sdpa = _skip_full_mask


def points(family: str, config: Any) -> list[tuple[int, int]]:
    """The (b, s) points measured for a card, as the module docstring explains."""
    length = config.max_position_embeddings
    seqs = {1, 2, 3, length}
    lengths = ground_truth(family).lengths
    if lengths is not None:
        seqs |= set(lengths(config.to_dict()))
    seqs = {s for s in seqs if 1 <= s <= length}
    return sorted({(b, s) for b in (1, 2) for s in seqs} | {(3, min(3, length))})


def batch_inputs(family: str, head: str, config: Any, b: int, s: int, device: str) -> dict[str, torch.Tensor]:
    """The inputs and labels of one training step, as the definitions say.

    A classifier's labels are integers (b,), or floats (b,) with one label; a config that names a
    ``problem_type`` whose loss compares every output with a float label (multi-label, or
    regression with several outputs) gets floats of the logits' shape (b, C), the only labels
    that loss takes."""
    num_labels = config.num_labels
    inputs = {"input_ids": torch.ones((b, s), dtype=torch.long, device=device)}
    if head in ("masked-lm", "pretraining"):
        inputs["labels"] = torch.ones((b, s), dtype=torch.long, device=device)
    label = ground_truth(family).sentence_label
    if head == "pretraining" and label is not None and not sentence_label_refused(family, num_labels):
        inputs[label] = torch.zeros((b,), dtype=torch.long, device=device)
    if head == "sequence-classification":
        problem = getattr(config, "problem_type", None)
        if problem == "multi_label_classification" or (problem == "regression" and num_labels != 1):
            inputs["labels"] = torch.zeros((b, num_labels), dtype=torch.float, device=device)
        else:
            dtype = torch.float if num_labels == 1 else torch.long
            inputs["labels"] = torch.zeros((b,), dtype=dtype, device=device)
    return inputs


def sentence_label_refused(family: str, num_labels: int) -> bool:
    """A sentence head that reshapes its logits to (-1, n) whatever ``num_labels`` is takes no sentence
    label with another number of labels (``GroundTruth.sentence_label_pairs``): its step takes the
    masked-LM labels alone."""
    pairs = ground_truth(family).sentence_label_pairs
    return pairs is not None and num_labels != pairs


def storage_key(tensor: torch.Tensor) -> int:
    """The identity of a tensor's storage (on meta too, where there is no data pointer)."""
    return int(tensor.untyped_storage()._cdata)


def restore_attention_type(model: torch.nn.Module, device: str) -> None:
    """Start each step from the config's attention type. BigBirdModel switches itself to full
    attention for good on a short input, so a later, longer step of the same model would run full
    attention too; a fresh model would not. The outermost module that can switch is BigBirdModel,
    also inside a peft model, whose ``base_model`` is peft's tuner."""
    switches = (module.set_attention_type for module in model.modules() if hasattr(type(module), "set_attention_type"))
    switch = next(switches, None)
    if switch is not None:
        # BigBirdModel builds a decoder with cross-attention as full attention, whatever the config says.
        built = "original_full" if model.config.add_cross_attention else model.config.attention_type
        with torch.device(device):  # the new attention module's own projections, dropped at once
            switch(built)


def measure(
    model: torch.nn.Module, family: str, head: str, b: int, s: int, device: str, *, flops: bool = True
) -> dict[str, int]:
    """One training step's forward and backward FLOPs (unless ``flops`` is False) and saved-activation bytes."""
    restore_attention_type(model, device)
    own = {storage_key(t) for t in (*model.parameters(), *model.buffers())}
    inputs = batch_inputs(family, head, model.config, b, s, device)
    saved: dict[int, int] = {}
    # Each saved storage is held until the step ends. One the forward frees (a position bias computed,
    # then unused without layers) would leave its address to a later storage, counted under its key.
    held: list[Any] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        key = storage_key(tensor)
        if key not in own:
            saved[key] = tensor.untyped_storage().nbytes()
            held.append(tensor.untyped_storage())
        return tensor

    counters = (FlopCounterMode(display=False), FlopCounterMode(display=False))
    forward = counters[0] if flops else contextlib.nullcontext()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), forward, items_on_meta(family, head):
        output = model(**inputs)
    loss = output.last_hidden_state.sum() if head == "base" else output.loss
    if loss is None:
        raise RuntimeError(f"{type(model).__name__} gives no loss for these labels")
    if device == "cpu":
        for key, nbytes in norm_statistics(loss).items():
            saved[key] = max(saved[key], nbytes)
    with counters[1] if flops else contextlib.nullcontext():
        loss.backward()
    measured = {"activations": sum(saved.values())}
    if flops:
        measured |= {"forward": counters[0].get_total_flops(), "backward": counters[1].get_total_flops()}
    return measured


def norm_statistics(loss: torch.Tensor) -> dict[int, int]:
    """LayerNorm's saved mean and reciprocal deviation, by storage, at the bytes they take in fp32.

    The CPU kernel of torch 2.13 returns them in a bf16 model's type; the meta and CUDA kernels in
    fp32. A step measured on a CPU counts them as the other devices keep them."""
    found, seen, stack = {}, set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.name() == "NativeLayerNormBackward0":
            for statistic in (node._saved_result1, node._saved_result2):
                found[storage_key(statistic)] = statistic.numel() * 4
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found


@contextlib.contextmanager
def items_on_meta(family: str, head: str) -> Any:
    """A meta tensor's .item() gives what the step's inputs give on a CPU, where the family declares it
    (``GroundTruth.meta_items``); elsewhere it raises, as torch's does."""
    items = ground_truth(family).meta_items
    if head not in items:
        yield
        return
    item = torch.Tensor.item

    def answer(tensor: torch.Tensor) -> Any:
        return items[head] if tensor.device.type == "meta" else item(tensor)

    torch.Tensor.item = answer  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.Tensor.item = item  # type: ignore[method-assign]


def device_of(family: str, head: str) -> str:
    """The meta device, or a CPU for a head whose step reads its data (``GroundTruth.cpu_heads``)."""
    return "cpu" if head in ground_truth(family).cpu_heads else "meta"


def longest(family: str, cfg: Any, device: str) -> int:
    """The sample's longest length: P, or on a CPU, which checks every index, the longest whose positions
    stay in the table when they start past the padding index (``Family.positions_after``)."""
    length: int = cfg.max_position_embeddings
    after = FAMILIES[family].positions_after
    offset = getattr(cfg, after, None) if isinstance(after, str) else after
    if device == "cpu" and isinstance(offset, int) and offset >= 0:
        return min(length, length - offset - 1)
    return length


def models_on(device: str, head: str, cfg: Any) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The class in fp32 and in bf16, on the meta device or with random weights on a CPU."""
    made = model_of_cpu if device == "cpu" else model_of
    return made(head, cfg).train(), made(head, cfg).train().to(torch.bfloat16)


def card_reference(card: dict[str, Any], *, check_cpu: bool) -> dict[str, Any]:
    """Every point of one card, in fp32 and bf16, on the meta device (a CPU for ``GroundTruth.cpu_heads``)."""
    family, head = card["family"], card["head"]
    cfg = build_config(family, {**(card.get("config") or {}), "attn_implementation": "eager"})
    device = device_of(family, head)
    model, half = models_on(device, head, cfg)
    rows = []
    for b, s in points(family, cfg):
        fp32 = measure(model, family, head, b, s, device)
        bf16 = measure(half, family, head, b, s, device, flops=False)
        rows.append(
            {
                "batch": b,
                "seq": s,
                "forward": fp32["forward"],
                "backward": fp32["backward"],
                "fp32": fp32["activations"],
                "bf16": bf16["activations"],
            }
        )
    if check_cpu and device == "meta" and sum(p.numel() for p in model.parameters()) < 5_000_000:
        b, s = rows[0]["batch"], rows[0]["seq"]
        real = model_of_cpu(head, cfg)
        cpu = measure(real, family, head, b, s, "cpu")
        meta = {k: rows[0][k] for k in ("forward", "backward")} | {"activations": rows[0]["fp32"]}
        if cpu != meta:
            raise SystemExit(f"{card['id']}: CPU {cpu} differs from meta {meta} at b={b}, s={s}")
    return {
        "id": card["id"],
        "family": family,
        "head": head,
        "class": type(model).__name__,
        "points": rows,
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__},
    }


def model_of_cpu(head: str, cfg: Any) -> torch.nn.Module:
    """The same class with real (random) CPU weights, for the meta-against-CPU check."""
    from reference import AUTO_CLASSES

    return AUTO_CLASSES[head].from_config(cfg).train()


def explain(card: dict[str, Any], b: int, s: int, dtype: torch.dtype) -> None:
    """Print each module's FLOPs and the storages first saved while it ran."""
    family, head = card["family"], card["head"]
    cfg = build_config(family, {**(card.get("config") or {}), "attn_implementation": "eager"})
    device = device_of(family, head)
    model = (model_of_cpu if device == "cpu" else model_of)(head, cfg).train().to(dtype)
    own = {storage_key(t) for t in (*model.parameters(), *model.buffers())}
    names = {module: name for name, module in model.named_modules()}
    stack: list[str] = []
    saved: dict[int, tuple[str, str]] = {}
    by_module: dict[str, list[str]] = defaultdict(list)

    def pre(module: torch.nn.Module, args: Any) -> None:
        stack.append(names.get(module, "?"))

    def post(module: torch.nn.Module, args: Any, out: Any) -> None:
        stack.pop()

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        key = storage_key(tensor)
        if key not in own and key not in saved:
            where = stack[-1] if stack else "(outside modules)"
            what = f"{tuple(tensor.shape)} {str(tensor.dtype)[6:]} {tensor.untyped_storage().nbytes()} B"
            saved[key] = (where, what)
            by_module[where].append(what)
        return tensor

    handles = [m.register_forward_pre_hook(pre) for m in model.modules()]
    handles += [m.register_forward_hook(post) for m in model.modules()]
    inputs = batch_inputs(family, head, model.config, b, s, device)
    forward = FlopCounterMode(display=False, depth=None)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), forward, items_on_meta(family, head):
        output = model(**inputs)
    loss = output.last_hidden_state.sum() if head == "base" else output.loss
    with FlopCounterMode(display=False, depth=None) as backward:
        loss.backward()
    for handle in handles:
        handle.remove()
    for label, counter in (("forward", forward), ("backward", backward)):
        print(f"== {label} FLOPs {counter.get_total_flops():,}")
        for module, counts in counter.get_flop_counts().items():
            if module != "Global" and module.count(".") <= 4:
                print(f"  {module}: { {str(k).split('.')[-2]: v for k, v in counts.items()} }")
    total = sum(int(w.split()[-2]) for _, w in saved.values())
    print(f"== saved {total:,} bytes")
    for module, items in by_module.items():
        print(f"  {module}: {'; '.join(items)}")


def config_digest(entry: dict[str, Any]) -> str:
    """A short name for one sampled config: its family, head and keys, whatever its place in the sample."""
    text = json.dumps([entry["family"], entry["head"], entry["config"]], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def sample_reference(entries: list[dict[str, Any]], measured: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each built config of the sample at its four points (module docstring), or the error of its step.

    ``measured`` holds rows by ``config_digest``: a config measured before is taken from there, so that
    adding a family measures only its own configs."""
    found = []
    for index, entry in enumerate(entries):
        if not entry["accepted"]:
            continue
        family, head = entry["family"], entry["head"]
        digest = config_digest(entry)
        if digest in measured:
            found.append({**measured[digest], "index": index})
            continue
        cfg = build_config(family, {**entry["config"], "attn_implementation": "eager"})
        row: dict[str, Any] = {"index": index, "family": family, "head": head, "digest": digest}
        try:
            device = device_of(family, head)
            length = longest(family, cfg, device)
            model, half = models_on(device, head, cfg)
            points = []
            for b, s in sorted({(1, 1), (2, min(3, length)), (1, min(7, length)), (3, length)}):
                fp32 = measure(model, family, head, b, s, device)
                bf16 = measure(half, family, head, b, s, device, flops=False)
                counts = {"forward": fp32["forward"], "backward": fp32["backward"], "fp32": fp32["activations"]}
                points.append({"batch": b, "seq": s, **counts, "bf16": bf16["activations"]})
            row["points"] = points
        except Exception as error:  # any error: the class cannot run the step (a 0-wide head, a missing id)
            row["error"] = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:160]}"
        found.append(row)
    return found


def load(path: Path) -> dict[str, Any]:
    card: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    card.setdefault("id", path.stem)
    return card


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, nargs="+", default=[ROOT / "models", ROOT / "tests" / "cards"])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "reference" / "compute")
    parser.add_argument("--check-cpu", action="store_true", help="also run each small model on CPU and compare")
    parser.add_argument("--explain", nargs=2, type=int, metavar=("B", "S"), help="print one point per module")
    parser.add_argument("--bf16", action="store_true", help="with --explain: the model in bf16")
    parser.add_argument("--sample", action="store_true", help="measure the sampled configs instead of the cards")
    parser.add_argument("--fresh", action="store_true", help="with --sample: measure every config again")
    parser.add_argument("cards", nargs="*", type=Path, help="only these cards (default: all)")
    args = parser.parse_args(argv)
    if args.sample:
        transformers.logging.set_verbosity_error()
        sample = ROOT / "tests" / "reference" / "sample"
        entries = json.loads((sample / "configs.json").read_text(encoding="utf-8"))["configs"]
        before = sample / "compute.json"
        rows_before = [] if args.fresh or not before.is_file() else json.loads(before.read_text("utf-8"))["configs"]
        measured = {row["digest"]: row for row in rows_before if "digest" in row}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = sample_reference(entries, measured)
        versions = {"transformers": transformers.__version__, "torch": torch.__version__}
        write_json(sample / "compute.json", {"versions": versions, "configs": rows})
        print(f"compute.json: {len(rows)} configs, {sum('points' in r for r in rows)} ran", file=sys.stderr)
        return 0
    paths = args.cards or sorted(path for folder in args.models for path in folder.glob("*.yaml"))
    for path in paths:
        card = load(path)
        if not implemented(card["family"]):  # tools/own_reference.py writes its files
            continue
        if args.explain:
            explain(card, *args.explain, torch.bfloat16 if args.bf16 else torch.float32)
            continue
        try:
            data = card_reference(card, check_cpu=args.check_cpu)
        except (RuntimeError, IndexError) as error:  # the class cannot run the step (module docstring)
            data = {"id": card["id"], "family": card["family"], "head": card["head"], "error": str(error)}
        write_json(args.out / f"{card['id']}.json", data)
        print(f"{card['id']}: {data.get('points', [None])[-1] or data.get('error')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
