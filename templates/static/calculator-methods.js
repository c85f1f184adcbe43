// The calculator's fine-tuning methods: what full training, the head, BitFit, LoRA, IA³ and prompt
// tuning train on the configuration in the form, as generator/counting/methods.py (tune) decides it
// with peft 0.21's rules. It holds no rule of its own: the family's document (calculator/<family>.json,
// "tuning") gives peft's defaults, the Layer classes each method adapts, the classifier modules a
// peft model trains whole, where the base model sits and the modules without parameters; the model's
// tensors and their Layer come from the same blocks the count does. calculator.js builds the model and
// words the verdict; this script only decides, exactly, with BigInt.
(function () {
  "use strict";

  // A refusal: which setting it is about, the key of its words (content/<language>/calculator.yaml) and their values.
  function Refusal(what, key, values) { this.what = what; this.key = key; this.values = values || {}; }

  function product(shape) { return shape.reduce(function (a, b) { return a * b; }, 1n); }

  function endsWithAny(name, endings) {
    return endings.some(function (ending) { return name.slice(-ending.length) === ending && name.length >= ending.length; });
  }

  // Whether any dot-separated part of a module's name is one of ``kept``.
  function holdsPart(name, kept) {
    return name.split(".").some(function (part) { return kept.indexOf(part) >= 0; });
  }

  // A module name with each layer index written {i} (methods.indexless).
  function indexless(name) { return name.replace(/(^|\.)\d+(?=\.|$)/g, "$1{i}"); }

  // The modules of the model as peft walks them (methods.Modules): each one that holds tensors with the Layer
  // of its first tensor, every module above those (no Layer), then the blocks' modules without tensors.
  function walk(model) {
    var owners = new Map(), layers = new Map(), tensors = new Map(), tied = new Map();
    model.entries.forEach(function (entry) {
      var owner = entry.name.slice(0, Math.max(entry.name.lastIndexOf("."), 0));
      if (!owners.has(owner)) { owners.set(owner, entry.layer || null); }
      if (entry.tied_to !== undefined) { tied.set(entry.name, entry.tied_to); } else { tensors.set(entry.name, entry); }
    });
    owners.forEach(function (layer, owner) {
      var parts = owner.split(".");
      for (var depth = 1; depth < parts.length; depth++) {
        var above = parts.slice(0, depth).join(".");
        if (!layers.has(above)) { layers.set(above, null); }
      }
      layers.set(owner, layer);
    });
    model.ops.forEach(function (name) { if (!layers.has(name)) { layers.set(name, null); } });
    return {
      layers: layers,
      tensors: tensors,
      // A layer's weight shape, a tied one's included (a tied decoder is V × H as the table is).
      shapeOf: function (name) {
        var weight = name + ".weight";
        return tensors.has(weight) ? tensors.get(weight).shape : tensors.get(tied.get(weight)).shape;
      }
    };
  }

  function names(layers) { return Array.from(layers.keys()); }

  function which(name, targets) {
    return targets.filter(function (t) { return name === t || endsWithAny(name, ["." + t]); })[0];
  }

  // The last part of the name of every layer a method may adapt, once each, sorted: what a target may be.
  function suffixes(modules, adapts, kept) {
    var found = {};
    modules.layers.forEach(function (layer, name) {
      if (adapts.indexOf(layer) >= 0 && !holdsPart(name, kept)) { found[name.slice(name.lastIndexOf(".") + 1)] = true; }
    });
    return Object.keys(found).sort();
  }

  // Two Linear layers of the repeated layer: targets a user could give (methods._example).
  function example(modules, rules, adapts) {
    var seen = [];
    modules.layers.forEach(function (layer, name) {
      if (layer === rules.linear && name.split(".").some(function (p) { return /^\d+$/.test(p); })) {
        var last = name.slice(name.lastIndexOf(".") + 1);
        if (seen.indexOf(last) < 0) { seen.push(last); }
      }
    });
    return (seen.length ? seen : suffixes(modules, adapts, [])).slice(0, 2).join(",");
  }

  function added(name, shape, module) { return { name: name, shape: shape, module: module, count: product(shape) }; }

  // The modules the targets wrap, refused as peft refuses (methods._adapted).
  function adapted(model, rules, modules, tuning, classifier) {
    var method = tuning.method, adapts = rules.adapts[method];
    var fallback = method === "lora" ? rules.peft.lora : rules.peft.ia3;
    var targets = tuning.targets !== null ? tuning.targets : fallback;
    if (targets === null) {
      throw new Refusal("targets", "refuse-targets-none", { example: example(modules, rules, adapts), family: model.family });
    }
    if (!targets.length) { throw new Refusal("targets", "refuse-targets-empty"); }
    if (method === "lora" && tuning.rank < 1n) { throw new Refusal("rank", "refuse-rank", { found: tuning.rank.toString() }); }
    var kept = classifier ? rules.classifier_names : [];
    var endings = targets.map(function (t) { return "." + t; });
    var found = [];
    names(modules.layers).forEach(function (name) {
      if (!(targets.indexOf(name) >= 0 || endsWithAny(name, endings)) || holdsPart(name, kept)) { return; }
      if (adapts.indexOf(modules.layers.get(name)) < 0) {
        throw new Refusal("targets", "refuse-target-kind", { kinds: adapts, method: method, target: which(name, targets), name: name });
      }
      found.push(name);
    });
    targets.forEach(function (target) {
      var pattern = indexless(target);
      rules.parameterless[model.head].forEach(function (name) {
        if ((name === pattern || endsWithAny(name, ["." + pattern])) && !holdsPart(name, kept)) {
          throw new Refusal("targets", "refuse-target-parameterless", { kinds: adapts, method: method, target: target, name: name });
        }
      });
    });
    if (!found.length) {
      throw new Refusal("targets", "refuse-target-unmatched", {
        class_name: model.className, names: suffixes(modules, adapts, kept), targets: targets  // lists: calculator.js joins them
      });
    }
    return { targets: targets, adapted: found };
  }

  // LoRA's two factors for one layer, as peft 0.21 builds them (methods._lora).
  function lora(rules, modules, name, rank, adapter) {
    var layer = modules.layers.get(name), shape = modules.shapeOf(name);
    if (layer === rules.embedding) {
      return [added(name + ".lora_embedding_A." + adapter, [rank, shape[0]], name),
        added(name + ".lora_embedding_B." + adapter, [shape[1], rank], name)];
    }
    if (layer === rules.conv1d) {
      var out = shape[0], groups = out / shape[1];
      if (rank % groups !== 0n) {
        throw new Refusal("rank", "refuse-rank-groups", { groups: groups.toString(), name: name, found: rank.toString() });
      }
      return [added(name + ".lora_A." + adapter + ".weight", [rank, out, shape[2]], name),
        added(name + ".lora_B." + adapter + ".weight", [out, rank / groups, 1n], name)];
    }
    return [added(name + ".lora_A." + adapter + ".weight", [rank, shape[1]], name),
      added(name + ".lora_B." + adapter + ".weight", [shape[0], rank], name)];
  }

  function feedforward(model, rules, tuning, targets) {
    var found = tuning.feedforward !== null ? tuning.feedforward : rules.peft.feedforward;
    if (found === null) { throw new Refusal("feedforward", "refuse-feedforward-none", { family: model.family }); }
    if (!found.every(function (f) { return targets.indexOf(f) >= 0; })) {
      throw new Refusal("feedforward", "refuse-feedforward", { targets: targets, found: found });
    }
    return found;
  }

  // The tensors outside the base model that nothing in it shares (methods._head_tensors).
  function headTensors(model, base) {
    if (base === "") { return []; }
    var shared = {};
    model.entries.forEach(function (e) { if (e.tied_to !== undefined && e.name.indexOf(base) === 0) { shared[e.tied_to] = true; } });
    return model.entries.filter(function (e) {
      return e.tied_to === undefined && e.name.indexOf(base) !== 0 && !shared[e.name] && !e.frozen;
    });
  }

  function sum(items) { return items.reduce(function (n, x) { return n + x.count; }, 0n); }

  // What ``tuning`` trains on ``model``, or a thrown Refusal (methods.tune). model: {family, head, className,
  // config, entries: [{name, layer, shape, count, frozen} or {name, layer, tied_to}], ops: [module names]}.
  function tune(model, rules, tuning) {
    var method = tuning.method, result = { targets: [], adapted: [], saved: [], trained: [], added: [] };
    if (!rules.built) { throw new Refusal("method", "refuse-not-built", { family: model.family }); }
    var own = model.entries.filter(function (e) { return e.tied_to === undefined; });
    if (method === "full") {
      result.trained = own.filter(function (e) { return !e.frozen; });
      return finish(model, rules, result);
    }
    var base = rules.base[model.head], head = headTensors(model, base);
    if (method === "head") {
      if (base === "") { throw new Refusal("method", "refuse-head-base", { class_name: model.className }); }
      result.trained = head;
      return finish(model, rules, result);
    }
    if (method === "bitfit") {
      var inHead = {};
      head.forEach(function (e) { inHead[e.name] = true; });
      result.trained = own.filter(function (e) { return inHead[e.name] || (e.name.slice(-4) === "bias" && !e.frozen); });
      return finish(model, rules, result);
    }
    var modules = walk(model), classifier = model.head === rules.classifier_head;
    var saved = classifier ? names(modules.layers).filter(function (name) { return endsWithAny(name, rules.classifier_names); }) : [];
    var copies = [];
    saved.forEach(function (name) {
      own.forEach(function (e) {
        if (e.name.indexOf(name + ".") === 0) {
          copies.push(added(name + ".modules_to_save." + rules.adapter + "." + e.name.slice(name.length + 1), e.shape, name));
        }
      });
    });
    result.saved = saved;
    if (method === "prompt-tuning") {
      var width = rules.width_keys.map(function (k) { return model.config[k]; }).filter(function (v) { return v !== null && v !== undefined; })[0];
      if (width === undefined) { throw new Refusal("method", "refuse-width"); }
      if (tuning.virtual_tokens < 1n) { throw new Refusal("virtual_tokens", "refuse-virtual-tokens", { found: tuning.virtual_tokens.toString() }); }
      result.added = [added("prompt_encoder." + rules.adapter + ".embedding.weight", [tuning.virtual_tokens, BigInt(width)], "")].concat(copies);
      return finish(model, rules, result);
    }
    var found = adapted(model, rules, modules, tuning, classifier);
    result.targets = found.targets;
    result.adapted = found.adapted;
    var own_added = [];
    if (method === "lora") {
      found.adapted.forEach(function (name) { own_added = own_added.concat(lora(rules, modules, name, tuning.rank, rules.adapter)); });
    } else {
      var scaled = feedforward(model, rules, tuning, found.targets);
      found.adapted.forEach(function (name) {
        var shape = modules.shapeOf(name), input = endsWithAny(name, scaled);  // a plain suffix, as peft reads it
        own_added.push(added(name + ".ia3_l." + rules.adapter, input ? [1n, shape[1]] : [shape[0], 1n], name));
      });
    }
    result.added = own_added.concat(copies);
    result.groups = groups(modules, result);
    return finish(model, rules, result);
  }

  // The adapted modules by the target that matched them and by shape, in the model's order (methods.groups).
  function groups(modules, result) {
    var each = {}, found = [], index = {};
    result.added.forEach(function (a) { if (result.adapted.indexOf(a.module) >= 0) { each[a.module] = (each[a.module] || 0n) + a.count; } });
    result.adapted.forEach(function (name) {
      var shape = modules.shapeOf(name), target = which(name, result.targets);
      var key = target + " " + shape.join("×");
      if (index[key] === undefined) {
        index[key] = found.length;
        found.push({ target: target, layer: modules.layers.get(name), shape: shape, modules: [], each: each[name] });
      }
      found[index[key]].modules.push(name);
    });
    return found;
  }

  // The record count --json gives: trainable, added, adapted, saved_modules and parameter_memory.
  function finish(model, rules, result) {
    var addedCount = sum(result.added), trainable = sum(result.trained) + addedCount;
    var total = model.total + addedCount, frozen = total - trainable, per = rules.per_parameter;
    var memory = {};
    ["fp32", "bf16_mixed"].forEach(function (p) {
      memory[p] = BigInt(per.trainable[p]) * trainable + BigInt(per.frozen[p]) * frozen;
    });
    return {
      trainable: trainable, added: addedCount, total: total, adapted: result.adapted, saved_modules: result.saved,
      targets: result.targets, parameter_memory: memory, groups: result.groups || [],
      // What the step under the method reads (static/calculator-step.js): the model's own tensors that train, and each added one.
      trained_names: result.trained.map(function (e) { return e.name; }), added_tensors: result.added
    };
  }

  window.atlasMethods = { tune: tune, Refusal: Refusal, indexless: indexless, walk: walk };
})();
