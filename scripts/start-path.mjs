// Which modules of the server one start of a run passes through, and how often the path goes back
// and forth between them. Reproducible: one DAG of one `true` step, a warm server, one measured start.
//
//   node --import tsx scripts/start-path.mjs          the TypeScript of src/
//   node scripts/start-path.mjs --dist                the compiled dist/ (`npm run build` first)
//   options: --json (one JSON document), --warmup N (starts before the measured one, default 20),
//            --no-trace (module lists only, no stepping)
//
// The real server runs in this process (startTroupe, a temporary home, 127.0.0.1 port 0) and is
// driven over HTTP as a client would, after warm-up starts (lazy loading and first-use work are
// then done). Two measures, on two starts:
//
// Coverage (V8 precise coverage with call counts, through node:inspector): the functions of src/
// that ran, per module, in two windows of one start.
//   (a) dispatch: from the start request to the moment the run's step is handed to the step pool
//       (the pool's `dispatch` has returned). Taken inside that call, so it holds what ran until
//       then, whatever the order of the HTTP answer and the first record's commit.
//   (b) run: from the start request to the run's final record being durable (`whenFinished`), (a)
//       included. The answer's arrival and that wait are the script's only calls into the server.
// The main thread is covered in-thread; the pool's threads (the step's process is started there)
// apart, for (b), through the inspector's NodeWorker domain. The resource sampler's timer is held
// (every 5 s it would fall in a window now and then); whatever else the server does on its own
// would show in an idle window as long as (b), measured after it.
//
// Stepping (a second start): a worker thread attaches to this thread's inspector
// (connectToMainThread) and steps into every statement from the engine's start (Engine.startDag)
// until its promise settles. Third-party code is blackboxed (a call from xstate's `send` into a
// machine's action still stops there, and counts as a call from the src/ frame under `send`);
// Node's internals cannot be blackboxed and are stepped through, its async hooks stepped out of.
// At each pause in src/ it takes the stack of src/ frames, the awaiting async functions below it
// included, so a function resumed after an await still stands on the one that awaits it. Between
// two pauses the frames left are returns and those added are calls; they cross when the two frames
// are in different modules. Frames are told apart by module and function name. The figures are
// given for the frames above the engine's `startDag` and above the starter's `launch`.
import { execFileSync } from 'node:child_process';
import { Session } from 'node:inspector';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCOPES = [
  { label: 'Engine.startDag', fn: 'startDag', file: /\/engine\.[jt]s$/ },
  { label: 'RunStarter.launch', fn: 'launch', file: /\/run-starter\.[jt]s$/ },
];

if (isMainThread) await main();
else tracer(workerData);

async function main() {
  const args = process.argv.slice(2);
  const flag = (name) => args.includes(name);
  const warmupAt = args.indexOf('--warmup');
  const warmup = warmupAt >= 0 ? Number(args[warmupAt + 1]) : 20;
  const dist = flag('--dist');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const codeDir = join(root, dist ? 'dist' : 'src');
  const codeUrl = pathToFileURL(codeDir).href + '/';
  const ext = dist ? 'js' : 'ts';
  const { startTroupe, homePaths } = await import(pathToFileURL(join(codeDir, `main.${ext}`)).href);
  // The server logs as it does in service (info), on stderr: stdout is the report's.
  const { logToStderr } = await import(pathToFileURL(join(codeDir, 'logging', `index.${ext}`)).href);
  logToStderr();

  const session = new Session();
  session.connect();
  // An in-thread session answers synchronously, which lets the dispatch hook take its figures in place.
  const post = (method, params = {}) => {
    let answer;
    session.post(method, params, (error, result) => {
      if (error) throw error;
      answer = result;
    });
    return answer;
  };
  post('Profiler.enable');
  post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  const take = () => coverageOf(post('Profiler.takePreciseCoverage').result, codeUrl);
  // Before the server starts, so that every thread it starts (the step pool's) is covered too.
  const threads = threadCoverage(session, post, codeUrl);

  const home = await mkdtemp(join(tmpdir(), 'troupe-start-path-'));
  // Held timers: the resource sampler never samples (see above).
  const resourceClock = { now: () => Date.now(), setTimeout: () => 0, clearTimeout: () => undefined };
  const troupe = await startTroupe({ host: '127.0.0.1', port: 0, ...homePaths(home), maxThreads: 2, home, resourceClock });
  const base = `http://127.0.0.1:${troupe.server.port}/api/v2`;
  const name = 'start-path';
  await writeFile(join(home, 'dags', `${name}.yaml`), 'steps:\n  - name: one\n    command: "true"\n');
  const start = async () => {
    const response = await fetch(`${base}/dags/${name}/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = await response.json();
    if (response.status !== 200) throw new Error(`start answered ${response.status}: ${JSON.stringify(body)}`);
    return body.dagRunId;
  };
  const finalStatus = async (dagRunId) => {
    for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
      const body = await (await fetch(`${base}/dag-runs/${name}/${dagRunId}`)).json();
      if (body.dagRun && ![0, 1, 5].includes(body.dagRun.status)) return body.dagRun.status;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`run ${dagRunId} did not finish`);
  };

  try {
    for (let i = 0; i < warmup; i++) await finalStatus(await start());

    const engine = troupe.engine;
    const dispatcher = engine.deps.dispatcher;
    const dispatch = dispatcher.dispatch;
    let onDispatch;
    dispatcher.dispatch = function (task) {
      const handle = dispatch.call(this, task);
      const hook = onDispatch;
      onDispatch = undefined;
      hook?.(task);
      return handle;
    };

    take();
    await threads.take();
    const began = performance.now();
    let windowA;
    let dispatched;
    onDispatch = (task) => {
      windowA = take();
      dispatched = { ms: performance.now() - began, step: `${task.executor?.type} ${task.command ?? task.commands?.join('; ') ?? ''}`.trim() };
    };
    const dagRunId = await start();
    const answeredMs = performance.now() - began;
    await engine.whenFinished(name, dagRunId);
    const finishedMs = performance.now() - began;
    const windowB = merge(windowA ?? new Map(), take());
    const threadsB = await threads.take();
    delete dispatcher.dispatch;
    const status = await finalStatus(dagRunId);

    take();
    await threads.take();
    await new Promise((resolve) => setTimeout(resolve, Math.max(50, finishedMs)));
    const idle = take();
    const threadsIdle = await threads.take();

    const trace = flag('--no-trace') ? undefined : await traceStart(engine, start, finalStatus, codeUrl);
    const report = {
      code: dist ? 'dist' : 'src', commit: headOf(root), warmupStarts: warmup, runStatus: status,
      times: { dispatchedMs: round(dispatched?.ms), answeredMs: round(answeredMs), finishedMs: round(finishedMs) },
      dispatchedStep: dispatched?.step,
      windows: {
        dispatch: listing(windowA ?? new Map()), run: listing(windowB), idle: listing(idle),
        runPoolThreads: listing(threadsB), idlePoolThreads: listing(threadsIdle),
      },
      trace,
    };
    process.stdout.write(flag('--json') ? JSON.stringify(report, null, 2) + '\n' : text(report));
  } finally {
    session.disconnect();
    await troupe.close();
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Coverage of the other threads (the step pool's, the parse pool's), through the NodeWorker domain:
 * each thread started from here on is attached and covered; `take` gathers and resets them all.
 */
function threadCoverage(session, post, codeUrl) {
  const attached = new Set();
  const waiting = new Map();
  let nextId = 1;
  const send = (sessionId, method, params = {}) => new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
  });
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const message = JSON.parse(params.message);
    const waiter = waiting.get(message.id);
    if (!waiter) return;
    waiting.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  session.on('NodeWorker.attachedToWorker', ({ params }) => {
    attached.add(params.sessionId);
    send(params.sessionId, 'Profiler.enable').catch(() => undefined);
    send(params.sessionId, 'Profiler.startPreciseCoverage', { callCount: true, detailed: true }).catch(() => undefined);
  });
  session.on('NodeWorker.detachedFromWorker', ({ params }) => attached.delete(params.sessionId));
  post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    async take() {
      const taken = await Promise.all([...attached].map((id) => send(id, 'Profiler.takePreciseCoverage').then((answer) => coverageOf(answer.result, codeUrl), () => new Map())));
      return taken.reduce(merge, new Map());
    },
  };
}

/** Per module of the code folder (its path in it): functions that ran and their calls. */
function coverageOf(scripts, codeUrl) {
  const modules = new Map();
  for (const script of scripts) {
    if (!script.url.startsWith(codeUrl)) continue;
    const functions = new Map();
    for (const fn of script.functions) {
      const count = fn.ranges[0]?.count ?? 0;
      if (count > 0) functions.set(`${fn.ranges[0].startOffset}:${fn.functionName}`, count);
    }
    if (functions.size > 0) modules.set(script.url.slice(codeUrl.length), functions);
  }
  return modules;
}

function merge(a, b) {
  const sum = new Map([...a].map(([module, fns]) => [module, new Map(fns)]));
  for (const [module, fns] of b) {
    const into = sum.get(module) ?? new Map();
    for (const [fn, count] of fns) into.set(fn, (into.get(fn) ?? 0) + count);
    sum.set(module, into);
  }
  return sum;
}

function listing(modules) {
  const rows = [...modules].map(([module, fns]) => ({ module, functions: fns.size, calls: [...fns.values()].reduce((s, n) => s + n, 0) }));
  rows.sort((x, y) => x.module.localeCompare(y.module));
  return { modules: rows.length, functions: rows.reduce((s, r) => s + r.functions, 0), calls: rows.reduce((s, r) => s + r.calls, 0), list: rows };
}

/** One more start, stepped through from Engine.startDag's entry to its settling by the tracer thread. */
async function traceStart(engine, start, finalStatus, codeUrl) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { codeUrl, selfUrl: import.meta.url } });
  const from = (kind) => new Promise((resolve, reject) => {
    worker.on('message', (message) => message.kind === kind && resolve(message));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the tracer thread ended (${code}) before its ${kind} message`)));
  });
  const result = from('result');
  result.catch(() => undefined); // awaited below; an early failure surfaces through `armed` first
  let pauses, frames, wallMs, dagRunId;
  try {
    await from('armed');
    const startDag = engine.startDag;
    // Own property over the prototype's: the routes call engine.startDag on this very object.
    engine.startDag = async function (...args) {
      traceBegin();
      try {
        return await startDag.apply(this, args);
      } finally {
        traceEnd();
      }
    };
    const began = performance.now();
    try {
      dagRunId = await start();
    } finally {
      delete engine.startDag;
    }
    ({ pauses, frames } = await result);
    wallMs = performance.now() - began;
  } finally {
    await worker.terminate();
  }
  const status = await finalStatus(dagRunId);
  return { runStatus: status, wallMs: round(wallMs), pauses: pauses.length, ...crossings(pauses, frames) };
}

// The tracer stops on these two: their names are how it knows where the start begins and ends.
function traceBegin() {
  debugger; // eslint-disable-line no-debugger
}
function traceEnd() {
  debugger; // eslint-disable-line no-debugger
}

/** Calls and returns between modules over consecutive pauses, per scope (frames above the scope's function). */
function crossings(pauses, frames) {
  const scopes = SCOPES.map((scope) => ({
    scope: scope.label, pauses: 0, calls: 0, returns: 0, switches: 0,
    entered: new Map(), edges: new Map(), steps: new Map(), targets: new Map(),
    at: frames.map((f) => f.fn === scope.fn && scope.file.test(f.module)),
  }));
  const moduleOf = (id) => frames[id].module;
  let previous;
  for (const stack of pauses) {
    for (const s of scopes) {
      const base = stack.findIndex((id) => s.at[id]);
      if (base < 0) continue;
      s.pauses++;
      const top = moduleOf(stack[stack.length - 1]);
      s.steps.set(top, (s.steps.get(top) ?? 0) + 1);
      if (!previous) continue;
      const previousBase = previous.findIndex((id) => s.at[id]);
      if (previousBase >= 0 && moduleOf(previous[previous.length - 1]) !== top) s.switches++;
      let k = 0;
      while (k < previous.length && k < stack.length && previous[k] === stack[k]) k++;
      for (let i = previous.length - 1; i >= k; i--) {
        if (previousBase >= 0 && i > previousBase && moduleOf(previous[i]) !== moduleOf(previous[i - 1])) s.returns++;
      }
      for (let i = k; i < stack.length; i++) {
        if (i > base && moduleOf(stack[i]) !== moduleOf(stack[i - 1])) {
          s.calls++;
          s.entered.set(moduleOf(stack[i]), (s.entered.get(moduleOf(stack[i])) ?? 0) + 1);
          const edge = `${moduleOf(stack[i - 1])} -> ${moduleOf(stack[i])}`;
          s.edges.set(edge, (s.edges.get(edge) ?? 0) + 1);
          const target = `${moduleOf(stack[i])} ${frames[stack[i]].fn || '(anonymous)'}`;
          s.targets.set(target, (s.targets.get(target) ?? 0) + 1);
        }
      }
    }
    previous = stack;
  }
  const sorted = (map) => Object.fromEntries([...map].sort((x, y) => y[1] - x[1]));
  return {
    scopes: scopes.map(({ at, entered, edges, steps, targets, ...s }) => ({
      ...s, modulesEntered: entered.size, entered: sorted(entered), edges: sorted(edges), functionsEntered: sorted(targets),
      statementsPerModule: sorted(steps),
    })),
  };
}

/** The tracer thread: steps through the main thread from traceBegin to traceEnd. */
function tracer({ codeUrl, selfUrl }) {
  const session = new Session();
  session.connectToMainThread();
  // A pending post does not hold the thread's event loop open.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const post = (method, params = {}) => new Promise((resolve, reject) => {
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result)));
  });
  const urls = new Map();
  session.on('Debugger.scriptParsed', ({ params }) => urls.set(params.scriptId, params.url));
  const frameIds = new Map();
  const frames = [];
  const frameId = (url, fn) => {
    const key = `${url}#${fn}`;
    let id = frameIds.get(key);
    if (id === undefined) {
      id = frames.length;
      frameIds.set(key, id);
      frames.push({ module: url.slice(codeUrl.length), fn });
    }
    return id;
  };
  const pauses = [];
  let tracing = false;
  session.on('Debugger.paused', async ({ params }) => {
    const top = params.callFrames[0];
    const topUrl = urls.get(top.location.scriptId) ?? '';
    if (topUrl === selfUrl && top.functionName === 'traceEnd') {
      await post('Debugger.disable');
      clearInterval(keepAlive);
      parentPort.postMessage({ kind: 'result', pauses, frames });
      return;
    }
    if (topUrl === selfUrl && top.functionName === 'traceBegin') tracing = true;
    if (tracing && topUrl.startsWith(codeUrl)) {
      // Bottom first: the outermost awaiting function, up to the frame paused in.
      const stack = [];
      const chain = [];
      for (let link = params.asyncStackTrace; link; link = link.parent) chain.push(link.callFrames);
      for (const callFrames of chain.reverse()) {
        for (const frame of [...callFrames].reverse()) if (frame.url.startsWith(codeUrl)) stack.push(frameId(frame.url, frame.functionName));
      }
      for (const frame of [...params.callFrames].reverse()) {
        const url = urls.get(frame.location.scriptId) ?? '';
        if (url.startsWith(codeUrl)) stack.push(frameId(url, frame.functionName));
      }
      pauses.push(stack);
    }
    // Node's async hooks (which the async stack tracking turns on) cannot be blackboxed and call
    // nothing of ours: stepped out of. Other internals may call back into the server: stepped through.
    await post(/^node:internal\/(async_hooks|inspector)/.test(topUrl) ? 'Debugger.stepOut' : 'Debugger.stepInto');
  });
  (async () => {
    await post('Debugger.enable');
    await post('Debugger.setAsyncCallStackDepth', { maxDepth: 64 });
    await post('Debugger.setBlackboxPatterns', { patterns: ['/node_modules/', '^node:'] });
    parentPort.postMessage({ kind: 'armed' });
  })();
}

function headOf(root) {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function round(ms) {
  return ms === undefined ? undefined : Math.round(ms * 100) / 100;
}

function text(report) {
  const lines = [`start-path: ${report.code}/ at ${report.commit ?? '?'}, ${report.warmupStarts} warm-up starts, run status ${report.runStatus}`];
  lines.push(`times (under coverage, not a measure of speed): step dispatched ${report.times.dispatchedMs} ms (${report.dispatchedStep}), answer ${report.times.answeredMs} ms, final record ${report.times.finishedMs} ms`);
  const window = (title, w) => {
    lines.push('', `${title}: ${w.modules} modules, ${w.functions} functions, ${w.calls} calls`);
    for (const row of w.list) lines.push(`  ${row.module.padEnd(40)} ${String(row.functions).padStart(4)} fns ${String(row.calls).padStart(6)} calls`);
  };
  window('(a) request -> step dispatched', report.windows.dispatch);
  window('(b) request -> final record', report.windows.run);
  window('idle, as long as (b)', report.windows.idle);
  window('(b) on the pool threads', report.windows.runPoolThreads);
  window('idle, on the pool threads', report.windows.idlePoolThreads);
  if (report.trace) {
    lines.push('', `stepping (another start, run status ${report.trace.runStatus}): ${report.trace.pauses} pauses in ${report.trace.wallMs} ms`);
    for (const s of report.trace.scopes) {
      lines.push(`  ${s.scope}: ${s.pauses} statements; enters ${s.modulesEntered} modules (${s.calls} calls across modules), returns ${s.returns} times; ${s.switches} switches of module`);
      lines.push(`    entered: ${Object.entries(s.entered).map(([m, n]) => `${m} ${n}`).join(', ')}`);
    }
  }
  return lines.join('\n') + '\n';
}
