// How long reading a definition near the 1 MiB body limit holds the event loop: parseDag (what
// validate, create, edit and every start run) over shapes of 1 MiB specs, in process. One JSON
// line; `node --import tsx bench/spec-parse.ts`. Not part of `npm run bench`: no server involved.
import { loadavg } from 'node:os';
import { parseDag } from '../src/definition/index.ts';
import { readYaml } from '../src/definition/yaml-source.ts';
import { MB, nearOneMb } from '../test/near-one-mb.ts';

// As close to the limit as a spec gets (room for a short tail).
const near = (head: string, item: (i: number) => string, tail?: (count: number) => string) => nearOneMb(head, item, tail, MB - 128);

const shapes: Record<string, string> = {
  chain: near('steps:\n', (i) => `  - name: s${i}\n    command: echo ${i}\n`),
  shortSteps: near('steps:\n', (i) => `  - echo ${i}\n`),
  graphLongPath: near('type: graph\nsteps:\n', (i) => `  - name: s${i}\n    command: "true"\n    depends: s${i + 1}\n`, (count) => `  - name: s${count}\n    command: "true"\n`),
  envMap: near('env:\n', (i) => `  K${i}: v\n`, () => 'steps:\n  - echo\n'),
  unknownCalls: near('steps:\n', (i) => `  - call: nosuch${i}\n`),
  unknownFields: near('steps:\n', (i) => `  - command: x\n    bogus${i}: 1\n`),
};

const ROUNDS = 3;
const results: Record<string, unknown> = {};
for (const [name, text] of Object.entries(shapes)) {
  const parse: number[] = [];
  const parseCpu: number[] = [];
  const yaml: number[] = [];
  let outcome = '';
  for (let round = 0; round < ROUNDS; round++) {
    let start = performance.now();
    readYaml(text);
    yaml.push(performance.now() - start);
    // CPU time as well: on a shared machine the wall time also counts the other processes' turns.
    const cpu = process.cpuUsage();
    start = performance.now();
    const result = parseDag(text, { fileName: 'big', baseDir: '/tmp' });
    parse.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    parseCpu.push((used.user + used.system) / 1000);
    outcome = `${result.dag?.steps.length ?? 0} steps, ${result.errors.length} problems`;
  }
  const best = (values: number[]) => Math.round(Math.min(...values));
  results[name] = { parseDagMs: best(parse), parseDagCpuMs: best(parseCpu), readYamlMs: best(yaml), outcome };
}
console.log(JSON.stringify({ workload: 'spec-parse', bytes: MB, bestOf: ROUNDS, loadavg1: Number(loadavg()[0].toFixed(1)), ...results }));
