// The remote nodes a request may be forwarded to (`remoteNodes:` in config.yaml), in Dagu's keys,
// and their validation. Pure: reading the file and forwarding live elsewhere.
import { AppError } from './errors.ts';

export interface RemoteNode {
  name: string;
  /** The remote's API root, `/api/v2` included (`https://host:8080/api/v2`). */
  apiBaseURL: string;
  isBasicAuth?: boolean;
  basicAuthUsername?: string;
  basicAuthPassword?: string;
  isAuthToken?: boolean;
  authToken?: string;
  /** Accept any certificate of an https remote (self-signed, expired, another host's). */
  skipTLSVerify?: boolean;
}

/** `remoteNode` values that mean "this server", as in Dagu; no remote may take them. */
export const LOCAL_NODE = 'local';

const keys = ['name', 'apiBaseURL', 'isBasicAuth', 'basicAuthUsername', 'basicAuthPassword', 'isAuthToken', 'authToken', 'skipTLSVerify'] as const;
type Key = (typeof keys)[number];
// Dagu reads its config through viper, whose keys ignore case: `apiBaseUrl` and `skipTlsVerify`
// (the spelling of Dagu's `peer` block) configure a node there, so they do here.
const byLowerCase = new Map<string, Key>(keys.map((key) => [key.toLowerCase(), key]));
const booleanKeys = new Set<Key>(['isBasicAuth', 'isAuthToken', 'skipTLSVerify']);

/**
 * The nodes of a `remoteNodes` value, every problem found named by its path in one line
 * (`remoteNodes[1].apiBaseURL: ...; remoteNodes[2]: ...`). Credentials never appear in a message.
 */
export function parseRemoteNodes(value: unknown): RemoteNode[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new AppError('bad_request', 'remoteNodes must be a list of {name, apiBaseURL, ...}');
  const problems: string[] = [];
  const nodes: RemoteNode[] = [];
  const seen = new Set<string>();
  value.forEach((entry, index) => {
    const at = `remoteNodes[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${at} must be a map with name and apiBaseURL`);
      return;
    }
    const node: Record<string, unknown> = {};
    for (const [written, setting] of Object.entries(entry as Record<string, unknown>)) {
      const key = byLowerCase.get(written.toLowerCase());
      if (!key) problems.push(`${at}: unknown key "${written}"`);
      else if (key in node) problems.push(`${at}.${key} is given twice (keys ignore case)`);
      else if (setting !== null && setting !== undefined) node[key] = setting;
    }
    for (const key of keys) {
      const setting = node[key];
      if (setting === undefined) continue;
      if (booleanKeys.has(key) ? typeof setting !== 'boolean' : typeof setting !== 'string') {
        problems.push(`${at}.${key} must be ${booleanKeys.has(key) ? 'true or false' : 'a string'}`);
        delete node[key];
      }
    }
    const found = nodeProblems(node as Partial<RemoteNode>, seen);
    problems.push(...found.map((problem) => `${at}${problem.startsWith('.') ? '' : ': '}${problem}`));
    if (found.length === 0) nodes.push(node as unknown as RemoteNode);
  });
  if (problems.length > 0) throw new AppError('bad_request', problems.join('; '));
  return nodes;
}

function nodeProblems(node: Partial<RemoteNode>, seen: Set<string>): string[] {
  const problems: string[] = [];
  const { name, apiBaseURL } = node;
  if (!name) problems.push('.name is required');
  else if (name === LOCAL_NODE) problems.push(`.name "${LOCAL_NODE}" is reserved: it names this server`);
  else if (seen.has(name)) problems.push(`node "${name}" is configured twice`);
  else seen.add(name);
  if (!apiBaseURL) problems.push('.apiBaseURL is required');
  else problems.push(...urlProblems(apiBaseURL).map((problem) => `.apiBaseURL ${problem}`));
  if (node.isBasicAuth && node.isAuthToken) problems.push('isBasicAuth and isAuthToken are both true: choose one');
  if (node.isBasicAuth && !node.basicAuthUsername) problems.push('.basicAuthUsername is required with isBasicAuth');
  if (node.isAuthToken && !node.authToken) problems.push('.authToken is required with isAuthToken');
  return problems;
}

function urlProblems(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return ['must be an absolute http or https URL'];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [`must be an http or https URL, not ${url.protocol}`];
  // Credentials in the URL would be echoed wherever the URL is: they belong in the auth keys.
  if (url.username || url.password) return ['must not hold credentials: use isBasicAuth with basicAuthUsername and basicAuthPassword'];
  if (url.search || url.hash) return ['must not have a query or fragment'];
  return [];
}

