// A pool thread loads an executor's libraries with its first step of that executor, not as it
// starts: a server that runs only shell steps holds no archive, container, SSH, mail or HTTP client
// code in its threads. Observed through the inspector (the NodeWorker domain): the scripts V8
// compiled in each worker thread of this process, as its debugger lists them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, waitUntil, type TestServer } from './helpers.ts';

/** Libraries of executors other than shell, by the folder their files are found in. */
const EXECUTOR_LIBRARIES = ['tar', 'yauzl', 'yazl', 'picomatch', 'dockerode', 'ssh2', 'nodemailer', 'undici', 'jq-wasm'];

/** The scripts each worker thread of this process compiled, gathered as its debugger reports them. */
class ThreadScripts {
  private readonly session = new Session();
  private readonly scripts = new Map<string, Set<string>>();
  private nextId = 1;

  constructor() {
    this.session.connect();
    this.session.on('NodeWorker.attachedToWorker', ({ params }: any) => {
      const urls = new Set<string>();
      this.scripts.set(params.sessionId, urls);
      const message = JSON.stringify({ id: this.nextId++, method: 'Debugger.enable', params: {} });
      this.session.post('NodeWorker.sendMessageToWorker', { sessionId: params.sessionId, message });
    });
    this.session.on('NodeWorker.receivedMessageFromWorker', ({ params }: any) => {
      const message = JSON.parse(params.message);
      if (message.method === 'Debugger.scriptParsed' && message.params.url) this.scripts.get(params.sessionId)?.add(message.params.url);
    });
    this.session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  }

  /** Per thread: the libraries of `EXECUTOR_LIBRARIES` it loaded, and whether it is a step pool thread. */
  threads(): { poolThread: boolean; libraries: string[] }[] {
    return [...this.scripts.values()].map((urls) => ({
      poolThread: [...urls].some((url) => url.includes('/src/executors/worker.ts')),
      libraries: EXECUTOR_LIBRARIES.filter((name) => [...urls].some((url) => url.includes(`/node_modules/${name}/`))),
    }));
  }

  close(): void {
    this.session.post('NodeWorker.disable');
    this.session.disconnect();
  }
}

describe('the libraries of a pool thread', () => {
  let troupe: TestServer;
  let threads: ThreadScripts;
  let work: string;

  before(async () => {
    threads = new ThreadScripts();
    troupe = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'troupe-pool-modules-'));
    await writeFile(join(work, 'a.txt'), 'alpha\n');
  });
  after(async () => {
    await troupe.close();
    threads.close();
    await rm(work, { recursive: true, force: true });
  });

  test('a thread that ran a shell step holds no other executor\'s library; an archive step then loads tar, and an http step undici', async () => {
    const shell = await troupe.call('POST', '/dags', { name: 'pool_modules_shell', spec: 'steps:\n  - name: one\n    command: "true"\n' });
    assert.equal(shell.status, 201, shell.text);
    assert.equal((await troupe.startAndWait('pool_modules_shell')).status, 4);
    // The thread's scripts arrive as messages after the run is final.
    await waitUntil(() => threads.threads().some((thread) => thread.poolThread));
    const afterShell = threads.threads().filter((thread) => thread.poolThread);
    assert.ok(afterShell.length > 0, 'the step ran on a pool thread');
    assert.deepEqual(afterShell.map((thread) => thread.libraries), afterShell.map(() => []));

    const spec = [
      `workingDir: ${work}`,
      'steps:',
      '  - name: pack',
      '    executor:',
      '      type: archive',
      '      config:',
      '        source: a.txt',
      '        destination: a.tar',
      '    command: create',
      '  - name: ask',
      '    executor: http',
      `    command: GET ${troupe.base}/health`,
    ].join('\n');
    const created = await troupe.call('POST', '/dags', { name: 'pool_modules_archive', spec });
    assert.equal(created.status, 201, created.text);
    const dagRun = await troupe.startAndWait('pool_modules_archive');
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((node: any) => node.error)));
    await waitUntil(() => threads.threads().some((thread) => thread.libraries.includes('tar') && thread.libraries.includes('undici')));
    const loaded = new Set(threads.threads().flatMap((thread) => thread.libraries));
    for (const unused of ['dockerode', 'ssh2', 'nodemailer', 'jq-wasm']) assert.ok(!loaded.has(unused), `${unused} was loaded without a step of its executor`);
  });
});
