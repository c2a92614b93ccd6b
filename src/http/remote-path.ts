// The one form of a path that goes to a remote node, fixed before the request is authorized, so
// that the route authorized here is the route the remote serves. A URL parser resolves dot segments
// (`..`, `%2e%2e`), turns `\` into `/` and drops a `#...` tail: left in, each would let a path
// authorized as one route reach another there, or leave the node's `apiBaseURL`.
import { AppError, LOCAL_NODE } from '../core/index.ts';

/** Whether the query names a node other than this one: the path must then be canonical (canonicalRemotePath). */
export function namesRemoteNode(query: string): boolean {
  // No shortcut on the text: a key may come percent-encoded (`remote%4Eode`).
  if (query === '') return false;
  const name = new URLSearchParams(query).get('remoteNode');
  return !!name && name !== LOCAL_NODE;
}

/** What RFC 3986 lets stand unencoded in a path segment; everything else travels percent-encoded. */
const SEGMENT_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;

/**
 * `apiPath` (the path below the API root, as the client sent it) with every segment decoded and
 * encoded again the one way: `%75sers` is `users`, `a b` and `a%20b` are `a%20b`, and an encoded
 * slash stays encoded inside its segment. Refused (400) when a segment is a dot segment, encoded or
 * not, when a segment is empty (`//`), or when its encoding is malformed.
 */
export function canonicalRemotePath(apiPath: string): string {
  if (!apiPath.startsWith('/')) throw refused(apiPath, 'it does not start with /');
  const segments = apiPath.slice(1).split('/');
  // One trailing slash is kept as it came (`/dags/`); an empty segment anywhere else is refused.
  const trailing = segments.length > 1 && segments[segments.length - 1] === '';
  if (trailing) segments.pop();
  const canonical = segments.map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw refused(apiPath, 'a segment is not valid percent-encoding');
    }
    if (decoded === '') throw refused(apiPath, 'it has an empty segment (//)');
    if (decoded === '.' || decoded === '..') throw refused(apiPath, `it has a dot segment (${segment})`);
    return encodeSegment(decoded);
  });
  return `/${canonical.join('/')}${trailing ? '/' : ''}`;
}

function encodeSegment(decoded: string): string {
  let encoded = '';
  for (const char of decoded) encoded += SEGMENT_CHAR.test(char) ? char : encodeURIComponent(char);
  return encoded;
}

function refused(apiPath: string, why: string): AppError {
  const shown = apiPath.length > 200 ? `${apiPath.slice(0, 200)}...` : apiPath;
  return new AppError('bad_request', `path ${JSON.stringify(shown)} is not sent to a remote node: ${why}`);
}

/**
 * `base` (a node's apiBaseURL) joined with a canonical path, checked to stay below it: the parsed
 * URL's origin and path are exactly what was joined, so nothing is resolved away on the way out.
 */
export function urlBelow(base: string, canonicalPath: string, search: string): string {
  const root = new URL(base);
  const basePath = root.pathname.replace(/\/+$/, '');
  const joined = `${base.replace(/\/+$/, '')}${canonicalPath}${search ? `?${search}` : ''}`;
  const parsed = new URL(joined);
  if (parsed.origin !== root.origin || parsed.pathname !== `${basePath}${canonicalPath}`) {
    throw new AppError('bad_request', 'the path would leave the remote node\'s apiBaseURL');
  }
  return joined;
}
