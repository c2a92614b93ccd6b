// The archive executor's other Dagu keys, on real files: overwrite (off by default, as in Dagu),
// continueOnError, stripComponents, preservePaths, exclude, dryRun, format, compressionLevel,
// followSymlinks, password and verbose; values read as Dagu reads them; bad values refused at load.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer, stepError } from './helpers.ts';

describe('the archive executor: Dagu\'s other config keys', () => {
  let troupe: TestServer;
  let work: string;

  before(async () => {
    troupe = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'troupe-archive-keys-'));
    await mkdir(join(work, 'data', 'sub'), { recursive: true });
    await writeFile(join(work, 'data', 'a.txt'), 'alpha\n');
    await writeFile(join(work, 'data', 'b.log'), 'bravo\n');
    await writeFile(join(work, 'data', 'sub', 'c.txt'), 'charlie\n');
    await writeFile(join(work, 'data', 'sub', 'big.txt'), Array.from({ length: 20000 }, (_, at) => `line ${at % 97} of the report\n`).join(''));
    await symlink('a.txt', join(work, 'data', 'link'));
  });
  after(async () => {
    await troupe.close();
    await rm(work, { recursive: true, force: true });
  });

  const run = async (name: string, steps: string[]) => {
    const created = await troupe.call('POST', '/dags', { name, spec: [`workingDir: ${work}`, 'steps:', ...steps].join('\n') });
    assert.equal(created.status, 201, created.text);
    return troupe.startAndWait(name);
  };
  const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);
  const result = async (name: string, dagRunId: string, step: string) => JSON.parse(await troupe.stepLog(name, dagRunId, step));
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await troupe.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content;
  const archive = (name: string, command: string, config: string, tolerate = false) =>
    [`  - name: ${name}`, `    id: ${name}`, '    executor:', '      type: archive', `      config: ${config}`, `    command: ${command}`, ...(tolerate ? ['    continueOn: {failure: true}'] : [])];
  /** A step that prints `step`'s exit code as its log (`<step>_code`). */
  const codeOf = (step: string) => [`  - name: ${step}_code`, `    command: echo "\${${step}.exitCode}"`];
  const exitCode = async (name: string, dagRunId: string, step: string) => Number(await troupe.stepLog(name, dagRunId, `${step}_code`));
  const files = async (folder: string): Promise<string[]> => {
    const found: string[] = [];
    const walk = async (at: string, prefix: string) => {
      for (const entry of (await readdir(at, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        found.push(`${prefix}${entry.name}${entry.isDirectory() ? '/' : ''}`);
        if (entry.isDirectory()) await walk(join(at, entry.name), `${prefix}${entry.name}/`);
      }
    };
    await walk(join(work, folder), '');
    return found;
  };

  test('extract refuses an existing file unless overwrite (exit code 4); continueOnError records each refusal and goes on', async () => {
    const dagRun = await run('archive_overwrite', [
      ...archive('pack', 'create', '{source: data, destination: ow/data.tar}'),
      ...archive('first', 'extract', '{source: ow/data.tar, destination: ow/out}'),
      '  - name: change', '    command: echo changed > ow/out/data/a.txt',
      ...archive('again', 'extract', '{source: ow/data.tar, destination: ow/out}', true),
      ...codeOf('again'),
      ...archive('tolerant', 'extract', '{source: ow/data.tar, destination: ow/out, include: ["data/*.txt"], continueOnError: true}'),
      '  - name: after_tolerant', '    command: cat ow/out/data/a.txt',
      ...archive('replace', 'extract', '{source: ow/data.tar, destination: ow/out, Overwrite: "true"}'),
    ]);
    const again = node(dagRun, 'again');
    assert.deepEqual([again.statusLabel, await exitCode('archive_overwrite', dagRun.dagRunId, 'again'), again.error],
      ['failed', 4, stepError('again', 'archive: destination error: destination "ow/out/data/a.txt" exists (overwrite disabled)')]);
    assert.equal(node(dagRun, 'tolerant').statusLabel, 'succeeded', node(dagRun, 'tolerant').error);
    const tolerant = await result('archive_overwrite', dagRun.dagRunId, 'tolerant');
    assert.deepEqual(Object.keys(tolerant), ['operation', 'source', 'destination', 'filesExtracted', 'bytesExtracted', 'filesSkipped', 'duration', 'errors', 'verifyPerformed']);
    assert.deepEqual(tolerant.errors, ['archive: destination error: destination "ow/out/data/a.txt" exists (overwrite disabled)']);
    assert.equal(tolerant.filesExtracted, 0);
    assert.equal(await stderrLog('archive_overwrite', dagRun.dagRunId, 'tolerant'),
      'archive executor warning: continuing after error: archive: destination error: destination "ow/out/data/a.txt" exists (overwrite disabled)');
    assert.equal(await troupe.stepLog('archive_overwrite', dagRun.dagRunId, 'after_tolerant'), 'changed');
    assert.equal(node(dagRun, 'replace').statusLabel, 'succeeded', node(dagRun, 'replace').error);
    assert.equal(await readFile(join(work, 'ow/out/data/a.txt'), 'utf8'), 'alpha\n');
  });

  test('stripComponents drops leading folders (a file left with no name is skipped, with a warning); preservePaths: false flattens; exclude leaves entries out', async () => {
    const dagRun = await run('archive_paths', [
      ...archive('pack', 'create', '{source: data, destination: paths/data.tar.gz, exclude: ["**/*.log", "data/sub/big.txt"]}'),
      ...archive('show', 'list', '{source: paths/data.tar.gz, exclude: "data/sub/**"}'),
      ...archive('strip1', 'extract', '{source: paths/data.tar.gz, destination: paths/s1, stripComponents: 1}'),
      ...archive('strip2', 'extract', '{source: paths/data.tar.gz, destination: paths/s2, stripcomponents: "2"}'),
      ...archive('flat', 'extract', '{source: paths/data.tar.gz, destination: paths/flat, preservePaths: false, include: ["*.txt"]}'),
    ]);
    for (const step of ['pack', 'show', 'strip1', 'strip2', 'flat']) assert.equal(node(dagRun, step).statusLabel, 'succeeded', node(dagRun, step).error);
    assert.deepEqual((await result('archive_paths', dagRun.dagRunId, 'show')).files.map((file: any) => file.path), ['data', 'data/a.txt', 'data/link']);
    assert.deepEqual(await files('paths/s1'), ['a.txt', 'link', 'sub/', 'sub/c.txt']);
    assert.deepEqual(await files('paths/s2'), ['c.txt']);
    const strip2 = await result('archive_paths', dagRun.dagRunId, 'strip2');
    assert.deepEqual([strip2.filesExtracted, strip2.filesSkipped], [1, 2]);
    assert.equal(await stderrLog('archive_paths', dagRun.dagRunId, 'strip2'), 'archive executor warning: skipping unnamed file in archive\narchive executor warning: skipping unnamed file in archive');
    assert.deepEqual(await files('paths/flat'), ['a.txt', 'c.txt']);
  });

  test('dryRun counts what create and extract would do and writes nothing; create needs no destination then, but a format', async () => {
    const dagRun = await run('archive_dry', [
      ...archive('pack', 'create', '{source: data, destination: dry/data.zip}'),
      ...archive('dry_create', 'create', '{source: data, dryRun: true, format: tar}'),
      ...archive('dry_extract', 'extract', '{source: dry/data.zip, destination: dry/never, dryRun: 1, verifyIntegrity: true}'),
      ...archive('no_format', 'create', '{source: data, dryRun: true}', true),
      ...codeOf('no_format'),
    ]);
    const created = await result('archive_dry', dagRun.dagRunId, 'dry_create');
    assert.deepEqual([created.destination, created.filesAdded, created.verifyPerformed], ['', 5, false]);
    const extracted = await result('archive_dry', dagRun.dagRunId, 'dry_extract');
    assert.deepEqual([extracted.destination, extracted.filesExtracted, extracted.bytesExtracted, extracted.verifyPerformed], ['dry/never', 5, (await stat(join(work, 'data/sub/big.txt'))).size + 6 + 6 + 8, true]);
    assert.ok(!existsSync(join(work, 'dry/never')), 'a dry extract makes no folder');
    assert.deepEqual(await readdir(join(work, 'dry')), ['data.zip']);
    const noFormat = node(dagRun, 'no_format');
    assert.deepEqual([await exitCode('archive_dry', dagRun.dagRunId, 'no_format'), noFormat.error], [5, stepError('no_format', 'archive: format detection failed: could not infer format; specify config.format')]);
  });

  test('format wins over the name; compressionLevel sets gzip\'s level; followSymlinks stores what a link points to; password on a tar is ignored', async () => {
    const dagRun = await run('archive_format', [
      ...archive('zip_named_odd', 'create', '{source: data/sub, destination: fmt/sub.data, format: ZIP}'),
      ...archive('read_odd', 'list', '{source: fmt/sub.data, format: zip, password: secret}'),
      ...archive('fast', 'create', '{source: data/sub, destination: fmt/fast.tgz, compressionLevel: 1}'),
      ...archive('best', 'create', '{source: data/sub, destination: fmt/best.tgz, compressionLevel: "9"}'),
      ...archive('follow', 'create', '{source: data, destination: fmt/follow.tar, followSymlinks: true, verbose: true, include: ["data", "data/link"]}'),
      ...archive('show_follow', 'list', '{source: fmt/follow.tar}'),
    ]);
    for (const step of ['zip_named_odd', 'read_odd', 'fast', 'best', 'follow', 'show_follow']) assert.equal(node(dagRun, step).statusLabel, 'succeeded', node(dagRun, step).error);
    assert.equal((await readFile(join(work, 'fmt/sub.data'))).subarray(0, 2).toString('latin1'), 'PK');
    assert.deepEqual((await result('archive_format', dagRun.dagRunId, 'read_odd')).files.map((file: any) => file.path), ['sub', 'sub/big.txt', 'sub/c.txt']);
    const [fast, best] = await Promise.all([stat(join(work, 'fmt/fast.tgz')), stat(join(work, 'fmt/best.tgz'))]);
    assert.ok(best.size < fast.size, `level 9 (${best.size} bytes) packs tighter than level 1 (${fast.size})`);
    const link = (await result('archive_format', dagRun.dagRunId, 'show_follow')).files.find((file: any) => file.path === 'data/link');
    assert.deepEqual([link.mode.startsWith('-'), link.size], [true, 6]);
    assert.ok((await lstat(join(work, 'data/link'))).isSymbolicLink());
  });

  test('values Dagu cannot use are refused when the definition is saved; an invalid glob fails the step with exit code 2', async () => {
    const refused = await troupe.call('POST', '/dags', { name: 'archive_bad_keys', spec: ['steps:',
      ...archive('a', 'extract', '{source: x.tar, stripComponents: -1, overwrite: maybe, format: tar.xz, compressionLevel: 12}'),
      ...archive('b', 'create', '{source: x, destination: y.tar, password: secret, exclude: {a: 1}}'),
    ].join('\n') });
    assert.equal(refused.status, 400, refused.text);
    for (const expected of [/stripComponents.*must be at least 0/, /overwrite.*must be true or false/, /format.*must be tar, tar\.gz \(or tgz\) or zip/,
      /compressionLevel.*must be between -1 and 9/, /password.*only for extract and list/, /exclude.*must be a string or a list of strings/]) {
      assert.match(refused.body.message, expected);
    }
    const dagRun = await run('archive_bad_glob', [...archive('glob', 'list', '{source: data.tar, exclude: ["[a-"]}', true), ...codeOf('glob')]);
    const glob = node(dagRun, 'glob');
    assert.deepEqual([await exitCode('archive_bad_glob', dagRun.dagRunId, 'glob'), glob.error], [2, stepError('glob', 'archive: configuration error: invalid glob pattern "[a-"')]);
  });
});
