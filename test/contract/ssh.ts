// The ssh executor's contract case: every DAG of the suite gets a DAG-level ssh to a real sshd on a
// loopback port (test/sshd.ts), so its plain command steps run on that host.
import { sshdMissing, startSshd } from '../sshd.ts';
import { stepLines, type ContractCase } from './contract-case.ts';

export const sshCase: ContractCase = {
  name: 'ssh',
  async start() {
    const missing = sshdMissing();
    if (missing) throw new Error(missing);
    const sshd = await startSshd();
    const root = [
      'ssh:',
      '  user: root',
      '  host: 127.0.0.1',
      `  port: "${sshd.port}"`,
      `  key: ${sshd.clientKey}`,
      `  knownHostFile: ${sshd.knownHosts}`,
    ].join('\n');
    return { root, stop: () => sshd.stop() };
  },
  steps: {
    prints: (text) => stepLines(`command: echo "${text}"`),
    fails: (text) => ({ step: stepLines(`command: echo "${text}" >&2; exit 3`), exitCode: 3 }),
    printsBytes: (bytes) => stepLines(`command: head -c ${bytes} /dev/zero | tr '\\0' x`),
    waits: () => stepLines('command: sleep 60'),
  },
};
