// Tracing (`otel`): the real server exports each traced run's spans to an OTLP receiver the test
// starts on loopback (HTTP with protobuf or JSON bodies, gRPC), and the test decodes what arrives:
// the span tree of a run with a retry, a sub DAG run and a handler; headers and resource; the
// server's default `otel`; `enabled: false`; a collector that stalls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedFetch, startTestServer, waitUntil, type TestServer } from './helpers.ts';
import { setLogSink } from '../src/logging/index.ts';
import { startGrpcReceiver, startHttpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.ts';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

function tracedDag(endpoint: string, marker: string): string {
  return `otel:
  enabled: true
  endpoint: ${endpoint}
  insecure: true
  headers:
    x-api-key: \${OTEL_KEY}
  resource:
    deployment.environment: \${DAG_NAME}-prod
env:
  - OTEL_KEY: key-123
handlerOn:
  exit:
    command: echo bye
steps:
  - name: flaky
    command: if [ -e ${marker} ]; then exit 0; else touch ${marker}; exit 3; fi
    retryPolicy:
      limit: 1
      intervalSec: 0
  - name: show
    command: printenv TRACEPARENT
    output: SHOWN
    depends: [flaky]
  - name: call-child
    call: child
    depends: [show]
---
name: child
steps:
  - name: inner
    command: "true"
`;
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

async function spansArrive(receiver: OtlpReceiver, count: number): Promise<ReceivedSpan[]> {
  assert.ok(await waitUntil(() => receiver.spans().length >= count, 10_000), `${count} spans expected, got: ${JSON.stringify(receiver.spans().map((span) => span.name))}`);
  return receiver.spans();
}

async function withServer(config: Parameters<typeof startTestServer>[1], body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer('uws', config);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

test('a traced run exports over OTLP/HTTP (protobuf): one span per run and per execution, a retry and a sub DAG run in the caller\'s trace', async (t) => {
  const receiver = await startHttpReceiver();
  t.after(() => receiver.close());
  await withServer({}, async (server) => {
    await server.writeDag('traced', tracedDag(receiver.endpoint, `${server.home}/flaky-once`));
    const started = await checkedFetch(`${server.base}/dags/traced/start`, {
      method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }, body: '{}',
    });
    assert.equal(started.status, 200);
    const { dagRunId } = await started.json() as { dagRunId: string };
    const run = await server.waitForRun('traced', dagRunId);
    assert.equal(run.status, 4, JSON.stringify(run));
    // The run, two executions of flaky, show, call-child, the exit handler; the child run and its step.
    const spans = await spansArrive(receiver, 8);
    assert.equal(spans.length, 8, JSON.stringify(spans.map((span) => span.name)));
    assert.ok(spans.every((span) => span.traceId === CALLER_TRACE), 'every span is in the caller\'s trace');
    assert.ok(receiver.exports.every((received) => received.encoding === 'protobuf' && received.headers['x-api-key'] === 'key-123'));

    const [root] = byName(spans, 'DAG: traced');
    assert.equal(root.parentSpanId, CALLER_SPAN);
    assert.deepEqual(
      { name: root.attributes['dag.name'], id: root.attributes['dag.run_id'], status: root.attributes['dag.status'], pipeline: root.attributes['cicd.pipeline.name'], runId: root.attributes['cicd.pipeline.run.id'], result: root.attributes['cicd.pipeline.result'] },
      { name: 'traced', id: dagRunId, status: 'succeeded', pipeline: 'traced', runId: dagRunId, result: 'success' },
    );
    assert.equal(root.statusCode, 0);
    assert.equal(root.resource['service.name'], 'troupe');
    assert.equal(root.resource['deployment.environment'], 'traced-prod');
    // Span times are the recorded ones.
    assert.equal(root.startMs, Date.parse(run.startedAt));
    assert.equal(root.endMs, Date.parse(run.finishedAt));

    const flaky = byName(spans, 'Step: flaky').sort((a, b) => Number(a.attributes['step.retry']) - Number(b.attributes['step.retry']));
    assert.equal(flaky.length, 2);
    assert.deepEqual(flaky.map((span) => [span.attributes['step.status'], span.attributes['step.exit_code'], span.statusCode, span.parentSpanId]),
      [['failed', 3, 2, root.spanId], ['succeeded', undefined, 0, root.spanId]]);
    assert.match(flaky[0].statusMessage, /exit status 3/);
    assert.equal(flaky[1].attributes['cicd.pipeline.task.name'], 'flaky');
    assert.equal(flaky[1].attributes['cicd.pipeline.task.run.result'], 'success');
    const flakyNode = run.nodes.find((node: any) => node.step.name === 'flaky');
    assert.equal(flaky[0].startMs, Date.parse(flakyNode.startedAt));
    assert.equal(flaky[1].endMs, Date.parse(flakyNode.finishedAt));
    assert.ok(flaky[0].endMs <= flaky[1].startMs);

    // The step's command joined the trace: TRACEPARENT named its own span.
    const [show] = byName(spans, 'Step: show');
    assert.equal((await server.stepLog('traced', dagRunId, 'show')).trim(), `00-${CALLER_TRACE}-${show.spanId}-01`);

    // The child run's span is under the calling step's, its step under it.
    const [call] = byName(spans, 'Step: call-child');
    const [child] = byName(spans, 'DAG: child');
    const [inner] = byName(spans, 'Step: inner');
    assert.equal(call.parentSpanId, root.spanId);
    assert.equal(child.parentSpanId, call.spanId);
    assert.equal(child.attributes['dag.parent_run_id'], dagRunId);
    assert.equal(child.attributes['dag.parent_name'], 'traced');
    assert.equal(inner.parentSpanId, child.spanId);
    // The handler's execution is a span of the run too.
    const [exit] = byName(spans, 'Step: onExit');
    assert.equal(exit.parentSpanId, root.spanId);
  });
});

test('a failed run exports over OTLP/gRPC: metadata from headers, error statuses, the run\'s own trace', async (t) => {
  const receiver = await startGrpcReceiver();
  t.after(() => receiver.close());
  await withServer({}, async (server) => {
    await server.writeDag('broken', `otel:
  enabled: true
  endpoint: ${receiver.endpoint}
  insecure: true
  timeout: 5s
  headers:
    authorization: Bearer abc
steps:
  - name: twice
    command: "true"
    repeatPolicy:
      repeat: true
      limit: 2
      intervalSec: 0
  - name: fails
    command: echo nope >&2; exit 7
    depends: [twice]
`);
    const run = await server.startAndWait('broken');
    assert.equal(run.status, 2);
    const spans = await spansArrive(receiver, 4);
    assert.equal(spans.length, 4);
    // Each execution of a repeated step is a span of its own.
    assert.deepEqual(byName(spans, 'Step: twice').map((span) => span.attributes['step.execution']).sort(), [1, 2]);
    assert.ok(receiver.exports.every((received) => received.encoding === 'grpc' && received.headers.authorization === 'Bearer abc'));
    const [root] = byName(spans, 'DAG: broken');
    const [step] = byName(spans, 'Step: fails');
    assert.equal(root.parentSpanId, '', 'a run started without a traceparent begins a trace');
    assert.equal(step.traceId, root.traceId);
    assert.equal(step.parentSpanId, root.spanId);
    assert.deepEqual([root.statusCode, root.attributes['dag.status'], root.attributes['cicd.pipeline.result']], [2, 'failed', 'failure']);
    assert.deepEqual([step.statusCode, step.attributes['step.exit_code'], step.attributes['cicd.pipeline.task.run.result']], [2, 7, 'failure']);
  });
});

test('the server\'s default otel traces DAGs without one, as OTLP/JSON when the protocol says so; enabled: false sends nothing', async (t) => {
  const receiver = await startHttpReceiver();
  t.after(() => receiver.close());
  process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL = 'http/json';
  t.after(() => { delete process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL; });
  await withServer({ otel: { enabled: true, endpoint: receiver.endpoint, insecure: true, headers: {}, resource: { team: 'ops' } } }, async (server) => {
    await server.writeDag('quiet', 'otel:\n  enabled: false\nsteps:\n  - name: a\n    command: "true"\n');
    await server.writeDag('plain', 'steps:\n  - name: a\n    command: "true"\n');
    assert.equal((await server.startAndWait('quiet')).status, 4);
    assert.equal((await server.startAndWait('plain')).status, 4);
    const spans = await spansArrive(receiver, 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(receiver.spans().map((span) => span.name).sort(), ['DAG: plain', 'Step: a']);
    assert.ok(receiver.exports.every((received) => received.encoding === 'json'));
    assert.equal(spans[0].resource.team, 'ops');
    // An enqueued run keeps its caller's traceparent until it starts.
    const enqueued = await checkedFetch(`${server.base}/dags/plain/enqueue`, {
      method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }, body: '{}',
    });
    assert.equal(enqueued.status, 200);
    const { dagRunId } = await enqueued.json() as { dagRunId: string };
    assert.equal((await server.waitForRun('plain', dagRunId)).status, 4);
    assert.ok(await waitUntil(() => receiver.spans().some((span) => span.traceId === CALLER_TRACE && span.name === 'DAG: plain')));
    const queuedRoot = receiver.spans().find((span) => span.traceId === CALLER_TRACE && span.name === 'DAG: plain')!;
    assert.equal(queuedRoot.parentSpanId, CALLER_SPAN);
  });
});

test('a collector that stalls neither slows nor fails a run; the spans it did not take are counted and logged once', async (t) => {
  const receiver = await startHttpReceiver();
  t.after(() => receiver.close());
  receiver.stall(true);
  const lines: string[] = [];
  const restoreLog = setLogSink({ write: (line: string) => { lines.push(line); return true; } } as never);
  t.after(restoreLog);
  await withServer({}, async (server) => {
    await server.writeDag('stalled', `otel:\n  enabled: true\n  endpoint: ${receiver.endpoint}\n  insecure: true\n  timeout: 1s\nsteps:\n  - name: a\n    command: sleep 0.1\n`);
    for (let index = 0; index < 3; index += 1) {
      const run = await server.startAndWait('stalled');
      assert.equal(run.status, 4);
      // The run's own time is its step's: the collector holds nothing up (its timeout is 1 s).
      assert.ok(Date.parse(run.finishedAt) - Date.parse(run.startedAt) < 900, `${run.startedAt} .. ${run.finishedAt}`);
    }
    assert.ok(await waitUntil(() => server.troupe.spans.counts().dropped > 0, 8_000), 'the spans the stalled collector did not take are counted');
    const metrics = await (await checkedFetch(`${server.base}/metrics`)).text();
    assert.match(metrics, /^troupe_trace_spans_dropped_total [1-9]/m);
    // Another run's spans fail too: the streak is still logged once.
    assert.equal((await server.startAndWait('stalled')).status, 4);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const warnings = lines.filter((line) => line.includes('traces could not be exported'));
    assert.equal(warnings.length, 1, lines.join(''));
    assert.match(warnings[0], new RegExp(receiver.endpoint.replaceAll('/', '\\/')));
  });
});
