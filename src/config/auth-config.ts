// config.yaml `auth` and `permissions` (Dagu 1.30's keys) and their TROUPE_ variables, into the
// settings of src/auth. Problems name the key, never a value: values here are secrets.
import { AppError } from '../core/index.ts';
import { AUTH_MODES, type AuthMode, type AuthSettings } from '../auth/auth-settings.ts';
import { parseDuration } from '../ops/duration.ts';
import { DEFAULTS } from './settings.ts';

type Env = Record<string, string | undefined>;
type Section = Record<string, unknown>;

const isMap = (value: unknown): value is Section => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The keys of config.yaml read here; others under `auth` are reported as ignored. */
const AUTH_KEYS = new Set(['mode', 'basic', 'token', 'builtin', 'publicPaths', 'oidc']);

export interface AuthFile {
  auth?: unknown;
  permissions?: unknown;
}

/** Settings from the file's `auth` and `permissions`, each overridden by its variable. `ignored`: keys not used. */
export function resolveAuth(file: AuthFile, env: Env, path: string): { settings: AuthSettings; ignored: string[] } {
  const fail = (key: string, problem: string) => new AppError('bad_request', `config file ${path}: ${key}: ${problem}`);
  const auth = section(file.auth, 'auth', fail);
  const ignored = Object.keys(auth).filter((key) => !AUTH_KEYS.has(key)).map((key) => `auth.${key}`);
  const basic = section(auth.basic, 'auth.basic', fail);
  const token = section(auth.token, 'auth.token', fail);
  const builtin = section(auth.builtin, 'auth.builtin', fail);
  const admin = section(builtin.admin, 'auth.builtin.admin', fail);
  const session = section(builtin.token, 'auth.builtin.token', fail);
  const permissions = section(file.permissions, 'permissions', fail);
  const text = (value: unknown, key: string) => {
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') throw fail(key, 'must be a string');
    return String(value);
  };
  const pick = (variable: string, value: unknown, key: string) => defined(env[variable]) ?? text(value, key);

  const mode = pick('TROUPE_AUTH_MODE', auth.mode, 'auth.mode') ?? DEFAULTS.auth.mode;
  if (!(AUTH_MODES as readonly string[]).includes(mode)) throw new AppError('bad_request', `auth.mode must be one of ${AUTH_MODES.join(', ')}, not "${mode}"`);
  const settings: AuthSettings = { mode: mode as AuthMode };

  const basicUser = pick('TROUPE_AUTH_BASIC_USERNAME', basic.username, 'auth.basic.username');
  const basicPassword = pick('TROUPE_AUTH_BASIC_PASSWORD', basic.password, 'auth.basic.password');
  // As Dagu: on when both are set, unless `enabled: false`.
  if (basicUser !== undefined && basicPassword !== undefined && basic.enabled !== false) settings.basic = { username: basicUser, password: basicPassword };
  const tokenValue = pick('TROUPE_AUTH_TOKEN', token.value, 'auth.token.value');
  if (tokenValue !== undefined && token.enabled !== false) settings.token = tokenValue;

  const adminUser = pick('TROUPE_AUTH_ADMIN_USERNAME', admin.username, 'auth.builtin.admin.username');
  const adminPassword = pick('TROUPE_AUTH_ADMIN_PASSWORD', admin.password, 'auth.builtin.admin.password');
  if (adminUser !== undefined || adminPassword !== undefined) settings.admin = { ...(adminUser ? { username: adminUser } : {}), ...(adminPassword ? { password: adminPassword } : {}) };
  const secret = pick('TROUPE_AUTH_TOKEN_SECRET', session.secret, 'auth.builtin.token.secret');
  if (secret !== undefined) settings.tokenSecret = secret;
  const ttl = pick('TROUPE_AUTH_TOKEN_TTL', session.ttl, 'auth.builtin.token.ttl');
  if (ttl !== undefined) {
    const parsed = parseDuration(ttl);
    if ('problem' in parsed) throw new AppError('bad_request', `auth.builtin.token.ttl: ${parsed.problem}`);
    settings.tokenTtlMs = parsed.ms;
  }

  const publicFromEnv = defined(env.TROUPE_AUTH_PUBLIC_PATHS);
  if (publicFromEnv !== undefined) settings.publicPaths = publicFromEnv.split(',').map((entry) => entry.trim()).filter(Boolean);
  else if (auth.publicPaths !== undefined && auth.publicPaths !== null) {
    if (!Array.isArray(auth.publicPaths) || auth.publicPaths.some((entry) => typeof entry !== 'string')) throw fail('auth.publicPaths', 'must be a list of API paths such as /health');
    settings.publicPaths = auth.publicPaths as string[];
  }

  const writeDAGs = flag(env.TROUPE_PERMISSIONS_WRITE_DAGS, permissions.writeDAGs, 'permissions.writeDAGs', fail);
  const runDAGs = flag(env.TROUPE_PERMISSIONS_RUN_DAGS, permissions.runDAGs, 'permissions.runDAGs', fail);
  if (writeDAGs !== undefined || runDAGs !== undefined) {
    settings.permissions = { ...(writeDAGs !== undefined ? { writeDAGs } : {}), ...(runDAGs !== undefined ? { runDAGs } : {}) };
  }
  return { settings, ignored };
}

function section(value: unknown, key: string, fail: (key: string, problem: string) => AppError): Section {
  if (value === undefined || value === null) return {};
  if (!isMap(value)) throw fail(key, 'must be a map');
  return value;
}

function flag(variable: string | undefined, value: unknown, key: string, fail: (key: string, problem: string) => AppError): boolean | undefined {
  const given = defined(variable);
  if (given !== undefined) {
    if (/^(1|true|yes|on)$/i.test(given)) return true;
    if (/^(0|false|no|off)$/i.test(given)) return false;
    throw new AppError('bad_request', `${key}: the variable must be true or false`);
  }
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw fail(key, 'must be true or false');
  return value;
}

function defined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
