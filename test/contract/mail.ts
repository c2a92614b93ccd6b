// The mail executor's contract case: a real SMTP server (smtp-server, test/smtp-fixture.ts). What a
// mail step prints is its delivery report, whose `subject:` line carries the text; it fails when
// the server refuses the message (with the text as its answer); it runs on while the server holds
// the message's DATA unanswered.
import { startSmtp } from '../smtp-fixture.ts';
import { stepLines, type ContractCase } from './contract-case.ts';

const mailStep = (to: string, subject: string) =>
  stepLines('executor:', '  type: mail', '  config:', '    from: troupe@example.com', `    to: ${to}`, `    subject: ${JSON.stringify(subject)}`, '    message: contract');

export const mailCase: ContractCase = {
  name: 'mail',
  start: async () => {
    const smtp = await startSmtp();
    return { root: smtp.root().trimEnd(), stop: () => smtp.close() };
  },
  steps: {
    prints: (text) => mailStep('ops@example.com', text),
    fails: (text) => ({ step: mailStep('ops@example.com', `REJECT ${text}`), exitCode: 1 }),
    printsBytes: (bytes) => mailStep('ops@example.com', 'x'.repeat(bytes)),
    waits: () => mailStep('hold@example.com', 'held'),
  },
};
