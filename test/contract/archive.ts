// The archive executor's contract case, on real files in a folder of its own. An archive step
// prints its result as JSON (as Dagu does), so:
// - prints: `create` an archive whose destination is named by the text, which the result names;
// - fails: `list` a source named by the text that does not exist (exit code 3, as Dagu's);
// - printsBytes: `list` an archive with enough entries;
// - waits: `list` a FIFO that a writer holds open and never writes to: only a stop ends it.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { stepLines, type ContractCase } from './contract-case.ts';

let folder = '';

function archiveStep(command: string, ...config: string[]): string {
  return stepLines('executor:', '  type: archive', '  config:', ...config.map((line) => `    ${line}`), `command: ${command}`);
}

/** A tar archive whose listing takes at least `bytes` bytes (each entry prints over 100). */
function archiveOfSize(bytes: number): string {
  const name = `many-${bytes}`;
  const source = join(folder, name);
  mkdirSync(source, { recursive: true });
  for (let index = 0; index * 100 < bytes; index++) writeFileSync(join(source, `entry-${index}.txt`), 'x');
  const archive = join(folder, `${name}.tar`);
  create({ cwd: folder, file: archive, sync: true }, [name]);
  return archive;
}

export const archiveCase: ContractCase = {
  name: 'archive',
  start: async () => {
    folder = mkdtempSync(join(tmpdir(), 'troupe-archive-contract-'));
    mkdirSync(join(folder, 'content'));
    writeFileSync(join(folder, 'content', 'a.txt'), 'a\n');
    // Node has no mkfifo; the FIFO's writer is this process, open for as long as the suite runs.
    execFileSync('mkfifo', [join(folder, 'never.tar')]);
    const writer = openSync(join(folder, 'never.tar'), constants.O_RDWR | constants.O_NONBLOCK);
    return {
      root: '',
      stop: async () => {
        closeSync(writer);
        rmSync(folder, { recursive: true, force: true });
      },
    };
  },
  steps: {
    prints: (text) => archiveStep('create', `source: ${JSON.stringify(join(folder, 'content'))}`, `destination: ${JSON.stringify(join(folder, 'made', `${text}.tar`))}`),
    fails: (text) => ({ step: archiveStep('list', `source: ${JSON.stringify(join(folder, 'missing', `${text}.tar`))}`), exitCode: 3 }),
    printsBytes: (bytes) => archiveStep('list', `source: ${JSON.stringify(archiveOfSize(bytes))}`),
    waits: () => archiveStep('list', `source: ${JSON.stringify(join(folder, 'never.tar'))}`),
  },
};
