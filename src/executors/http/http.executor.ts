// The http executor (definition format: http executor): `METHOD URL` sent with undici. A 2xx status succeeds;
// any other fails the step (exit 1) after the response is printed. The body streams to the
// stdout log, after Dagu's status line and headers unless `silent` (and the status is 2xx); with
// `json`, the whole response is printed as one JSON document once its body is in.
import type { StepResult } from '../../core/index.ts';
import type { WorkerTask } from '../protocol.ts';
import { StepOutput } from '../step-output.ts';
import { debugRequest, debugResponse, jsonResult } from './http-json-result.ts';
import { isSuccess, parseHttpStep, responseHead, type HttpRequestSpec } from './http-request.ts';

export async function runHttp(task: WorkerTask): Promise<StepResult> {
  const output = new StepOutput(task);
  const parsed = parseHttpStep(task.command, task.executor.config, task.script);
  if (parsed.kind === 'error') return output.finish({ exitCode: 1, error: parsed.message });
  const failure = await send(parsed.value, output);
  return output.finish(failure);
}

async function send(spec: HttpRequestSpec, output: StepOutput): Promise<{ exitCode: number; error: string } | undefined> {
  // undici is loaded with the first http step: it takes ~100 ms, on every pool thread that loads it.
  const { Agent, request } = await import('undici');
  if (output.stopped) return undefined;
  // The step's own pool of connections: no socket outlives the step or carries its TLS setting
  // over to another step. Header and body timeouts are off: `timeout` bounds the whole request.
  const agent = new Agent({ connect: { rejectUnauthorized: !spec.skipTLSVerify }, headersTimeout: 0, bodyTimeout: 0 });
  const abort = new AbortController();
  const onStop = () => abort.abort(output.signal.reason);
  output.signal.addEventListener('abort', onStop);
  let timedOut = false;
  const timer = spec.timeoutMs > 0 ? setTimeout(() => { timedOut = true; abort.abort(new Error('timeout')); }, spec.timeoutMs) : undefined;
  const target = `${spec.method} ${spec.url.href}`;
  if (spec.debug) output.stderr(debugRequest(spec));
  const sentAt = performance.now();
  try {
    const response = await request(spec.url, {
      method: spec.method as 'GET',
      headers: spec.headers,
      ...(spec.body !== undefined ? { body: spec.body } : {}),
      dispatcher: agent,
      signal: abort.signal,
    });
    const success = isSuccess(response.statusCode);
    // The body is needed whole to decode it (json) or to show it in the debug report; else it streams.
    const body = spec.json || spec.debug ? Buffer.from(await response.body.arrayBuffer()) : undefined;
    if (body !== undefined && spec.debug) output.stderr(debugResponse(response.statusCode, response.statusText, response.headers, body, performance.now() - sentAt));
    if (body !== undefined && spec.json) {
      const printed = jsonResult(response.statusCode, response.headers, body, spec.silent && success);
      // Dagu decodes the body before it looks at the status: a body that is no JSON is the error.
      if (printed.kind === 'error') return { exitCode: 1, error: printed.message };
      output.stdout(printed.value);
    } else {
      // Dagu prints the head of a failed response even when silent: it says why the step failed.
      if (!spec.silent || !success) output.stdout(responseHead(response.statusCode, response.statusText, response.headers));
      if (body !== undefined) output.stdout(body);
      else for await (const chunk of response.body) output.stdout(chunk as Buffer);
    }
    // Dagu's message, then the server's reason phrase: its own word on why.
    return success ? undefined : { exitCode: 1, error: `http status code not 2xx: ${`${response.statusCode} ${response.statusText ?? ''}`.trim()}` };
  } catch (error) {
    if (output.stopped) return undefined;
    if (timedOut) return { exitCode: 1, error: `${target}: timed out after ${spec.timeoutMs / 1000} s (config timeout)` };
    return { exitCode: 1, error: `${target}: ${describe(error)}` };
  } finally {
    clearTimeout(timer);
    output.signal.removeEventListener('abort', onStop);
    await agent.destroy().catch(() => {});
  }
}

/** undici's own message, with its cause's when it wraps one (a TLS or socket error). */
function describe(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}
