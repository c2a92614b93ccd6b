// The jq executor (definition format: jq executor): `command` is the filter, `script` the input JSON. Results
// go one per line to the step's stdout log, as indented JSON with sorted keys, or raw with
// `config.raw`. jq itself runs on this pool worker's jq thread (jq-runner.ts).
import { constants as osConstants } from 'node:os';
import { createMasker, type StepResult } from '../../core/index.ts';
import type { ControlMessage, WorkerTask } from '../protocol.ts';
import { JqRunner, type JqOutcome } from './jq-runner.ts';
import { appendToLogs } from '../step-output.ts';
import { weakBoolean } from '../../core/index.ts';

const runner = new JqRunner();

export async function runJq(task: WorkerTask): Promise<StepResult> {
  const input = task.script ?? '';
  // jq reads no input from a blank script and prints nothing: Dagu fails such a step, and so do we.
  if (input.trim() === '') return failed(task, 'jq: no input: the step\'s script holds the input JSON');
  // `raw` as Dagu's decoder reads it: "true", 1...
  const raw = weakBoolean(task.executor.config.raw);
  if (!raw.ok) return failed(task, `jq: config: raw ${raw.message}`);
  const filter = task.command ?? '';
  if (filter.trim() === '') return withoutQuery(task, input);
  const job = runner.run({ input, filter, raw: raw.value });
  let stopSignal: string | undefined;
  const onControl = (message: ControlMessage) => {
    if (message.type !== 'stop') return;
    stopSignal ??= message.signal;
    job.stop();
  };
  task.port.on('message', onControl);
  let outcome: JqOutcome;
  try {
    outcome = await job.outcome;
  } finally {
    task.port.off('message', onControl);
  }
  if (outcome.kind === 'stopped') {
    const signal = stopSignal ?? 'SIGTERM';
    return { kind: 'ok', exitCode: 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0), signal, error: `signal: ${signal}` };
  }
  if (outcome.kind === 'error') return failed(task, outcome.message);
  const mask = masker(task);
  const text = mask(outcome.stdout === '' ? '' : `${outcome.stdout}\n`);
  // A jq that printed nothing still has its stdout log, as Dagu's steps do; an empty file that
  // cannot be made loses nothing.
  const written = await appendToLogs([task.stdoutPath, task.stdoutCopy], text, true);
  const lost = text === '' ? undefined : written;
  if (lost) return { kind: 'ok', exitCode: 0, error: lost };
  if (Buffer.byteLength(text) > task.maxOutputSize) return { kind: 'ok', exitCode: 0, error: `output exceeded maxOutputSize (${task.maxOutputSize} bytes)` };
  return task.captureOutput ? { kind: 'ok', exitCode: 0, output: text.trim() } : { kind: 'ok', exitCode: 0 };
}

/**
 * A step with no query, as Dagu runs one: its input must still be one JSON document, then nothing
 * is printed and the step succeeds, with gojq's complaint on stderr as its only trace.
 */
async function withoutQuery(task: WorkerTask, input: string): Promise<StepResult> {
  try {
    JSON.parse(input);
  } catch (error) {
    return failed(task, `jq: the input is not one JSON document: ${(error as Error).message}`);
  }
  await appendToLogs([task.stdoutPath], '', true);
  const lost = await appendToLogs([task.stderrPath, task.stderrCopy], 'failed to run jq query: missing query (try ".")\n');
  return lost ? { kind: 'ok', exitCode: 0, error: lost } : { kind: 'ok', exitCode: 0 };
}

/** jq's message goes to the step's stderr log and becomes the step's error. */
async function failed(task: WorkerTask, message: string): Promise<StepResult> {
  const masked = masker(task)(message);
  await appendToLogs([task.stdoutPath], '', true);
  await appendToLogs([task.stderrPath, task.stderrCopy], `${masked}\n`);
  return { kind: 'ok', exitCode: 1, error: masked };
}

function masker(task: WorkerTask): (text: string) => string {
  return task.secrets.length > 0 ? createMasker(task.secrets) : (text) => text;
}

