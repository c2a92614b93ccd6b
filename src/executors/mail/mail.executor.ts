// The mail executor (definition format: mail executor): sends one message through the DAG's root `smtp` server.
// On success the stdout log says who got it (the recipients the server accepted), the subject, the
// Message-ID and the server's final reply; any failure (no server, a missing attachment, a refused
// connection, a refused login, a rejected recipient, a timeout) fails the step with exit code 1 and
// the server's answer as its error and in its stderr log. A stop aborts the SMTP session.
import { constants as osConstants } from 'node:os';
import { stat } from 'node:fs/promises';
import { createMasker, type StepResult } from '../../core/index.ts';
import type { ControlMessage, WorkerTask } from '../protocol.ts';
import { readMailConfig, readSmtpServer, type MailMessageSpec } from './mail-config.ts';
import { sendMail, type Delivery } from './send-mail.ts';
import { appendToLogs } from '../step-output.ts';

export async function runMail(task: WorkerTask): Promise<StepResult> {
  const mask = masker(task);
  const abort = new AbortController();
  let stopSignal: string | undefined;
  const onControl = (message: ControlMessage) => {
    if (message.type !== 'stop') return;
    stopSignal ??= message.signal;
    abort.abort();
  };
  task.port.on('message', onControl);
  try {
    const server = readSmtpServer(task.services?.smtp);
    if (!server.ok) return await failed(task, mask, server.error);
    const mail = readMailConfig(task.executor.config, task.workingDir);
    if (!mail.ok) return await failed(task, mask, mail.error);
    const missing = await missingAttachment(mail.value);
    if (missing !== undefined) return await failed(task, mask, missing);
    if (stopSignal !== undefined) return stopped(stopSignal);
    const outcome = await sendMail(server.value, mail.value, abort.signal);
    if (outcome.kind === 'aborted' || stopSignal !== undefined) return stopped(stopSignal ?? 'SIGTERM');
    if (outcome.kind === 'failed') return await failed(task, mask, outcome.message);
    const text = mask(report(mail.value, outcome.delivery));
    const lost = await appendToLogs([task.stdoutPath, task.stdoutCopy], text);
    // The mail went out; the step still fails, saying its report was lost.
    if (lost) return { kind: 'ok', exitCode: 0, error: lost };
    // Some recipients were refused: the others got the message, and the step still fails, naming them.
    if (outcome.delivery.rejected.length > 0) {
      const refused = outcome.delivery.rejected.map(({ recipient, response }) => `${recipient}: ${response}`).join('; ');
      return await failed(task, mask, `recipient rejected: ${refused}`);
    }
    if (Buffer.byteLength(text) > task.maxOutputSize) return { kind: 'ok', exitCode: 0, error: `output exceeded maxOutputSize (${task.maxOutputSize} bytes)` };
    return task.captureOutput ? { kind: 'ok', exitCode: 0, output: text.trim() } : { kind: 'ok', exitCode: 0 };
  } finally {
    task.port.off('message', onControl);
    // A step that ran has its stdout log, empty when it failed before its report, as a shell step's.
    await appendToLogs([task.stdoutPath], '', true);
  }
}

function report(mail: MailMessageSpec, delivery: Delivery): string {
  const lines = [
    `sent to: ${delivery.accepted.join(', ')}`,
    ...(delivery.rejected.length > 0 ? [`rejected: ${delivery.rejected.map(({ recipient }) => recipient).join(', ')}`] : []),
    `subject: ${mail.subject}`,
    `message-id: ${delivery.messageId}`,
    `server: ${delivery.response}`,
  ];
  return `${lines.join('\n')}\n`;
}

async function missingAttachment(mail: MailMessageSpec): Promise<string | undefined> {
  for (const path of mail.attachments) {
    try {
      if (!(await stat(path)).isFile()) return `attachment ${path} is not a file`;
    } catch (error) {
      return `attachment ${path} cannot be read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`;
    }
  }
  return undefined;
}

function stopped(signal: string): StepResult {
  return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
}

async function failed(task: WorkerTask, mask: (text: string) => string, message: string): Promise<StepResult> {
  const masked = mask(`mail: ${message}`);
  await appendToLogs([task.stderrPath, task.stderrCopy], `${masked}\n`);
  return { kind: 'ok', exitCode: 1, error: masked };
}

/** The step's secrets and the SMTP password (which may be written in the DAG in clear). */
function masker(task: WorkerTask): (text: string) => string {
  const secrets = [...task.secrets, ...(task.services?.smtp?.password ? [task.services.smtp.password] : [])];
  return secrets.length > 0 ? createMasker(secrets) : (text) => text;
}

