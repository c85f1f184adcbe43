"""The vocabulary families use to declare their tensors.

A family does not count anything: it says which modules a transformers class registers,
in registration order, and the symbolic shape of each parameter. ``inventory.py`` turns
that declaration and a card's numbers into the per-tensor inventory; ``derivation.py``
turns it into the worked derivation. Both read the same declaration, so a page's formula
cannot disagree with its table.

A family's builder decides nothing from the config itself: it reads the family's declared
switches (``switches.py``), conditions that are data (``conditions.py``), so that the
calculator can export every block the builder can produce and pick among them in the browser
(``analysis/calculator_data.py``).
"""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.counting.adapting import Layer as Layer  # the families' vocabulary, declared there
from generator.counting.adapting import PeftDefaults as PeftDefaults
from generator.counting.conditions import Condition, Value, flags, kinds
from generator.counting.flow import Join as Join
from generator.counting.ground_truth import GroundTruth
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch, Switches, decide


class Head(enum.Enum):
    """What sits on top of the encoder; each maps to one transformers Auto class."""

    BASE = "base"
    PRETRAINING = "pretraining"
    MASKED_LM = "masked-lm"
    SEQUENCE_CLASSIFICATION = "sequence-classification"

    # A member is one object, equal only to itself: hashed by identity, in C, rather than by Enum's
    # Python-level hash of its name. Blocks, modules and saved tensors hold these, and hashing them
    # (every cache keyed by a declaration) called Enum.__hash__ some 180,000 times in a catalog build.
    __hash__ = object.__hash__


class Kind(enum.Enum):
    """Which component a block is: every tensor of a block has its block's Kind.

    Kind and Part answer two questions and are kept apart on purpose. Kind is per block and
    gives the subtotals of a model page and the index (an encoder layer's LayerNorms count
    under ENCODER); Part is per tensor and gives the charts and comparisons (the same
    LayerNorms count under NORMS). They agree only on pooler and head blocks. Merging them
    would move every norm, and the embedding projections, from one subtotal to another.
    """

    EMBEDDINGS = "embeddings"
    ENCODER = "encoder"
    POOLER = "pooler"
    HEAD = "head"

    __hash__ = object.__hash__  # see Head


class Part(enum.Enum):
    """What a parameter does, for the charts and diffs: per tensor, across blocks (see Kind).

    ``part_of`` decides: everything in a pooler or head block is POOLER or HEADS; elsewhere
    the module says (``layer_norm`` and ``embedding`` set it; families tag the rest).
    """

    EMBEDDINGS = "embeddings"
    ATTENTION = "attention"
    FEED_FORWARD = "feed-forward"
    NORMS = "norms"
    POOLER = "pooler"
    HEADS = "heads"

    __hash__ = object.__hash__  # see Head


@dataclass(frozen=True)
class Param:
    """One parameter tensor that a module registers itself."""

    name: str
    shape: tuple[Poly, ...]
    role: str  # what it is: a key of families.yaml's roles ("weight", "output-bias"), its words once worded
    part: Part | None = None  # only when it differs from its module's (a norm inside a stacked FFN)
    # A parameter nothing trains (requires_grad False): stored and counted, but it has no gradient
    # and no optimizer state (frozen sinusoid tables).
    frozen: bool = False
    layer: Layer | None = None  # the class of the module that registers it (see Layer)


@dataclass(frozen=True)
class Tie:
    """A parameter slot that holds another module's tensor (counted once, where it lives)."""

    name: str
    tied_to: str
    role: str  # as for Param: what the slot is ("output-bias"), then its words
    layer: Layer | None = None  # as for Param


class Dtype(enum.Enum):
    """The element type of a tensor autograd keeps; ACTIVATION is the model's (fp32, or bf16 when cast)."""

    ACTIVATION = "activation"
    FLOAT32 = "float32"  # LayerNorm's mean and reciprocal deviation stay fp32 in a bf16 model (meta and CUDA kernels)
    INT64 = "int64"  # token ids, labels, index tensors
    BOOL = "bool"  # masks
    # A copy cast to the model's type: the same storage as its fp32 source in an fp32 model, a second
    # one in bf16 (attention probabilities computed in fp32 and cast back).
    CAST = "cast"
    # The fp32 source of such copies when it is all that is kept: itself in an fp32 model, where the
    # cast is a no-op, and nothing in bf16, where each cast copy (CAST) is kept instead (a mask each layer casts).
    UNCAST = "uncast"

    __hash__ = object.__hash__  # see Head


@dataclass(frozen=True)
class Product:
    """A matrix product of the forward: 2·m·n·k FLOPs (a multiply and an add per term), as FlopCounterMode counts.

    The backward computes the gradient of each operand that needs one with a product of the same
    size: ``backward`` of them, 2 when both do, 1 when one is a constant or needs no gradient, 0 when
    no loss reads the product's output (autograd then skips it).
    A ``backward_only`` product is one the backward counts and the forward does not: FlopCounterMode
    counts a grouped convolution's weight gradient as if the kernel were whole, H/Q times its forward.
    """

    what: str
    m: Poly
    n: Poly
    k: Poly
    backward: int = 2
    when: Condition | None = None  # a condition on the config (a projection only some configs apply)
    backward_only: bool = False
    # Its two operands for a step where only part of the model trains (``flow.py``): each a group of
    # names, one of which needing a gradient makes the operand need one.
    operands: tuple[tuple[str, ...], ...] = ()

    @property
    def flops(self) -> Poly:
        return _flops(self.m, self.n, self.k)

    @property
    def forward_flops(self) -> Poly:
        """What the forward spends on it: its FLOPs, or none for a backward-only product."""
        return Poly() if self.backward_only else self.flops


@functools.lru_cache(maxsize=4096)
def _flops(m: Poly, n: Poly, k: Poly) -> Poly:
    """2·m·n·k, multiplied out once per shape (keyed by value): a page asks for each product's several times."""
    return 2 * m * n * k


@dataclass(frozen=True)
class Saved:
    """A tensor autograd keeps for the backward: its storage's shape and element type.

    ``key`` names the storage: tensors with the same key in one block instance are one storage,
    counted once (a layer's input, read by the query, key and value projections); a ``shared`` key
    is one storage across the whole model (the encoder's output, read by the pooler and the heads).
    ``when`` is a condition on the config (a dropout mask exists only when its probability is not 0).
    """

    key: str
    shape: tuple[Poly, ...]
    dtype: Dtype = Dtype.ACTIVATION
    shared: bool = False
    when: Condition | None = None
    # Kept only when b = 1: a view torch can fold into a batched product without a copy when the
    # batch has one sequence, and copies otherwise (the step totals are then piecewise in b).
    batch_one: bool = False
    # Kept only when s > 1: a .contiguous() copy of a transposed (b, s, ·) tensor, which at s = 1 is
    # contiguous already and so is its input's own storage (a convolution's input).
    seq_above_one: bool = False
    # Kept only when b > 1: a copy made for a batched product, which at b = 1 folds a view of a
    # smaller storage instead (declared apart, with ``batch_one``): a head repeated for its group.
    batch_above_one: bool = False
    # Kept only when one of these needs a gradient (``flow.py``); () when its step's item is live.
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Op:
    """A step of the forward that holds no parameter: attention scores, softmax, dropout, an activation, the loss.

    ``activation`` names the config key of an activation function, ``function`` one the class fixes:
    what it keeps depends on the function (``compute.ACTIVATIONS``), and its ``saved`` entries are
    then its input and output.
    """

    path: str
    key: str  # stable within its family, like a module's
    products: tuple[Product, ...] = ()
    saved: tuple[Saved, ...] = ()
    activation: str | None = None
    function: str | None = None  # an activation the class fixes whatever the config says (a head's own gelu)
    repeat: Poly | None = None  # how many times one block instance runs it (stacked feed-forward networks)
    reads: tuple[str, ...] = ()  # the activations it reads and the one it writes (``flow.py``)
    writes: str = ""


@dataclass(frozen=True)
class Module:
    """A group of tensors that one derivation step accounts for (a Linear, a LayerNorm...)."""

    path: str  # contains "{n}" when the module is repeated inside its block
    key: str  # stable within its family ("feed-forward-in"): its step's anchor, and its label's key in content/
    params: tuple[Param | Tie, ...]  # a param name may be a dotted path below the module
    heads: str | None = None  # symbol of the head count when the projection is split into heads
    repeat: Poly | None = None  # how many copies one block instance holds, e.g. F - 1 stacked FFNs
    part: Part | None = None  # see Part; a module in a pooler or head block needs none
    label: str = ""  # what a reader calls it ("feed-forward in"): from content/ by key (texts.py)
    # What it computes in the forward and keeps for the backward, in the config's symbols and b, s.
    products: tuple[Product, ...] = ()
    saved: tuple[Saved, ...] = ()
    reads: tuple[str, ...] = ()  # as for Op
    writes: str = ""
    lookups: Poly | None = None  # an embedding's rows looked up a step, which LoRA runs on (layouts.embedding)
    chain: Block | None = None  # one copy's flow, where each copy runs on the one before's output (flow.py)


@dataclass(frozen=True)
class Block:
    """A component: embeddings, an encoder layer (repeated), the pooler, a head."""

    key: str  # stable within its family: the block's anchors, and its title's key in content/
    kind: Kind
    prefix: str  # contains "{0}" (and "{1}", ...) for each symbol in ``repeat``
    modules: tuple[Module, ...]
    repeat: tuple[str, ...] = ()  # symbols of the nested repeat counts, e.g. ("L",) or ("G", "K")
    applied: str | None = None  # shared layers: the stored instances are applied this many times
    # The first index of the outermost repeat, when earlier instances differ and are declared
    # apart (a first layer with no attention norm: the other layers then start at 1).
    start: int = 0
    title: str = ""  # what a reader calls it ("encoder layer"): from content/ by key (texts.py)
    # The steps between its modules that hold no parameter (attention scores, dropout, losses).
    ops: tuple[Op, ...] = ()
    # The repeated block each of whose copies reads this block's tensors: a relative position table
    # stored once, beside the layers, and read by every layer's attention. Figures draw the link.
    read_by: str | None = None
    # Its data flow (``flow.py``): the sums that join activations, and the names it reads from and
    # gives to other blocks, each (its own name, the model-wide one).
    joins: tuple[Join, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()

    def counts(self) -> tuple[Poly, ...]:
        """The number of instances at each level of the repeat, in symbols: (L,), (G, K), or (L − 1,)."""
        counts = [Poly.symbol(s) for s in self.repeat]
        if counts and self.start:
            counts[0] = counts[0] + (-self.start)
        return tuple(counts)

    def copies(self) -> Poly:
        """How many instances the block has, in symbols: L, G·K, or L − 1 when it starts at 1."""
        result = Poly.constant(1)
        for count in self.counts():
            result = result * count
        return result

    @property
    def first(self) -> tuple[int, ...]:
        """The index of the first instance: the one a derivation shows; () when not repeated."""
        return tuple(self.start if level == 0 else 0 for level in range(len(self.repeat)))

    def instances(self, values: Mapping[str, int]) -> list[tuple[int, ...]]:
        """Every index of the block, in registration order; [()] when not repeated."""
        ranges = [range(values[symbol]) for symbol in self.repeat]
        if ranges:
            ranges[0] = range(self.start, values[self.repeat[0]])
        return list(itertools.product(*ranges))


@dataclass(frozen=True)
class Architecture:
    """What one transformers class registers, in order."""

    class_name: str
    blocks: tuple[Block, ...]
    # Where the base model sits: transformers' base_model_prefix and a dot, or "" for the base class
    # itself. Fine-tuning the head alone trains what lies outside it.
    base: str = ""

    def __post_init__(self) -> None:
        keys = [block.key for block in self.blocks]
        if len(set(keys)) != len(keys):  # a block is looked up by its key (Inventory.of_block)
            raise ValueError(f"{self.class_name} declares a block key twice: {keys}")
        repeated = {block.key for block in self.blocks if block.repeat}
        for block in self.blocks:
            if block.read_by is not None and block.read_by not in repeated:
                raise ValueError(f"{self.class_name}: {block.key} is read by {block.read_by}, no repeated block")


@dataclass(frozen=True)
class Symbol:
    """A config value that appears in formulas."""

    name: str
    key: str  # the config key; for a derived symbol, how it is computed ("hidden_size / conv_groups")
    optional: bool = False  # the config may leave it null (an embedding_size that means H then)
    size: bool = True  # a size (minimum to 2³¹ − 1); False for a count whose sign means something (a relative span)
    minimum: int = 1  # 0 where transformers builds an empty table (type_vocab_size: no token types)
    value: Value | None = None  # a derived symbol: computed from config values, not read from ``key``
    meaning: str = ""  # what it is, in words: from content/ (texts.py), by the family's name and the symbol's


# A cross-field rule's verdict: None, or the message and the keys it is about.
Failure = tuple[str, tuple[str, ...]] | None


@dataclass(frozen=True)
class OwnConfig:
    """Config keys and defaults of a family outside transformers, with where they come from."""

    config_class: str
    source: str
    defaults: Mapping[str, Any]
    # The card of a model a published listing prints: the reference tool reproduces that listing first.
    listed_card: str | None = None


@dataclass(frozen=True)
class Family:
    """A transformers model type: its symbols, its heads and its tensor declaration."""

    name: str
    symbols: tuple[Symbol, ...]
    # Declares the tensors of a head from the family's switches alone (``on["tied"]``), never
    # from the config: what a builder may branch on is declared, as data, in ``switches``.
    declare: Callable[[Mapping[str, bool], Head], Architecture]
    heads: tuple[Head, ...] = tuple(Head)  # all four; a family with fewer lists them
    # The name a reader sees: content, filled in with the differences (texts.py).
    title: str = ""
    # Markdown paragraphs: what differs from the baseline family and what it does to the count.
    # Written in content/, not here: the registry fills them in (texts.py), keyed by family.
    differences: tuple[str, ...] = ()
    # The content/ folder its words come from; "" in the declaration, which has keys only.
    language: str = ""
    # A family that transformers does not implement declares its own config keys and defaults.
    own_config: OwnConfig | None = None
    # Keys the transformers modeling code reads with getattr(config, key, default) although the
    # config class does not declare them (a relative attention's position_buckets), with those defaults.
    extra_config: Mapping[str, Any] = field(default_factory=dict)
    # Keys whose default is null (left out: derived, or the hidden size) but that transformers reads
    # as given: a card that writes null for one gets a model transformers cannot build.
    null_refused: tuple[str, ...] = ()
    # Cross-field rules: each returns (message, keys involved) for a config that breaks it.
    build_rules: tuple[Callable[[Mapping[str, Any]], Failure], ...] = ()
    # Every structural decision the builder takes, each a condition on the config (switches.py).
    switches: tuple[Switch, ...] = ()
    # Derived symbols only compute formulas use (a head size, for rotary tables).
    compute_symbols: tuple[Symbol, ...] = ()
    # The config key whose value, plus 1, is the first token's position (positions numbered from
    # pad_token_id + 1), or that index itself where the class fixes it: a table of P rows then holds
    # P less that many tokens. None: from 0.
    positions_after: str | int | None = None
    # Configs transformers builds, and whose parameters are counted, but whose training step raises:
    # each a Rule (its condition and message). The step is then not worked, here or in the calculator.
    step_rules: tuple[Rule, ...] = ()
    # Configs whose step torch runs but whose figures one polynomial in b and s cannot say (a copy
    # made only at some b and s, a span that stops growing with s): each a Rule. No step figure is shown.
    inexact_steps: tuple[Rule, ...] = ()
    # What the reference tools build and run to ask transformers for its counts; None for a family
    # transformers does not implement (its ``own_config`` names the code its counts come from).
    ground_truth: GroundTruth | None = None
    # What peft adapts in it by default. A family made from another's declaration states its own.
    peft: PeftDefaults = field(default_factory=PeftDefaults)

    @functools.cached_property
    def _check_conditions(self) -> tuple[Condition, ...]:
        """When each of the build rules fails (a FirstOf's rules one by one)."""
        rules = [r for check in self.build_rules for r in (check.rules if isinstance(check, FirstOf) else (check,))]
        return tuple(rule.fails for rule in rules if isinstance(rule, Rule))

    @functools.cached_property
    def flag_keys(self) -> tuple[str, ...]:
        """The keys the switches and rules read as flags (``truthy``): a card gives them as true or false."""
        conditions = [s.when for s in self.switches] + list(self._check_conditions)
        conditions += [rule.fails for rule in (*self.step_rules, *self.inexact_steps)]
        return tuple(dict.fromkeys(key for condition in conditions for key in flags(condition)))

    @functools.cached_property
    def kind_keys(self) -> tuple[str, ...]:
        """The keys a rule of the family refuses whenever their type is wrong (``~is_kind``): its message
        says what the key must be."""
        return tuple(dict.fromkeys(key for condition in self._check_conditions for key in kinds(condition)))

    def symbol_for(self, key: str) -> Symbol | None:
        return next((s for s in self.symbols if s.key == key), None)

    def decide(self, config: Mapping[str, Any]) -> Switches:
        """The family's switches for one config."""
        return decide(self.switches, config)

    def architecture(self, config: Mapping[str, Any], head: Head) -> Architecture:
        """What the transformers class registers for this config and head.

        A builder reads only the switches and the head, so cards that agree on both share one
        Architecture object: built once, and what is derived from it can be cached with it.
        """
        return self.declared(self.decide(config), head)

    def declared(self, on: Mapping[str, bool], head: Head) -> Architecture:
        """What the builder declares for one setting of every switch and one head, built once (see ``architecture``)."""
        return _declared(self.declare, head, tuple(sorted(on.items())))

    def symbol_values(self, config: Mapping[str, Any]) -> dict[str, int]:
        """Every symbol's number; an optional symbol left null (or a derived one that cannot be computed) has none."""
        values: dict[str, int] = {}
        for symbol in self.symbols:
            found = symbol.value.evaluate(config) if symbol.value is not None else config.get(symbol.key)
            if found is not None:
                values[symbol.name] = int(found)
        return values


@functools.cache
def _declared(
    declare: Callable[[Mapping[str, bool], Head], Architecture], head: Head, on: tuple[tuple[str, bool], ...]
) -> Architecture:
    """A builder's declaration for one head and one setting of the switches, built once.

    Keyed by value: the declaring function, the head and the switches are all it reads, so
    equal keys give equal architectures, whichever family or card asks.
    """
    return declare(Switches(dict(on)), head)


def part_of(block: Block, module: Module, param: Param | Tie) -> Part | None:
    """The part a tensor belongs to: its block's when that is a pooler or head, else as declared."""
    if block.kind is Kind.POOLER:
        return Part.POOLER
    if block.kind is Kind.HEAD:
        return Part.HEADS
    return (param.part if isinstance(param, Param) else None) or module.part


def holder(module: Module) -> str:
    """The child of its block that registers the module, as its path names it: ``attention`` for
    ``attention.self.query``, ``enc_attn`` for a decoder's ``enc_attn.w_qs``. A layer's two
    attentions (self-attention, then cross-attention) are two holders; a derivation's runs cut between them.
    """
    return module.path.partition(".")[0]
