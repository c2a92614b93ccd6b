import { stepLines, type ContractCase } from './contract-case.ts';

export const jqCase: ContractCase = {
  name: 'jq',
  start: async () => ({ root: '', stop: async () => {} }),
  steps: {
    prints: (text) => stepLines('executor:', '  type: jq', '  config:', '    raw: true', 'command: .t', `script: '{"t": "${text}"}'`),
    fails: (text) => ({ step: stepLines('executor: jq', `command: 'error("${text}")'`, `script: '{}'`), exitCode: 1 }),
    printsBytes: (bytes) => stepLines('executor:', '  type: jq', '  config:', '    raw: true', `command: '[range(0; ${bytes})] | map("x") | join("")'`, `script: '{}'`),
    // jq computes until it is stopped: its thread is ended.
    waits: () => stepLines('executor: jq', `command: 'last(range(1e15))'`, `script: '{}'`),
  },
};
