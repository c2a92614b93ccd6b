// What a mail step sends and through which server, read from the step's config (its `${VAR}`s
// already expanded) and the DAG's root `smtp`. Pure: the checks a definition cannot make before the
// run (an empty recipient after expansion, a content type) are made here, each with its message.
import { isAbsolute, resolve } from 'node:path';
import type { SmtpSpec } from '../../core/index.ts';

export interface MailMessageSpec {
  from?: string;
  to: string[];
  subject: string;
  message: string;
  html: boolean;
  /** Absolute paths. */
  attachments: string[];
}

export interface SmtpServer {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/**
 * Without a port the server is reached on 587, the submission port (where STARTTLS and AUTH are
 * the rule); port 465 speaks TLS from the first byte (implicit TLS), every other port starts in
 * clear and upgrades with STARTTLS when the server offers it.
 */
export const DEFAULT_SMTP_PORT = 587;

export const CONTENT_TYPES = ['text/plain', 'text/html'] as const;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export function readMailConfig(config: Record<string, unknown>, workingDir: string): Parsed<MailMessageSpec> {
  const to = recipients(config.to);
  if (to === undefined) return { ok: false, error: 'config.to must be an address or a list of addresses' };
  if (to.length === 0) return { ok: false, error: 'no recipient: config.to is empty' };
  for (const key of ['from', 'subject', 'message', 'contentType'] as const) {
    const value = config[key];
    if (value !== undefined && value !== null && typeof value !== 'string') return { ok: false, error: `config.${key} must be a string` };
  }
  const contentType = ((config.contentType as string | undefined) ?? 'text/plain').trim().toLowerCase();
  if (!(CONTENT_TYPES as readonly string[]).includes(contentType)) {
    return { ok: false, error: `config.contentType "${contentType}" is not supported: use ${CONTENT_TYPES.join(' or ')}` };
  }
  const attachments = config.attachments ?? [];
  if (!Array.isArray(attachments) || attachments.some((path) => typeof path !== 'string' || path.trim() === '')) {
    return { ok: false, error: 'config.attachments must be a list of file paths' };
  }
  const from = (config.from as string | undefined)?.trim();
  return {
    ok: true,
    value: {
      ...(from ? { from } : {}),
      to,
      subject: (config.subject as string | undefined) ?? '',
      message: (config.message as string | undefined) ?? '',
      html: contentType === 'text/html',
      attachments: (attachments as string[]).map((path) => isAbsolute(path) ? path : resolve(workingDir, path)),
    },
  };
}

/** `to` as Dagu takes it: one address, or a list; blank entries (an unset variable) are dropped. */
function recipients(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== 'string')) return undefined;
  return (list as string[]).map((entry) => entry.trim()).filter((entry) => entry !== '');
}

export function readSmtpServer(smtp: SmtpSpec | undefined): Parsed<SmtpServer> {
  const host = smtp?.host?.trim();
  if (!host) return { ok: false, error: 'no SMTP server: the DAG\'s smtp.host is not set' };
  const port = smtp?.port?.trim() ? Number(smtp.port) : DEFAULT_SMTP_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, error: `smtp.port "${smtp?.port}" is not a port number` };
  return {
    ok: true,
    value: {
      host, port,
      ...(smtp?.username ? { username: smtp.username } : {}),
      ...(smtp?.password ? { password: smtp.password } : {}),
    },
  };
}
