import { stepLines, type ContractCase } from './contract-case.ts';

export const shellCase: ContractCase = {
  name: 'shell',
  start: async () => ({ root: '', stop: async () => {} }),
  steps: {
    prints: (text) => stepLines(`command: echo "${text}"`),
    fails: (text) => ({ step: stepLines(`command: echo "${text}" >&2; exit 3`), exitCode: 3 }),
    printsBytes: (bytes) => stepLines(`command: head -c ${bytes} /dev/zero | tr '\\0' x`),
    waits: () => stepLines('command: sleep 60'),
  },
};
