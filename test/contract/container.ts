// The container executor in the contract suite, twice: steps in new containers (`executor: docker`,
// definition format: container executor), and steps run by exec in the DAG-level container. Each case starts
// its own Docker engine (test/support/docker-engine.ts) before the server, which reads DOCKER_HOST.
import { BUSYBOX, startDockerEngine } from '../support/docker-engine.ts';
import { stepLines, type ContractCase } from './contract-case.ts';

async function engineFor(root: string): Promise<{ root: string; stop(): Promise<void> }> {
  const engine = await startDockerEngine();
  process.env.DOCKER_HOST = engine.host;
  return { root, stop: () => engine.stop() };
}

/** A step in a new container; the command runs through sh in it, as on the host. */
const inNewContainer = (command: string) => stepLines('executor:', '  type: docker', '  config:', `    image: ${BUSYBOX}`, `command: ${command}`);

const steps = (body: (command: string) => string): ContractCase['steps'] => ({
  prints: (text) => body(`echo "${text}"`),
  fails: (text) => ({ step: body(`echo "${text}" >&2; exit 3`), exitCode: 3 }),
  printsBytes: (bytes) => body(`head -c ${bytes} /dev/zero | tr '\\0' x`),
  waits: () => body('sleep 60'),
});

export const containerCase: ContractCase = {
  name: 'container',
  start: () => engineFor(''),
  steps: steps(inNewContainer),
};

export const dagContainerCase: ContractCase = {
  name: 'dag-container',
  start: () => engineFor(['container:', `  image: ${BUSYBOX}`].join('\n')),
  steps: steps((command) => stepLines(`command: ${command}`)),
};
