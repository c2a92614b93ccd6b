#!/usr/bin/env node
// Summarises a V8 CPU profile (.cpuprofile) or sampling heap profile (.heapprofile): the share of
// self time (or of allocated bytes) by file and by function, highest first.
// Usage: node bench/profile-summary.mjs <file> [rows]
import { readFileSync } from 'node:fs';

const [file, rowsArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile|file.heapprofile> [rows]\n');
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

const place = (frame) => {
  const url = frame.url || '';
  if (url.includes('node_modules/')) return `npm:${url.split('node_modules/').pop().split('/')[0]}`;
  if (!url) return `(${frame.functionName || 'native'})`;
  return url.replace(/^file:\/\//, '').replace(/^.*\/(dist|src|node_modules)\//, '$1/');
};
const fn = (frame) => `${frame.functionName || '(anonymous)'} ${place(frame)}:${frame.lineNumber + 1}`;

const byPlace = new Map();
const byFunction = new Map();
let total = 0;
const add = (frame, amount) => {
  total += amount;
  byPlace.set(place(frame), (byPlace.get(place(frame)) ?? 0) + amount);
  byFunction.set(fn(frame), (byFunction.get(fn(frame)) ?? 0) + amount);
};

let unit;
if (profile.head) {
  // Sampling heap profile: each node's self size is the bytes allocated there and still sampled.
  unit = 'bytes allocated (sampled)';
  const walk = (node) => {
    add(node.callFrame, node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
} else {
  unit = 'ms of CPU samples';
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  for (let i = 0; i < profile.samples.length; i++) add(nodes.get(profile.samples[i]).callFrame, (profile.timeDeltas[i] ?? 0) / 1000);
}

const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, rows)
  .map(([name, amount]) => `${((amount / total) * 100).toFixed(1).padStart(6)}%  ${name}`).join('\n');
console.log(`${file}: ${Math.round(total)} ${unit}`);
console.log('\nby file\n' + top(byPlace));
console.log('\nby function\n' + top(byFunction));
