// The calculator's training step under a fine-tuning method: generator/counting/tuned_step.py's rules,
// applied to the blocks' data flow that the family's document exports (compute.blocks[].flow, and
// compute.flow; generator/analysis/calculator_flow.py). The forward runs the whole model and what the
// method adds; the backward runs only the products a trained tensor reaches, and autograd keeps only
// what they read. Each rule is one small function below, named after the engine's
// (docs/fine-tuning-step.md gives each with its torch figure). This script decides, exactly, with
// BigInt; calculator.js picks the blocks, puts the numbers in and words the result.
(function () {
  "use strict";

  // Why there is no step: "not-derived" (the engine's StepNotDerivedError: a flow not declared, or a
  // rule it does not cover), with the key of its words in the script and their values; "views-at-one"
  // (tuned_step.VIEWS_AT_ONE: this b or s is 1); or "loss-unreached" (StepCannotRunError: no trained
  // tensor reaches the loss).
  function StepError(kind, key, values) { this.kind = kind; this.key = key || ""; this.values = values || {}; }

  function notDerived(key, values) { return new StepError("not-derived", key, values); }

  function some(list, test) { return list.some(test); }

  // --- what trains (adapters.trained_of) ----------------------------------------------------------

  // Trained tensors and adapters by name, each layer index written {i}; a tied slot and what it holds;
  // the prompt's virtual tokens. model: calculator.js's tuningModel; record: atlasMethods.tune's.
  function trainedOf(model, record, tuning, rules) {
    var ix = window.atlasMethods.indexless, modules = window.atlasMethods.walk(model);
    var tensors = new Set(record.trained_names.map(ix));
    record.saved_modules.forEach(function (module) {  // a classifier's trained copy: its tensors train, in its place
      model.entries.forEach(function (e) {
        if (e.tied_to === undefined && e.name.indexOf(module + ".") === 0) { tensors.add(ix(e.name)); }
      });
    });
    var adapters = new Map(), adapted = new Set(record.adapted);
    record.added_tensors.forEach(function (added) {
      if (added.module === "" || !adapted.has(added.module)) { return; }
      adapters.set(ix(added.module), adapterOf(added, modules, tuning, rules));
    });
    alikeInEveryLayer(record.adapted, adapted, modules, ix);
    var holds = new Map();
    model.entries.forEach(function (e) { if (e.tied_to !== undefined) { holds.set(ix(e.name), ix(e.tied_to)); } });
    var prompt = tuning.method === "prompt-tuning" ? tuning.virtual_tokens : 0n;
    // under: whether a trained tensor lies under a module's name, found once per name.
    return { tensors: tensors, names: Array.from(tensors), under: new Map(), adapters: adapters, holds: holds, prompt: prompt };
  }

  // What a method wraps one Linear with (adapters.Adapter): LoRA of rank r, or IA³ scaling its input or its
  // output; or an embedding table with LoRA (width, its rows' width: B is width × r).
  function adapterOf(added, modules, tuning, rules) {
    var layer = modules.layers.get(added.module);
    if (layer !== rules.linear && !(layer === rules.embedding && tuning.method === "lora")) {
      throw notDerived("step-only-linear", { module: added.module });
    }
    if (layer === rules.embedding) { return { method: "lora", rank: tuning.rank, width: modules.shapeOf(added.module)[1] }; }
    if (tuning.method === "lora") { return { method: "lora", rank: tuning.rank }; }
    var out = modules.shapeOf(added.module)[0];
    return { method: "ia3", scalesInput: !(added.shape[0] === out && added.shape[1] === 1n) };
  }

  // One instance of a repeated layer stands for all: a target naming one layer's module adapts that copy
  // and not the others, which the rules cannot say (adapters._alike_in_every_layer).
  function alikeInEveryLayer(names, adapted, modules, ix) {
    var chosen = new Map();
    names.forEach(function (name) { chosen.set(ix(name), name); });
    modules.layers.forEach(function (_, module) {
      var name = chosen.get(ix(module));
      if (name !== undefined && !adapted.has(module)) { throw notDerived("step-one-layer", { name: name, module: module }); }
    });
  }

  // --- the blocks in flow order (tuned_step._in_flow_order) --------------------------------------

  // The blocks in the order the forward runs them, a block read by a repeated one just before it; and, by
  // block, the items it works as its own: the ops a block read by a repeated one runs once in each of its
  // reader's copies (lent without their repeat), and the modules of a block without a flow of its own.
  function inFlowOrder(blocks, kindOrder) {
    var ordered = blocks.slice().sort(function (a, b) { return kindOrder.indexOf(a.kind) - kindOrder.indexOf(b.kind); });
    var borrowed = {};
    ordered.filter(function (b) { return b.readBy !== null; }).forEach(function (block) {
      ordered.splice(ordered.indexOf(block), 1);
      ordered.splice(ordered.findIndex(function (b) { return b.key === block.readBy; }), 0, block);
      var lent = block.items.filter(function (item) { return !item.isModule && item.repeat !== null; });
      borrowed[block.readBy] = (borrowed[block.readBy] || []).concat(lent.map(function (op) { return Object.assign({}, op, { repeat: null }); }));
    });
    // A block with no flow of its own whose modules read another's activations is worked in that block's instance,
    // whose prefix it shares: a masked LM that lists its tied decoder first, in a block of its own.
    ordered.filter(hosted).forEach(function (block) {
      ordered.splice(ordered.indexOf(block), 1);
      var reads = new Set();
      block.items.forEach(function (item) { item.reads.forEach(function (name) { reads.add(name); }); });
      var host = ordered.find(function (o) { return some(o.items, function (item) { return reads.has(item.writes); }); });
      if (host === undefined || host.prefix !== block.prefix || host.repeated) {
        throw notDerived("step-no-host", { block: block.key, reads: Array.from(reads).sort() });
      }
      borrowed[host.key] = (borrowed[host.key] || []).concat(block.items);
    });
    return { ordered: ordered, borrowed: borrowed };
  }

  // Whether a block has no flow of its own (run once), and its modules read activations: another block's (tuned_step._hosted).
  function hosted(block) {
    var own = block.inputs.length || block.outputs.length || block.joins.length || block.readBy !== null || block.repeated ||
      some(block.items, function (item) { return !item.isModule; });
    return !own && some(block.items, function (item) { return item.reads.length > 0; });
  }

  // --- one instance of a block (tuned_step._instance) --------------------------------------------

  // Whether the tensor at a path of the block trains; a tied slot trains with what it holds (tuned_step._trains).
  function trains(prefix, trained) {
    return function (path) {
      var name = path.charAt(0) === "/" ? path.slice(1) : prefix + path;
      return trained.tensors.has(name) || trained.tensors.has(trained.holds.get(name));
    };
  }

  function holdsTrained(item, trainsAt) {
    return item.isModule && some(item.params, function (p) { return trainsAt(item.path + "." + p); });
  }

  // The storages not yet kept in this instance (a shared one: in the model) (adapters.unique).
  function unique(kept, local, seen) {
    return kept.filter(function (x) {
      var scope = x.shared ? seen : local;
      if (scope.has(x.key)) { return false; }
      scope.add(x.key);
      return true;
    });
  }

  // One instance of a block: what each of its steps computes and keeps, in flow order. ``names`` holds the
  // model-wide names and whether each needs a gradient; the instance reads its inputs there and writes its outputs.
  function instance(block, items, prefix, ctx, names, seen) {
    var trained = ctx.trained, flows = new Map();
    block.inputs.forEach(function (pair) {
      if (!names.has(pair[1])) { throw notDerived("step-not-given", { block: block.key, name: pair[1] }); }
      flows.set(pair[0], names.get(pair[1]));
    });
    var writers = new Map(), joins = new Map();
    items.forEach(function (item) { if (item.writes) { writers.set(item.writes, item); } });
    block.joins.forEach(function (join) { joins.set(join[1], join[0]); });
    var trainsAt = trains(prefix, trained), chains = new Map();
    // A module's copies run one after another (tuned_step._chain), worked once an instance.
    function chained(item) {
      if (!chains.has(item.path)) { chains.set(item.path, chainRun(item, prefix, ctx, needs(item.reads[0]), seen)); }
      return chains.get(item.path);
    }
    if (trained.prompt > 0n) {  // the prompt's trained vectors join the token vectors
      items.forEach(function (item) { if (item.isModule && item.key.indexOf(ctx.flow.prompt_table) === 0) { flows.set(item.writes, true); } });
    }

    // A parameter trains; or, for a module's path, one of its tensors trains or a method adapts it.
    function holds(path) {
      var whole = path.charAt(0) === "/" ? path.slice(1) : prefix + path;
      if (trainsAt(path) || trained.adapters.has(whole)) { return true; }
      if (!trained.under.has(whole)) { trained.under.set(whole, trained.names.some(function (t) { return t.indexOf(whole + ".") === 0; })); }
      return trained.under.get(whole);
    }

    function needs(name, path) {
      path = path || [];
      if (name.charAt(0) === "@") { return holds(name.slice(1)); }
      if (flows.has(name)) { return flows.get(name); }
      if (path.indexOf(name) >= 0) { throw notDerived("step-read-before-written", { block: block.key, name: name }); }
      var found, further = path.concat([name]);
      if (joins.has(name)) {
        found = some(joins.get(name), function (read) { return needs(read, further); });
      } else if (writers.has(name)) {
        var item = writers.get(name);
        if (item.chain) {
          found = chained(item).needs;
        } else {
          found = (holdsTrained(item, trainsAt) || adapterAt(item, prefix, trained) !== undefined) && !skipped(item, ctx);
          found = found || some(item.reads, function (read) { return needs(read, further); });
        }
      } else {
        throw notDerived("step-nothing-writes", { block: block.key, name: name });
      }
      flows.set(name, found);
      return found;
    }

    var local = new Set(), found = [];
    items.forEach(function (item) {
      // Holds parameters and computes nothing (a decoder's cross-attention), or is not called.
      if (!item.writes || skipped(item, ctx)) { return; }
      if (item.chain) { chained(item).modules.forEach(function (m) { found.push(m); }); return; }
      var adapter = adapterAt(item, prefix, trained);
      var given = item.reads.map(function (read) { return needs(read); });  // x itself, before an IA³ vector scales it
      var reads = adapter && adapter.scalesInput ? [true].concat(given.slice(1)) : given;
      var live = reads.indexOf(true) >= 0 || holdsTrained(item, trainsAt);
      var resolve = function (name) {
        if (name.charAt(0) === "#") { return reads[Number(name.slice(1))]; }
        return name.charAt(0) === "@" ? holds(name.slice(1)) : needs(name);
      };
      var anyOf = function (group) { return some(group, resolve); };
      var kept = ctx.savedOf(item).filter(function (x) {
        var wants = x.needs || [];  // an activation function's further tensors need what its step does
        return (!x.when || ctx.holds(x.when)) && (wants.length ? anyOf(wants) : live);
      });
      var products = [], runs = [];
      item.products.forEach(function (declared) {
        if (declared.when && !ctx.holds(declared.when)) { return; }
        var p = Object.assign({ flops: 2n * ctx.evaluate(declared.m) * ctx.evaluate(declared.n) * ctx.evaluate(declared.k) }, declared);
        if (p.operands.length) {
          var wanted = p.operands.filter(anyOf).length;
          products.push(Object.assign({}, p, { backward: Math.min(p.backward, wanted) }));
          runs = runs.concat(adaptedRuns(item, p, prefix, trained, anyOf));
        } else {
          products.push(live ? p : Object.assign({}, p, { backward: 0 }));
        }
      });
      found.push(moduleCompute(item, products, unique(kept, local, seen), block, ctx));
      if (item.path === ctx.flow.loss_step && live) { names.set(ctx.flow.loss, true); }
      if (adapter && adapter.width !== undefined) {
        found.push(adaptedTable(item, adapter, local, seen, ctx, block));
      } else if (adapter) {
        found.push(adapted(item, adapter, given.length ? given[0] : false, local, seen, ctx, block));
      }
      runs.forEach(function (run) {
        var inputs = ctx.savedOf(item).filter(function (x) { return (x.needs || []).indexOf(run.weight) >= 0 && (!x.when || ctx.holds(x.when)); });
        var ran = Object.assign({}, item, { path: item.path + " " + run.product.what, products: [run.product], saved: inputs });  // its own sides
        var linear = trained.adapters.get(prefix + run.weight.slice(1, -7));
        found.push(adapted(ran, linear, run.inputNeeds, local, seen, ctx, block));
      });
    });
    block.outputs.forEach(function (pair) {  // the name that makes a step hold above one holds once any instance needs it
      names.set(pair[1], needs(pair[0]) || (pair[1] === ctx.flow.copied_above_one && Boolean(names.get(pair[1]))));
    });
    return found;
  }

  // The adapter acting on a module's output, where the forward calls the module (adapters.adapter_of). A table
  // the model reads whole, never looking it up (a relative position table), has none: peft's adapter never runs.
  function adapterAt(item, prefix, trained) {
    if (!item.isModule) { return undefined; }
    var own = "@" + item.path + ".weight";  // a module whose products read its weight only beside another tensor is not called
    var called = some(item.products, function (p) {
      return !p.operands.length || some(p.operands, function (g) { return g.length === 1 && g[0] === own; });
    });
    if (item.products.length && !called) { return undefined; }
    var adapter = trained.adapters.get(prefix + item.path);
    if (adapter === undefined || adapter.width === undefined) { return adapter; }
    if (item.lookups === null) { throw notDerived("step-not-looked-up", { path: item.path }); }
    return item.lookups.length === 0 ? undefined : adapter;  // no rows looked up: the zero polynomial
  }

  // A module's copies, each run on the one before's output (tuned_step._chain): the first, then one standing for
  // the other repeat − 1. What they compute and keep, and whether the last one's output needs a gradient.
  function chainRun(item, prefix, ctx, inputNeeds, seen) {
    var chain = item.chain, wideIn = chain.inputs[0][1], wideOut = chain.outputs[0][1];
    var within = prefix + item.path.replace("{n}", "{i}") + ".";  // trained names write every index {i}
    var first = new Map([[wideIn, inputNeeds]]);
    var found = instance(chain, chain.items, within, ctx, first, seen);
    var rest = new Map([[wideIn, first.get(wideOut)]]);
    var again = instance(chain, chain.items, within, ctx, rest, seen);
    if (rest.get(wideOut) !== first.get(wideOut)) { throw notDerived("step-unsettled", { block: item.path }); }
    var others = ctx.evaluate(item.repeat) - 1n;
    return { modules: found.concat(again.map(function (m) { return times(m, others); })), needs: first.get(wideOut) };
  }

  // A step's compute and storages in ``n`` copies, each its own storage but a shared one (tuned_step._times).
  function times(m, n) {
    var saved = m.saved.map(function (x) { return x.shared ? x : Object.assign({}, x, { elements: x.elements * n }); });
    return { path: m.path, forward: m.forward * n, backward: m.backward * n, products: m.products, saved: saved };
  }

  // Whether the forward skips a module: a config gates off each of its products (tuned_step._skipped).
  function skipped(item, ctx) {
    return item.isModule && item.products.length > 0 &&
      item.products.every(function (p) { return Boolean(p.when) && !ctx.holds(p.when); });
  }

  // A product whose operand is another Linear's weight runs that Linear (a relative op projects its position
  // table with each layer's own query projection): peft's adapter runs there too (adapters.adapted_runs).
  function adaptedRuns(item, product, prefix, trained, anyOf) {
    if (product.operands.length !== 2) { return []; }
    var runs = [];
    product.operands.forEach(function (group, side) {
      var weight = group.length === 1 && /\.weight$/.test(group[0]) ? group[0] : "";
      var linear = weight.slice(1, -7);  // a module's own product is adapted as the module (adapted)
      var ownRun = item.isModule && linear === item.path;
      var adapter = weight.charAt(0) === "@" && !ownRun ? trained.adapters.get(prefix + linear) : undefined;
      if (adapter && adapter.scalesInput) {  // its product's input would be the scaled copy
        throw notDerived("step-ia3-input-run", { linear: linear, path: item.path });
      }
      if (adapter) { runs.push({ product: product, weight: weight, inputNeeds: anyOf(product.operands[1 - side]) }); }
    });
    return runs;
  }

  // --- what a step and an adapter compute and keep (tuned_step._module, adapters.adapted) -----------------

  // A step's compute, repeated as many times as it runs in one instance: FLOPs and its storages, as numbers.
  function moduleCompute(item, products, saved, block, ctx) {
    var repeat = item.repeat !== null ? ctx.evaluate(item.repeat) : 1n;
    var differentiated = ctx.differentiated(block.kind);
    var forward = 0n, backward = 0n;
    products.forEach(function (p) {
      var flops = p.flops * repeat;
      if (!p.backward_only) { forward += flops; }
      if (differentiated) { backward += flops * BigInt(p.backward); }
    });
    var storages = saved.map(function (x) { return storage(x, ctx, x.shared ? 1n : repeat); });
    return { path: item.path, forward: forward, backward: backward, products: products.map(function (p) { return p.backward; }), saved: storages };
  }

  // A kept tensor as the sums read it: its elements (times the step's repeat) and what decides when it counts.
  function storage(x, ctx, repeat) {
    var elements = x.shape.reduce(function (n, d) { return n * (typeof d === "bigint" ? d : ctx.evaluate(d)); }, repeat);
    return {
      key: x.key, elements: elements, dtype: x.dtype || "activation", shared: Boolean(x.shared),
      batch_one: Boolean(x.batch_one), seq_above_one: Boolean(x.seq_above_one), batch_above_one: Boolean(x.batch_above_one)
    };
  }

  // What an adapter adds beside its Linear: LoRA's two products x·Aᵀ and ·Bᵀ and their inputs; IA³'s scaled
  // tensor and its vector's copy (an elementwise product, no FLOPs). Where the loss does not reach the block
  // (a bare model's pooler), the backward runs none of them.
  function adapted(item, adapter, inputNeeds, local, seen, ctx, block) {
    var base = item.products[0];
    var rows = ctx.evaluate(base.m), out = ctx.evaluate(base.n), width = ctx.evaluate(base.k);
    var inputs = item.saved.filter(function (x) { return !x.when || ctx.holds(x.when); });
    var products = [], saved;
    if (adapter.method === "lora") {
      var rank = adapter.rank;
      products = [
        { flops: 2n * rows * rank * width, backward: inputNeeds ? 2 : 1 },
        { flops: 2n * rows * out * rank, backward: 2 }
      ];
      saved = inputs.concat([{ key: item.path + " x·Aᵀ", shape: [rows, rank] }]);
    } else if (adapter.scalesInput) {
      saved = inputs.concat(inputNeeds ? [{ key: item.path + " ia3 vector", shape: [width] }] : []);
    } else {
      saved = [{ key: item.path + " ia3 output", shape: [rows, out] }].concat(inputNeeds ? [{ key: item.path + " ia3 vector", shape: [out] }] : []);
    }
    if (base.backward === 0 || !ctx.differentiated(block.kind)) {  // a run whose output nothing reads
      products = products.map(function (p) { return { flops: p.flops, backward: 0 }; });
    }
    var adapterItem = { path: item.path + " " + adapter.method, repeat: null };
    return moduleCompute(adapterItem, products, unique(saved, local, seen), block, ctx);
  }

  // LoRA on an embedding table (peft's lora.Embedding, adapters.adapted_table): the ids looked up in Aᵀ (no
  // product), times Bᵀ, (lookups × r) by (r × width). A trains, so the backward runs two products. It keeps the
  // ids, as the table keeps them when it trains, and the lookup's output.
  function adaptedTable(item, adapter, local, seen, ctx, block) {
    var rows = ctx.evaluate(item.lookups);
    var product = { flops: 2n * rows * adapter.width * adapter.rank, backward: ctx.differentiated(block.kind) ? 2 : 0 };
    var ids = item.saved.filter(function (x) { return !x.when || ctx.holds(x.when); });
    var saved = ids.concat([{ key: item.path + " ids in Aᵀ", shape: [rows, adapter.rank] }]);
    return moduleCompute({ path: item.path + " lora", repeat: null }, [product], unique(saved, local, seen), block, ctx);
  }

  // --- the step (tuned_step._flowed_blocks) -------------------------------------------------------

  // Each block's first instance, and one of the rest standing for them all (they settle after the first); and
  // whether an instance gives the name that makes the step hold for b and s above 1 only a gradient.
  function flowedBlocks(blocks, ctx) {
    var worked = [], names = new Map(), seen = new Set();
    var order = inFlowOrder(blocks, ctx.flow.kind_order);
    order.ordered.forEach(function (block) {
      if (!block.outputs.length && !block.inputs.length && !block.joins.length) {
        throw notDerived("step-flow-undeclared", { block: block.key });
      }
      var runs = block.runs < 0n ? 0n : block.runs > 2n ? 2n : block.runs;
      if (runs === 0n) { return; }
      var extra = order.borrowed[block.key] || [], isModule = function (item) { return item.isModule; };
      var isOp = function (item) { return !item.isModule; };
      var items = block.items.filter(isModule).concat(extra.filter(isModule), block.items.filter(isOp), extra.filter(isOp));
      if (block.readBy !== null) { items = block.items.filter(function (item) { return item.isModule || item.repeat === null; }); }
      worked.push({ block: block, modules: instance(block, items, block.firstPrefix, ctx, names, seen), copies: 1n });
      if (runs > 1n) {
        // A shared storage the second instance keeps first (a later layer's need) is one storage: the third
        // instance, worked as the second was, keeps it too when the instances settle.
        var before = new Set(seen);
        var again = instance(block, items, block.firstPrefix, ctx, names, seen);
        worked.push({ block: block, modules: again, copies: block.runs - 1n });
        var third = instance(block, items, block.firstPrefix, ctx, new Map(names), before);
        if (signature(third) !== signature(again)) { throw notDerived("step-unsettled", { block: block.key }); }
      }
    });
    if (!reachesLoss(names, ctx)) { throw new StepError("loss-unreached"); }
    return { worked: worked, copied: Boolean(names.get(ctx.flow.copied_above_one)) };
  }

  function signature(modules) {
    return JSON.stringify(modules, function (k, v) { return typeof v === "bigint" ? v.toString() : v; });
  }

  // Whether the loss needs a gradient: the encoder's output without a head (its sum is the loss), else what
  // a head's loss reads (tuned_step._reaches_loss).
  function reachesLoss(names, ctx) {
    return Boolean(names.get(ctx.head === "base" ? ctx.flow.hidden : ctx.flow.loss));
  }

  // The step's numbers: FLOPs, and the bytes kept at this b and s in each precision (compute.SavedBytes.at).
  function totals(worked, ctx) {
    var out = { forward: 0n, backward: 0n, fp32: 0n, bf16: 0n };
    worked.forEach(function (w) {
      w.modules.forEach(function (m) {
        out.forward += m.forward * w.copies;
        out.backward += m.backward * w.copies;
        m.saved.forEach(function (x) {
          ["fp32", "bf16"].forEach(function (p) { out[p] += savedBytes(x, w.copies, ctx, p); });
        });
      });
    });
    return out;
  }

  // One storage's bytes over a block's copies: a shared one once; one kept only at b = 1, or only for s > 1
  // or b > 1, where it is (compute.BlockCompute._saved_bytes).
  function savedBytes(x, copies, ctx, precision) {
    var size = x.elements * BigInt(ctx.elementBytes[x.dtype][precision]), found = 0n;
    if (!x.batch_one) { found += x.shared ? size : size * copies; } else if (!x.shared && ctx.batch === 1n) { found += size * copies; }
    if (x.seq_above_one && ctx.seq === 1n) { found -= size * copies; }
    if (x.batch_above_one && ctx.batch === 1n) { found -= size * copies; }
    return found;
  }

  // The step under the method. ctx: blocks (block(), in registration order), trained (trainedOf), flow
  // (compute.flow), method, head, batch and seq (the positions the model runs), elementBytes, and evaluate(poly),
  // holds(condition), savedOf(item) and differentiated(kind) from calculator.js. Throws a StepError; where torch
  // keeps views at b = 1 or s = 1 in place of copies (tuned_step.AboveOneCompute), at those points.
  function tunedStep(ctx) {
    var flowed = flowedBlocks(ctx.blocks, ctx);
    if (flowed.copied && ctx.method !== "full" && (ctx.batch === 1n || ctx.seq === 1n)) { throw new StepError("views-at-one"); }
    return totals(flowed.worked, ctx);
  }

  // A block as the rules read it: its tensor block (names, prefix, kind) and compute block (products, storages,
  // flow) side by side, each step with its raw products and storages (without the repeat the export multiplied in).
  function block(tensorBlock, computeBlock, runs, ix) {
    var flow = computeBlock.flow, modules = tensorBlock.steps.length;
    var first = tensorBlock.repeat.map(function (_, level) { return level === 0 ? tensorBlock.start : 0; });
    var prefix = ix(tensorBlock.prefix.replace(/\{(\d+)\}/g, function (_, i) { return String(first[Number(i)]); }));
    var items = computeBlock.steps.map(function (step, i) {
      var module = i < modules ? tensorBlock.steps[i] : null;
      var params = module ? module.tensors.map(function (x) { return step.path ? x.name.slice(step.path.length + 1) : x.name; }) : [];
      return stepItem(step, flow.steps[i], module && { key: module.key, params: params });
    });
    return {
      key: tensorBlock.key, kind: tensorBlock.kind, prefix: tensorBlock.prefix, repeated: tensorBlock.repeat.length > 0,
      firstPrefix: prefix, runs: runs, items: items,
      joins: flow.joins, inputs: flow.inputs, outputs: flow.outputs, readBy: flow.read_by
    };
  }

  // One step as the rules read it: its compute rules, its flow ``f``, and, for a module, its key and parameter names.
  function stepItem(step, f, module) {
    return {
      path: step.path, key: module ? module.key : "", isModule: module !== null, params: module ? module.params : [],
      reads: f.reads, writes: f.writes, repeat: f.repeat, activation: step.activation, function: step.function, lookups: f.lookups,
      products: step.products.map(function (p, n) { return rawProduct(p, f.products[n]); }),
      saved: step.saved.map(function (x, n) { return rawSaved(x, f.needs[n], f.repeat); }),
      chain: f.chain ? chainBlock(f.chain) : null
    };
  }

  // A module's one copy (Module.chain), as a block of its own: its steps, their flow, its modules' keys and
  // parameter names, which a tensor block gives elsewhere.
  function chainBlock(chain) {
    var flow = chain.flow;
    var items = chain.steps.map(function (step, i) { return stepItem(step, flow.steps[i], chain.modules[i] || null); });
    return { key: chain.key, kind: chain.kind, items: items, joins: flow.joins, inputs: flow.inputs, outputs: flow.outputs, readBy: null };
  }

  // A product with its sides, whose FLOPs are 2·m·n·k once (the export's are times the step's repeat).
  function rawProduct(p, f) {
    return { what: f.what, m: f.m, n: f.n, k: f.k, operands: f.operands, backward: p.backward, when: p.when,
      backward_only: Boolean(p.backward_only) };
  }

  // A storage with its own shape: the export put the step's repeat in front of an own storage's.
  function rawSaved(x, needs, repeat) {
    var scaled = repeat !== null && !(repeat.length === 1 && Number(repeat[0][0]) === 1 && repeat[0][1].length === 0) && !x.shared;
    return Object.assign({}, x, { shape: scaled ? x.shape.slice(1) : x.shape, needs: needs });
  }

  window.atlasStep = { tunedStep: tunedStep, trainedOf: trainedOf, block: block, StepError: StepError };
})();
