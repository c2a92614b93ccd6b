// Loaded into the server with `node --import` by bench/breakdown.ts (never by a real server): it
// subscribes to the stage marks of every thread (src/core/stages.ts). Worker threads send theirs
// to the main thread in batches; the main thread writes all of them, with the ids of the threads
// that sent marks, to $TROUPE_STAGES_OUT when the server exits. It also writes
// $TROUPE_STAGES_OUT.threads as threads appear, so that the bench can read their CPU time while the
// server runs. Only the server's own process writes: a process it forks (the step host) inherits
// NODE_OPTIONS and loads this probe too, and its empty file written on exit would replace the
// server's.
import { subscribe } from 'node:diagnostics_channel';
import { readlinkSync, writeFileSync } from 'node:fs';
import { BroadcastChannel, isMainThread } from 'node:worker_threads';

// The first process to load the probe owns it; its worker threads share its pid.
const owner = (process.env.TROUPE_STAGES_PID ??= String(process.pid));
const out = owner === String(process.pid) ? process.env.TROUPE_STAGES_OUT : undefined;
const threadId = () => Number(readlinkSync('/proc/thread-self').split('/').pop());

if (out) {
  const relay = new BroadcastChannel('troupe-stage-probe');
  relay.unref();
  if (isMainThread) {
    const marks = [];
    const workers = new Set();
    subscribe('troupe:stage', (mark) => { marks.push({ ...mark, thread: 'main' }); });
    relay.onmessage = ({ data }) => {
      if (!workers.has(data.tid)) {
        workers.add(data.tid);
        writeFileSync(`${out}.threads`, JSON.stringify({ main: process.pid, workers: [...workers] }));
      }
      for (const mark of data.marks) marks.push({ ...mark, thread: data.tid });
    };
    process.on('exit', () => writeFileSync(out, JSON.stringify({ main: process.pid, workers: [...workers], marks })));
  } else {
    const tid = threadId();
    let batch = [];
    let timer;
    const flush = () => {
      timer = undefined;
      relay.postMessage({ tid, marks: batch });
      batch = [];
    };
    subscribe('troupe:stage', (mark) => {
      batch.push(mark);
      timer ??= setTimeout(flush, 20);
    });
    relay.postMessage({ tid, marks: [] });
  }
}
