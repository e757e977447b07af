// run.js runs ONNX models in ONNX Runtime (onnxruntime-node) for the tests
// of package onnxtest: it reads a JSON list of jobs from the file named by
// its argument, each {model, inputs: [{name, type, dims, file}], out,
// optimization}, the inputs' elements little-endian in their files, runs
// each model (with ONNX Runtime's graph optimizations of that level: all
// unless it says basic or disabled) on its
// inputs, writes every output's elements into a file of the folder out
// and prints, for each job, its outputs as {name: {type, dims, file}}.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const arrays = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array };

// tensor reads the input i from its file.
function tensor(i) {
  const buf = fs.readFileSync(i.file);
  const copy = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length); // aligned
  return new ort.Tensor(i.type, new arrays[i.type](copy), i.dims);
}

async function runJob(job) {
  const session = await ort.InferenceSession.create(job.model, { graphOptimizationLevel: job.optimization || 'all' });
  const feeds = {};
  for (const i of job.inputs) feeds[i.name] = tensor(i);
  const outputs = await session.run(feeds);
  const result = {};
  let n = 0;
  for (const [name, v] of Object.entries(outputs)) {
    const file = path.join(job.out, `out${n++}`);
    fs.writeFileSync(file, Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength));
    result[name] = { type: v.type, dims: v.dims, file };
  }
  return result;
}

(async () => {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const results = [];
  for (const job of jobs) results.push(await runJob(job));
  process.stdout.write(JSON.stringify(results));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
