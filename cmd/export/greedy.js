// greedy.js decodes greedily with a model that cmd/export wrote, in ONNX
// Runtime under Node: the encoder once per batch of sources (for a model
// that reads sources), then the step graph one position at a time, each
// step's key/value caches fed to the next.
//
// Usage:
//
//	npm install onnxruntime-node@1.30.0
//	node greedy.js DIR < ids.txt
//
// DIR holds step.onnx (and encoder.onnx). Each line of standard input is
// a source as token ids separated by spaces (the run's tokenizer makes
// them; an encoder-decoder's source ends with EOS, which is added when it
// is missing), or for a decoder-only model a prompt; an optional second
// field after a tab bounds the output's tokens (by default the source's
// length plus 50, within the step graph's positions). Each output line is
// the decoded ids, without BOS and EOS: the most probable token at every
// step (never PAD or BOS), until EOS or the bound.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const PAD = 0n; const BOS = 1n; const EOS = 2n; // the reserved ids of every model
const EOS_INDEX = Number(EOS);
const EXTRA = 50; // tokens an output may exceed its source by, as translate's default

// zeros is a tensor of zeros of the input described by meta.
function zeros(meta) {
  const n = meta.shape.reduce((a, b) => a * b, 1);
  const data = meta.type === 'int64' ? new BigInt64Array(n) : new Float32Array(n);
  return new ort.Tensor(meta.type, data, meta.shape);
}

// shapes maps a session's input names to their metadata.
function inputs(session) {
  return Object.fromEntries(session.inputMetadata.map((m) => [m.name, m]));
}

// decodeBatch decodes up to `rows` sources together and returns their outputs.
async function decodeBatch(enc, step, srcs, limits) {
  const meta = inputs(step);
  const rows = meta.step_ids.shape[0]; const steps = meta.slot_mask.shape[3];
  const feeds = {};
  if (enc) { // sources: padded ids [rows, srcLen], each ending with EOS
    const srcLen = inputs(enc).src.shape[1];
    const src = new BigInt64Array(rows * srcLen).fill(PAD);
    srcs.forEach((s, r) => {
      if (s.length > srcLen) throw new Error(`a source of ${s.length} tokens, more than the encoder's ${srcLen}`);
      s.forEach((id, j) => { src[r * srcLen + j] = id; });
    });
    feeds.row_src = new ort.Tensor('int64', src, [rows, srcLen]);
    Object.assign(feeds, await enc.run({ src: feeds.row_src }));
  }
  const carried = step.inputNames.filter((n) => !(n in feeds) && !['step_ids', 'slot', 'slot_mask'].includes(n));
  for (const n of carried) feeds[n] = zeros(meta[n]);
  const prefixes = srcs.map((s) => (enc ? [BOS] : [BOS, ...s]));
  const outs = srcs.map(() => []); const done = srcs.map(() => false);
  const ids = new BigInt64Array(rows).fill(EOS);
  prefixes.forEach((p, r) => { ids[r] = p[0]; });
  const mask = new Float32Array(steps).fill(-Infinity);
  for (let t = 0; t < steps && done.includes(false); t++) {
    mask[t] = 0;
    feeds.step_ids = new ort.Tensor('int64', ids.slice(), [rows, 1]);
    feeds.slot = new ort.Tensor('int64', BigInt64Array.of(BigInt(t)), [1]);
    feeds.slot_mask = new ort.Tensor('float32', mask.slice(), [1, 1, 1, steps]);
    const out = await step.run(feeds);
    for (const n of carried) feeds[n] = out[n + '.next'];
    const logp = out.logp.data; const vocab = logp.length / rows;
    srcs.forEach((_, r) => {
      if (done[r]) return;
      if (t + 1 < prefixes[r].length) { ids[r] = prefixes[r][t + 1]; return; } // still feeding the prompt
      let best = EOS_INDEX; // of every token but PAD and BOS, which no output holds
      for (let v = EOS_INDEX + 1; v < vocab; v++) if (logp[r * vocab + v] > logp[r * vocab + best]) best = v;
      if (BigInt(best) === EOS) { done[r] = true; return; }
      outs[r].push(best); ids[r] = BigInt(best);
      done[r] = outs[r].length >= limits[r];
    });
  }
  return outs;
}

// parseIDs reads line n's token ids, each below vocab and none padding.
function parseIDs(ids, vocab, n) {
  const fields = ids.trim() === '' ? [] : ids.trim().split(/\s+/);
  return fields.map((f) => {
    if (!/^[0-9]+$/.test(f) || Number(f) >= vocab || Number(f) === Number(PAD)) {
      throw new Error(`line ${n}: ${JSON.stringify(f)} is not a token id of the model (1 to ${vocab - 1})`);
    }
    return BigInt(f);
  });
}

(async () => {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node greedy.js DIR < ids.txt');
  const hasEncoder = fs.existsSync(path.join(dir, 'encoder.onnx'));
  const enc = hasEncoder ? await ort.InferenceSession.create(path.join(dir, 'encoder.onnx')) : null;
  const step = await ort.InferenceSession.create(path.join(dir, 'step.onnx'));
  const meta = inputs(step);
  const rows = meta.step_ids.shape[0]; const steps = meta.slot_mask.shape[3];
  const vocab = step.outputMetadata.find((m) => m.name === 'logp').shape[2];
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const srcs = []; const limits = [];
  for (const [n, line] of lines.entries()) {
    const [ids, bound] = line.split('\t');
    const s = parseIDs(ids, vocab, n + 1);
    if (bound !== undefined && !/^\s*[1-9][0-9]*\s*$/.test(bound)) throw new Error(`line ${n + 1}: bound ${JSON.stringify(bound)} is not a positive number`);
    if (hasEncoder && (s.length === 0 || s[s.length - 1] !== EOS)) s.push(EOS);
    const prompt = hasEncoder ? 0 : s.length; // steps that feed the prompt before the first output
    const limit = Math.min(bound ? Number(bound) : s.length + EXTRA, steps - prompt);
    if (limit < 1) throw new Error(`a prompt of ${s.length} tokens leaves no room in the step graph's ${steps} positions`);
    srcs.push(s); limits.push(limit);
  }
  for (let i = 0; i < srcs.length; i += rows) {
    const outs = await decodeBatch(enc, step, srcs.slice(i, i + rows), limits.slice(i, i + rows));
    for (const o of outs) process.stdout.write(o.join(' ') + '\n');
  }
})().catch((e) => {
  console.error(`greedy.js: ${e.message}`);
  process.exit(1);
});
