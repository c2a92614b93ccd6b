// HTTPS settings, with Dagu's keys: `tls: {certFile, keyFile}` in config.yaml, TROUPE_CERT_FILE and
// TROUPE_KEY_FILE (Dagu's DAGU_CERT_FILE, DAGU_KEY_FILE) over them, one key at a time.
import { resolve } from 'node:path';
import { AppError } from '../core/index.ts';
import type { TlsConfig } from './settings.ts';

export interface TlsKeys {
  certFile?: string;
  keyFile?: string;
}

const KEYS = new Map<string, keyof TlsKeys>([['certfile', 'certFile'], ['keyfile', 'keyFile']]);

/**
 * config.yaml's `tls` map. `caFile` is read by Dagu 1.30.2 and used by none of its servers: it is
 * reported among the keys troupe does not use, as any other key of the map.
 */
export function tlsFileKeys(value: unknown, path: string, ignored: string[]): TlsKeys {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new AppError('bad_request', `config file ${path}: tls must be a map with certFile and keyFile`);
  const keys: TlsKeys = {};
  for (const [given, file] of Object.entries(value as Record<string, unknown>)) {
    // Dagu reads its config through viper, whose keys ignore case.
    const key = KEYS.get(given.toLowerCase());
    if (!key) {
      ignored.push(`tls.${given}`);
      continue;
    }
    if (file === null || file === undefined || file === '') continue;
    if (typeof file !== 'string') throw new AppError('bad_request', `config file ${path}: tls.${key} must be a file path`);
    keys[key] = file;
  }
  return keys;
}

/** Both files or neither; paths relative to the directory troupe starts in, as Dagu reads them. */
export function resolveTls(fromFile: TlsKeys, env: Record<string, string | undefined>): TlsConfig | undefined {
  const certFile = env.TROUPE_CERT_FILE || fromFile.certFile;
  const keyFile = env.TROUPE_KEY_FILE || fromFile.keyFile;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    throw new AppError('bad_request', `HTTPS needs both tls.certFile (TROUPE_CERT_FILE) and tls.keyFile (TROUPE_KEY_FILE); only ${certFile ? 'certFile' : 'keyFile'} is set`);
  }
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) };
}
