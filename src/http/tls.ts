// HTTPS: the certificate and key files are read and checked once, before anything listens, so that
// both carriers refuse a bad pair with the same message. uWebSockets.js reads the files itself and
// says only "App construction failed", naming neither the file nor the reason; node:https gets the
// bytes read here.
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';

/** The PEM files of `tls.certFile` and `tls.keyFile` (config.yaml, TROUPE_CERT_FILE, TROUPE_KEY_FILE). */
export interface TlsConfig {
  /** The server's certificate, followed by its intermediates if any. */
  certFile: string;
  /** Its private key, unencrypted. */
  keyFile: string;
}

/** A pair that was read and found to belong together. */
export interface TlsFiles extends TlsConfig {
  cert: Buffer;
  key: Buffer;
}

/** Why a pair cannot be served; its message names the file and what to do. */
export class TlsError extends Error {}

/** Reads and checks the pair: each file can be read and parsed, the key belongs to the certificate, OpenSSL accepts both. */
export async function loadTls({ certFile, keyFile }: TlsConfig): Promise<TlsFiles> {
  const [cert, key] = await Promise.all([readPem(certFile, 'certificate'), readPem(keyFile, 'key')]);
  attempt(() => createSecureContext({ cert }), (error) => (isPemError(error)
    ? `certificate file ${certFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`
    : `certificate file ${certFile}: ${reason(error)}`));
  attempt(() => createSecureContext({ key }), (error) => (errorCode(error) === 'ERR_OSSL_BAD_DECRYPT'
    ? `key file ${keyFile} holds an encrypted key; troupe takes an unencrypted one (openssl pkey -in KEY -out KEY.plain)`
    : isPemError(error)
      ? `key file ${keyFile} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`
      : `key file ${keyFile}: ${reason(error)}`));
  attempt(() => createSecureContext({ cert, key }), (error) => (errorCode(error) === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH'
    ? `the key in ${keyFile} does not belong to the certificate in ${certFile}`
    : `certificate file ${certFile} with key file ${keyFile}: ${reason(error)}`));
  return { certFile, keyFile, cert, key };
}

async function readPem(path: string, what: 'certificate' | 'key'): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = errorCode(error);
    const why = code === 'ENOENT' ? 'does not exist'
      : code === 'EACCES' ? 'cannot be read by this user (permission denied)'
        : code === 'EISDIR' ? 'is a directory'
          : `cannot be read (${code ?? (error as Error).message})`;
    throw new TlsError(`cannot serve HTTPS: ${what} file ${path} ${why}`);
  }
}

function attempt(check: () => unknown, problem: (error: unknown) => string): void {
  try {
    check();
  } catch (error) {
    throw new TlsError(`cannot serve HTTPS: ${problem(error)}`);
  }
}

/** What OpenSSL says after its "error:0A00018F:SSL routines::" prefix ("ee key too small"). */
function reason(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  return message.replace(/^error:[0-9A-F]+:[^:]*::?/, '');
}

/** Not PEM at all, or PEM of another kind: OpenSSL finds no start line, or no decoder takes the bytes. */
function isPemError(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ERR_OSSL_PEM_NO_START_LINE' || code === 'ERR_OSSL_UNSUPPORTED' || code === 'ERR_OSSL_PEM_BAD_END_LINE' || code === 'ERR_OSSL_PEM_BAD_BASE64_DECODE';
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
