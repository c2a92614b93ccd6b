// Checks a server's host key against OpenSSH's known_hosts format (sshd(8) "SSH_KNOWN_HOSTS FILE
// FORMAT"): plain and hashed (`|1|salt|hash`) host names, patterns with * and ?, negated patterns,
// `[host]:port` for ports other than 22, and @revoked keys. @cert-authority lines are skipped: host
// certificates are not supported. Pure: the caller reads the file.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type HostKeyVerdict = { kind: 'known' } | { kind: 'unknown' | 'mismatch' | 'revoked'; message: string };

interface Entry {
  marker?: string;
  hosts: string;
  key: Buffer;
  line: number;
}

/**
 * `key`: the host key blob the server sent (SSH wire format). `file` names the file in messages.
 * A host with a matching key is known; one listed with other keys only is a mismatch, as OpenSSH
 * refuses it ("REMOTE HOST IDENTIFICATION HAS CHANGED").
 */
export function checkHostKey(text: string, file: string, host: string, port: number, key: Buffer): HostKeyVerdict {
  // OpenSSH looks host names up in lower case, hashed ones too.
  const lower = host.toLowerCase();
  const name = port === 22 ? lower : `[${lower}]:${port}`;
  const entries = parseEntries(text).filter((entry) => hostMatches(entry.hosts, name));
  const described = `the ${keyType(key)} key of ${name} (${fingerprint(key)})`;
  const revoked = entries.find((entry) => entry.marker === '@revoked' && entry.key.equals(key));
  if (revoked) return { kind: 'revoked', message: `host key verification failed: ${described} is marked revoked in ${file}:${revoked.line}` };
  const listed = entries.filter((entry) => entry.marker === undefined);
  if (listed.some((entry) => entry.key.equals(key))) return { kind: 'known' };
  if (listed.length > 0) {
    const lines = listed.map((entry) => entry.line).join(', ');
    return { kind: 'mismatch', message: `host key verification failed: ${described} does not match the key listed for it in ${file} (line ${lines}); the host key has changed, or another host answers` };
  }
  return { kind: 'unknown', message: `host key verification failed: ${described} is not in ${file}; add it (ssh-keyscan -p ${port} ${host} >> ${file}) or set strictHostKey: false` };
}

/** SHA256:base64 without padding, as ssh-keygen -l prints it. */
export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named at the start of the blob (a length-prefixed string). */
function keyType(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const length = key.readUInt32BE(0);
  return key.subarray(4, 4 + length).toString('latin1');
}

function parseEntries(text: string): Entry[] {
  const entries: Entry[] = [];
  text.split('\n').forEach((raw, index) => {
    const fields = raw.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return;
    const marker = fields[0].startsWith('@') ? fields.shift() : undefined;
    if (marker !== undefined && marker !== '@revoked') return;
    const [hosts, , base64] = fields;
    if (hosts === undefined || base64 === undefined) return;
    const key = Buffer.from(base64, 'base64');
    if (key.length === 0) return;
    entries.push({ ...(marker !== undefined ? { marker } : {}), hosts, key, line: index + 1 });
  });
  return entries;
}

/** Whether `name` (host, or [host]:port) is one of the comma-separated patterns, none negated matching. */
export function hostMatches(hosts: string, name: string): boolean {
  if (hosts.startsWith('|1|')) return hashedMatches(hosts, name);
  let matched = false;
  for (const pattern of hosts.split(',')) {
    const negated = pattern.startsWith('!');
    if (!globMatches(negated ? pattern.slice(1) : pattern, name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** `|1|salt|hash`: HMAC-SHA1 of the name keyed by the salt (ssh-keygen -H). */
function hashedMatches(hosts: string, name: string): boolean {
  const [, , salt, hash] = hosts.split('|');
  if (salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

function globMatches(pattern: string, name: string): boolean {
  const source = pattern.toLowerCase().replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(name);
}
