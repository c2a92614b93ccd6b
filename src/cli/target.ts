// Where a verb runs: the server named by --server (or TROUPE_SERVER), else the server that owns
// the home (its lock says where it listens), else this process, embedded on the home. Each backend
// is loaded when chosen: the embedded one brings the engine and the store, the other an HTTP
// client, and the verbs that read DAG files alone (validate, dry) load neither.
import { resolveConfig, type ResolvedConfig } from '../config/index.ts';
import { CliError } from './errors.ts';
import type { Backend } from './backend/types.ts';

/** The flags every verb takes. */
export interface CommonOptions {
  home?: string;
  config?: string;
  dags?: string;
  server?: string;
  token?: string;
  json?: boolean;
}

export async function homeConfig(options: CommonOptions): Promise<ResolvedConfig> {
  return resolveConfig({ home: options.home, config: options.config, dags: options.dags }, process.env);
}

export async function openBackend(options: CommonOptions): Promise<Backend> {
  const token = options.token ?? nonEmpty(process.env.TROUPE_TOKEN);
  const named = options.server ?? nonEmpty(process.env.TROUPE_SERVER);
  if (named) return httpBackend(apiBase(named), token);
  const config = await homeConfig(options);
  const { HomeLock } = await import('../home-lock.ts');
  const holder = HomeLock.holder(config.dataDir);
  if (holder?.url) return httpBackend(holder.url, token);
  if (holder) {
    throw new CliError(`the home ${config.home} is in use by troupe process ${holder.pid} on ${holder.host}, which serves no API (a \`troupe scheduler\`, or another command)`,
      'wait for it to end, run `troupe server` instead of `troupe scheduler`, or pass --server URL');
  }
  const { EmbeddedBackend } = await import('./backend/embedded-backend.ts');
  return new EmbeddedBackend(config);
}

async function httpBackend(base: string, token: string | undefined): Promise<Backend> {
  const { HttpBackend } = await import('./backend/http-backend.ts');
  return new HttpBackend(base, token);
}

/** `http://host:8080`, `http://host:8080/` and `http://host:8080/api/v2` all name the same API. */
export function apiBase(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(`--server ${JSON.stringify(server)} is not a URL`, 'give one such as http://127.0.0.1:8080');
  }
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith('/api/v2') ? path : `${path}/api/v2`}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
