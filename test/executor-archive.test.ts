// `executor: archive` creates, lists and extracts tar, tar.gz and zip archives
// (node-tar, yazl/yauzl) on real files. Paths resolve against the step's working folder; include
// globs select entries; verifyIntegrity reads every entry before anything is written; an entry
// that would land outside the destination (zip-slip, tar-slip, symlinks) is refused, naming it,
// and nothing outside is written; a stop ends an operation that waits on its source.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import yazl from 'yazl';
import { startTestServer, waitUntil, type TestServer, stepError } from './helpers.ts';

interface CraftedEntry { path: string; type: 'File' | 'SymbolicLink' | 'Directory'; linkpath?: string; data?: string }

/** A tar archive written header by header (node-tar's Header), so that it can hold names no tool writes. */
function craftedTar(entries: CraftedEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    const block = Buffer.alloc(512);
    new Header({ path: entry.path, type: entry.type, size: data.length, mode: 0o644, mtime: new Date(), ...(entry.linkpath ? { linkpath: entry.linkpath } : {}) }).encode(block, 0);
    blocks.push(block);
    if (data.length > 0) {
      const padded = Buffer.alloc(Math.ceil(data.length / 512) * 512);
      data.copy(padded);
      blocks.push(padded);
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** A zip archive with one entry named `name`: yazl refuses such names, so a same-length stand-in is renamed in the bytes. */
async function craftedZip(name: string, data: string, store = false): Promise<Buffer> {
  const standIn = 'Z'.repeat(name.length);
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(data), standIn, { compress: !store });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  for (let at = bytes.indexOf(standIn); at >= 0; at = bytes.indexOf(standIn)) bytes.write(name, at, 'latin1');
  return bytes;
}

describe('the archive executor', () => {
  let troupe: TestServer;
  let work: string;

  before(async () => {
    troupe = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'troupe-archive-test-'));
    await mkdir(join(work, 'project', 'data', 'sub'), { recursive: true });
    await writeFile(join(work, 'project', 'data', 'a.txt'), 'alpha\n');
    await writeFile(join(work, 'project', 'data', 'b.log'), 'bravo\n');
    await writeFile(join(work, 'project', 'data', 'sub', 'c.txt'), 'charlie\n');
    await symlink('a.txt', join(work, 'project', 'data', 'link'));
  });
  after(async () => {
    await troupe.close();
    await rm(work, { recursive: true, force: true });
  });

  const run = async (name: string, spec: string) => {
    const created = await troupe.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return troupe.startAndWait(name);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const outputs = async (name: string, dagRunId: string) => (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/outputs`)).body.outputs;
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;
  /** A step of the archive executor: `config` lines at the config's indentation. */
  const archiveStep = (name: string, command: string, ...config: string[]) =>
    [`  - name: ${name}`, `    id: ${name}`, '    executor:', '      type: archive', '      config:', ...config.map((line) => `        ${line}`), `    command: ${command}`];
  /** Steps that tolerate the failure of `step` and print its exit code as the log of `<step>_code`. */
  const exitCodeOf = (step: string) => ['    continueOn: {failure: true}', `  - name: ${step}_code`, `    command: echo "\${${step}.exitCode}"`];

  for (const format of ['tar', 'tar.gz', 'zip'] as const) {
    test(`${format}: create from the working folder, list with the output captured, extract: the files come back as they were`, async () => {
      const name = `archive_roundtrip_${format.replace('.', '_')}`;
      const spec = [
        `workingDir: ${join(work, 'project')}`,
        'steps:',
        ...archiveStep('make', 'create', 'source: data', `destination: out/data.${format}`, 'verifyIntegrity: true'),
        '    output: MADE',
        ...archiveStep('show', 'list', `source: out/data.${format}`),
        '    output: LISTING',
        ...archiveStep('unpack', 'extract', `source: out/data.${format}`, `destination: ${join(work, `unpacked-${format}`)}`),
        '    output: UNPACKED',
      ].join('\n');
      const dagRun = await run(name, spec);
      assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
      const { made, listing, unpacked } = await outputs(name, dagRun.dagRunId);
      const madeResult = JSON.parse(made);
      assert.deepEqual({ ...madeResult, duration: undefined }, { operation: 'create', source: 'data', destination: `out/data.${format}`, filesAdded: 4, bytesArchived: 20, duration: undefined, verifyPerformed: true });
      const list = JSON.parse(listing);
      assert.deepEqual(Object.keys(list), ['operation', 'source', 'totalFiles', 'totalSize', 'files', 'verified', 'duration']);
      assert.deepEqual(list.files.map((file: any) => [file.path, file.isDir]).sort(), [
        ['data', true], ['data/a.txt', false], ['data/b.log', false], ['data/link', false], ['data/sub', true], ['data/sub/c.txt', false],
      ]);
      const entry = list.files.find((file: any) => file.path === 'data/a.txt');
      assert.equal(entry.size, 6);
      assert.equal(entry.mode, '-rw-r--r--');
      assert.match(entry.modTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      assert.equal(list.files.find((file: any) => file.path === 'data/link').mode, 'Lrwxrwxrwx');
      assert.equal(JSON.parse(unpacked).filesExtracted, 4);
      const root = join(work, `unpacked-${format}`, 'data');
      assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), 'alpha\n');
      assert.equal(await readFile(join(root, 'sub', 'c.txt'), 'utf8'), 'charlie\n');
      assert.equal(await readlink(join(root, 'link')), 'a.txt');
    });
  }

  test('include globs choose the entries created, listed and extracted; the step\'s dir is the working folder', async () => {
    const name = 'archive_include';
    const spec = [
      'steps:',
      ...archiveStep('make', 'create', 'source: data', 'destination: texts.zip', 'include: ["data", "**/*.txt"]'),
      `    dir: ${join(work, 'project')}`,
      ...archiveStep('show', 'list', `source: ${join(work, 'project', 'texts.zip')}`, 'include: ["data/sub/**"]'),
      '    output: LISTING',
      ...archiveStep('unpack', 'extract', `source: ${join(work, 'project', 'data.tar.gz')}`, `destination: ${join(work, 'only-logs')}`, 'include: ["*/*.log"]'),
      '    output: UNPACKED',
      'type: graph',
    ].join('\n');
    // The tar.gz to extract from, made by the executor in a step of its own first.
    const prepared = await run('archive_include_source', ['steps:', ...archiveStep('make', 'create', `source: ${join(work, 'project', 'data')}`, `destination: ${join(work, 'project', 'data.tar.gz')}`)].join('\n'));
    assert.equal(prepared.status, 4, JSON.stringify(prepared.nodes.map((n: any) => n.error)));
    const dagRun = await run(name, spec);
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));
    const { listing, unpacked } = await outputs(name, dagRun.dagRunId);
    assert.deepEqual(JSON.parse(listing).files.map((file: any) => file.path), ['data/sub/c.txt']);
    const extracted = JSON.parse(unpacked);
    assert.deepEqual([extracted.filesExtracted, extracted.filesSkipped], [1, 5]);
    assert.equal(await readFile(join(work, 'only-logs', 'data', 'b.log'), 'utf8'), 'bravo\n');
    assert.equal(existsSync(join(work, 'only-logs', 'data', 'a.txt')), false);
  });

  test('zip-slip and tar-slip: an entry with .., an absolute path or a symlink out is refused, naming it; nothing is written outside', async () => {
    const slip = join(work, 'slip');
    await mkdir(join(slip, 'outside'), { recursive: true });
    await writeFile(join(slip, 'dotdot.zip'), await craftedZip('../evil-zip.txt', 'evil'));
    await writeFile(join(slip, 'dotdot.tar'), craftedTar([{ path: 'fine.txt', type: 'File', data: 'fine' }, { path: '../evil-tar.txt', type: 'File', data: 'evil' }]));
    await writeFile(join(slip, 'absolute.tar.gz'), gzipSync(craftedTar([{ path: join(slip, 'evil-absolute.txt'), type: 'File', data: 'evil' }])));
    await writeFile(join(slip, 'symlink.tar'), craftedTar([{ path: 'up', type: 'SymbolicLink', linkpath: '../outside' }, { path: 'up/evil-link.txt', type: 'File', data: 'evil' }]));
    await writeFile(join(slip, 'chain.tar'), craftedTar([
      { path: 'here', type: 'SymbolicLink', linkpath: '.' },
      { path: 'here/parent', type: 'SymbolicLink', linkpath: '..' },
      { path: 'here/parent/outside/evil-chain.txt', type: 'File', data: 'evil' },
    ]));
    // A symlink already in the destination, pointing out: an entry is not written through it.
    await mkdir(join(slip, 'dest-planted'));
    await symlink(join(slip, 'outside'), join(slip, 'dest-planted', 'out'));
    await writeFile(join(slip, 'planted.tar'), craftedTar([{ path: 'out/evil-planted.txt', type: 'File', data: 'evil' }]));
    const cases: Array<[string, string, string]> = [
      ['dotdot_zip', 'dotdot.zip', 'entry "../evil-zip.txt" points outside the destination'],
      ['dotdot_tar', 'dotdot.tar', 'entry "../evil-tar.txt" points outside the destination'],
      ['absolute', 'absolute.tar.gz', `entry "${join(slip, 'evil-absolute.txt')}" has an absolute path`],
      ['symlink', 'symlink.tar', 'symlink "up" points outside the destination ("../outside")'],
      ['chain', 'chain.tar', 'symlink "here/parent" points outside the destination ("..")'],
    ];
    const spec = [
      'type: graph',
      `workingDir: ${slip}`,
      'steps:',
      ...cases.flatMap(([step, source]) => [...archiveStep(step, 'extract', `source: ${source}`, `destination: dest-${step}`), ...exitCodeOf(step)]),
      ...archiveStep('planted', 'extract', 'source: planted.tar', 'destination: dest-planted'),
      ...exitCodeOf('planted'),
    ].join('\n');
    const dagRun = await run('archive_slip', spec);
    for (const [step, , reason] of cases) {
      const refused = node(dagRun, step);
      assert.equal(refused.statusLabel, 'failed', step);
      assert.ok(refused.error.startsWith(stepError(step, `archive: extraction failed: ${reason}`)), `${step}: ${refused.error}`);
      assert.equal(stepError(step, await stderrLog('archive_slip', dagRun.dagRunId, step)), refused.error);
      assert.equal(await troupe.stepLog('archive_slip', dagRun.dagRunId, `${step}_code`), '6');
    }
    assert.match(node(dagRun, 'planted').error, /entry "out\/evil-planted\.txt" goes through the symlink out, which leads outside the destination/);
    const outside = ['evil-zip.txt', 'evil-tar.txt', 'evil-absolute.txt', join('outside', 'evil-link.txt'), join('outside', 'evil-chain.txt'), join('outside', 'evil-planted.txt')];
    for (const file of outside) assert.equal(existsSync(join(slip, file)), false, `${file} was written outside`);
    // The entry before the hostile one, inside the destination, was extracted.
    assert.equal(await readFile(join(slip, 'dest-dotdot_tar', 'fine.txt'), 'utf8'), 'fine');
  });

  test('a damaged or truncated archive fails with exit code 12, leaving no damaged file; with verifyIntegrity nothing is extracted; listing a zip without it reads only the directory', async () => {
    const damaged = join(work, 'damaged');
    await mkdir(damaged);
    const zip = await craftedZip('note.txt', 'original text', true);
    zip.write('X', zip.indexOf('original text'), 'latin1');
    await writeFile(join(damaged, 'crc.zip'), zip);
    const good = craftedTar([{ path: 'one.txt', type: 'File', data: 'one' }]);
    await writeFile(join(damaged, 'cut.tar.gz'), gzipSync(good).subarray(0, 20));
    await writeFile(join(damaged, 'short.tar'), craftedTar([{ path: 'big.txt', type: 'File', data: 'y'.repeat(5000) }]).subarray(0, 700));
    const spec = [
      'type: graph',
      `workingDir: ${damaged}`,
      'steps:',
      ...archiveStep('checked', 'extract', 'source: crc.zip', 'destination: checked', 'verifyIntegrity: true'), ...exitCodeOf('checked'),
      ...archiveStep('unchecked', 'extract', 'source: crc.zip', 'destination: unchecked'), ...exitCodeOf('unchecked'),
      ...archiveStep('listed', 'list', 'source: crc.zip'),
      ...archiveStep('verified', 'list', 'source: crc.zip', 'verifyIntegrity: true'), ...exitCodeOf('verified'),
      ...archiveStep('cut', 'list', 'source: cut.tar.gz'), ...exitCodeOf('cut'),
      ...archiveStep('short', 'extract', 'source: short.tar', 'destination: short'), ...exitCodeOf('short'),
    ].join('\n');
    const dagRun = await run('archive_damaged', spec);
    for (const step of ['checked', 'unchecked', 'verified']) {
      assert.equal(node(dagRun, step).error, stepError(step, 'archive: corrupted archive: entry "note.txt": CRC-32 mismatch (the data was changed or damaged)'), step);
      assert.equal(await troupe.stepLog('archive_damaged', dagRun.dagRunId, `${step}_code`), '12');
    }
    assert.equal(existsSync(join(damaged, 'checked')), false);
    // Found damaged at its end, the entry is removed.
    assert.equal(existsSync(join(damaged, 'unchecked', 'note.txt')), false);
    assert.equal(node(dagRun, 'listed').statusLabel, 'succeeded');
    assert.match(node(dagRun, 'cut').error, /^failed to execute step "cut": archive: corrupted archive: zlib: unexpected end of file/);
    // A truncated tar: the entry it cuts short is not left behind.
    assert.equal(node(dagRun, 'short').error, stepError('short', 'archive: corrupted archive: entry "big.txt": 188 of its 5000 bytes in the archive'));
    assert.equal(await troupe.stepLog('archive_damaged', dagRun.dagRunId, 'short_code'), '12');
    assert.equal(existsSync(join(damaged, 'short', 'big.txt')), false);
  });

  test('the format comes from the name; an archive to read with another name is known by its first bytes; a name without a format cannot be created', async () => {
    const formats = join(work, 'formats');
    await mkdir(formats);
    await writeFile(join(formats, 'backup.bin'), gzipSync(craftedTar([{ path: 'inside.txt', type: 'File', data: 'in' }])));
    await writeFile(join(formats, 'plain.txt'), 'not an archive');
    const spec = [
      'type: graph',
      `workingDir: ${formats}`,
      'steps:',
      ...archiveStep('sniffed', 'list', 'source: backup.bin'),
      '    output: SNIFFED',
      ...archiveStep('unknown', 'list', 'source: plain.txt'), ...exitCodeOf('unknown'),
      ...archiveStep('rar', 'create', 'source: plain.txt', 'destination: plain.rar'), ...exitCodeOf('rar'),
      ...archiveStep('missing', 'list', 'source: nowhere.zip'), ...exitCodeOf('missing'),
    ].join('\n');
    const dagRun = await run('archive_formats', spec);
    assert.deepEqual(JSON.parse((await outputs('archive_formats', dagRun.dagRunId)).sniffed).files.map((file: any) => file.path), ['inside.txt']);
    assert.equal(node(dagRun, 'unknown').error, stepError('unknown', `archive: format detection failed: cannot tell the format of ${join(formats, 'plain.txt')}: name it .tar, .tar.gz, .tgz or .zip, or give a tar, tar.gz or zip archive`));
    assert.equal(node(dagRun, 'rar').error, stepError('rar', 'archive: format detection failed: cannot tell the format of plain.rar from its name: use .tar, .tar.gz, .tgz or .zip, or set format'));
    assert.match(node(dagRun, 'missing').error, /^failed to execute step "missing": archive: source not found: ENOENT: no such file or directory/);
    const codes = await Promise.all(['unknown', 'rar', 'missing'].map((step) => troupe.stepLog('archive_formats', dagRun.dagRunId, `${step}_code`)));
    assert.deepEqual(codes, ['5', '5', '3']);
    assert.equal(existsSync(join(formats, 'plain.rar')), false);
  });

  test('a stop ends an extract waiting on a source that never ends (a FIFO): node and run aborted', async () => {
    const fifo = join(work, 'stream.tar');
    execFileSync('mkfifo', [fifo]);
    // A writer that never writes: the reader waits for data, not for a writer.
    const writer = await open(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const spec = ['steps:', ...archiveStep('wait', 'extract', `source: ${fifo}`, `destination: ${join(work, 'from-fifo')}`)].join('\n');
      const created = await troupe.call('POST', '/dags', { name: 'archive_stop', spec });
      assert.equal(created.status, 201, created.text);
      const started = await troupe.call('POST', '/dags/archive_stop/start', {});
      const { dagRunId } = started.body;
      assert.ok(await waitUntil(async () => (await troupe.call('GET', `/dag-runs/archive_stop/${dagRunId}`)).body.dagRun.nodes[0].status === 1));
      assert.equal((await troupe.call('POST', `/dag-runs/archive_stop/${dagRunId}/stop`)).status, 200);
      const dagRun = await troupe.waitForRun('archive_stop', dagRunId);
      assert.deepEqual([dagRun.statusLabel, dagRun.nodes[0].statusLabel], ['aborted', 'aborted']);
    } finally {
      await writer.close();
    }
  });
});


