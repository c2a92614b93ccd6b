// Which registryAuths entry (definition format: root fields) a pull of an image uses: the one for the
// registry host the image reference names. The daemon receives it as the X-Registry-Auth header.

export type RegistryAuths = Record<string, { username?: string; password?: string }>;

export interface PullAuth {
  username: string;
  password: string;
  serveraddress: string;
}

/** Names under which Docker Hub is written; an image without a registry host is pulled from it. */
const DOCKER_HUB = ['docker.io', 'index.docker.io', 'registry-1.docker.io', 'https://index.docker.io/v1/'];

/**
 * The registry host of an image reference: its first component when that looks like a host (has a
 * dot or a port, or is localhost), else Docker Hub. `registry.local:5000/team/app:1.2` names
 * `registry.local:5000`; `alpine:3` and `team/app` name `docker.io`.
 */
export function registryHost(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return 'docker.io';
  const first = image.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : 'docker.io';
}

/** A key of registryAuths as a bare host: a scheme and a path (`https://host/v1/`) are dropped. */
function hostOf(key: string): string {
  return key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
}

/** The credentials for pulling `image`, or undefined when no entry names its registry. */
export function authFor(image: string, auths: RegistryAuths | undefined): PullAuth | undefined {
  if (!auths) return undefined;
  const host = registryHost(image);
  const hub = host === 'docker.io';
  for (const [key, credentials] of Object.entries(auths)) {
    const matches = hub ? DOCKER_HUB.includes(key) || DOCKER_HUB.includes(hostOf(key)) : hostOf(key) === host;
    if (!matches) continue;
    return { username: credentials.username ?? '', password: credentials.password ?? '', serveraddress: hub ? 'https://index.docker.io/v1/' : host };
  }
  return undefined;
}
