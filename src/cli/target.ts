// Where a verb runs: the server named by --server (or TROUPE_SERVER), else the server that owns
// the home (its lock says where it listens), else this process, embedded on the home.
import { HomeLock } from '../home-lock.ts';
import { resolveConfig, type ResolvedConfig } from '../config/index.ts';
import { CliError } from './errors.ts';
import { EmbeddedBackend } from './backend/embedded-backend.ts';
import { HttpBackend } from './backend/http-backend.ts';
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
  if (named) return new HttpBackend(apiBase(named), token);
  const config = await homeConfig(options);
  const holder = HomeLock.holder(config.dataDir);
  if (holder?.url) return new HttpBackend(holder.url, token);
  if (holder) {
    throw new CliError(`the home ${config.home} is in use by troupe process ${holder.pid} on ${holder.host}, which serves no API (a \`troupe scheduler\`, or another command)`,
      'wait for it to end, run `troupe server` instead of `troupe scheduler`, or pass --server URL');
  }
  return new EmbeddedBackend(config);
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
