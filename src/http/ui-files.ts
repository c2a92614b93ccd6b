// The dashboard's files, as the build wrote them (dist/ui: index.html, assets/ with hashed names,
// a gzipped copy of each): read into memory once at start, a few hundred kilobytes, and served at
// `/` beside the API. A request's path only picks among the files read; it never reaches the file
// system. Any other path without a file extension is a page of the dashboard (a deep link): it
// gets index.html, and the page routes itself.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../core/index.ts';
import { acceptsGzip } from './compressed-answers.ts';
import type { HttpResponse } from './types.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Asset names carry their content's hash: a browser keeps them; index.html it asks for again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/**
 * What the pages may do: load their own scripts and styles, call this server's API (fetch,
 * EventSource), show images of their own or data: URLs; nothing from elsewhere, and no framing by
 * another site.
 */
const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

interface UiFile {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
  cache: string;
}

export class UiFiles {
  private constructor(private readonly files: Map<string, UiFile>) {}

  /** The built dashboard beside the compiled server (dist/ui); undefined when it was not built. */
  static async load(dir = builtDir()): Promise<UiFiles | undefined> {
    if (dir === undefined || !existsSync(join(dir, 'index.html'))) return undefined;
    const files = new Map<string, UiFile>();
    for (const path of await filesBelow(dir)) {
      if (path.endsWith('.gz')) continue;
      const name = `/${relative(dir, path).split(sep).join('/')}`;
      const body = await readFile(path);
      const gzip = existsSync(`${path}.gz`) ? await readFile(`${path}.gz`) : undefined;
      files.set(name, {
        body, gzip,
        type: TYPES[extname(path)] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        cache: name.startsWith('/assets/') ? IMMUTABLE : REVALIDATE,
      });
    }
    return new UiFiles(files);
  }

  /** The answer to a GET or HEAD of `path` (outside the API). */
  answer(path: string, headers: Record<string, string>): HttpResponse {
    const file = this.files.get(path) ?? (isPage(path) ? this.files.get('/index.html') : undefined);
    if (!file) throw new AppError('not_found', `no file ${path} in the dashboard`);
    const common: Record<string, string> = {
      'content-type': file.type, 'cache-control': file.cache, etag: file.etag, vary: 'accept-encoding',
      'x-content-type-options': 'nosniff', ...(file.type.startsWith('text/html') ? PAGE_HEADERS : {}),
    };
    if (headers['if-none-match'] === file.etag) return { status: 304, headers: common };
    const gzipped = file.gzip !== undefined && acceptsGzip(headers['accept-encoding']);
    return { status: 200, headers: gzipped ? { ...common, 'content-encoding': 'gzip' } : common, body: gzipped ? file.gzip : file.body };
  }
}

/** A page's path: no file extension in its last segment (`/dags/etl`, `/runs/etl/0195...`). */
function isPage(path: string): boolean {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return !last.includes('.') && !path.startsWith('/assets/');
}

/** dist/ui beside the compiled server; under tsx (src/http), the build's dist/ui. */
function builtDir(): string | undefined {
  const candidates = [fileURLToPath(new URL('../ui', import.meta.url)), fileURLToPath(new URL('../../dist/ui', import.meta.url))];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

async function filesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...await filesBelow(path));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}
