// A real SMTP server (smtp-server) on a loopback port for the mail tests: AUTH LOGIN required, each
// message parsed with mailparser and kept. Recipients whose local part is "nobody" are refused
// with 550; a message whose subject starts with "REJECT " is refused with 554 and the rest of the
// subject; a message to hold@... is held (no answer to its DATA) until the server closes. With
// `tls`, it offers STARTTLS with a certificate made for 127.0.0.1 by openssl.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export const SMTP_USER = 'troupe';
export const SMTP_PASSWORD = 'smtp-Pa55-9c1e77d2';

export interface Received {
  from: string;
  to: string[];
  /** The session had upgraded with STARTTLS. */
  secure: boolean;
  user: string | undefined;
  mail: ParsedMail;
}

export interface SmtpFixture {
  port: number;
  received: Received[];
  /** YAML of the DAG's root `smtp` for this server, at column 0. */
  root(password?: string): string;
  /** The ids of the SMTP sessions currently open. */
  openSessions: Set<string>;
  close(): Promise<void>;
}

export interface SmtpOptions {
  tls?: { key: Buffer; cert: Buffer };
  /** Holds every DATA command open until the server closes. */
  holdData?: boolean;
}

export async function startSmtp(options: SmtpOptions = {}): Promise<SmtpFixture> {
  const received: Received[] = [];
  const openSessions = new Set<string>();
  const held: Array<() => void> = [];
  const server = new SMTPServer({
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { hideSTARTTLS: true, allowInsecureAuth: true }),
    authMethods: ['LOGIN'],
    authOptional: false,
    disabledCommands: [],
    logger: false,
    onConnect(session, callback) {
      openSessions.add(session.id);
      callback();
    },
    onClose(session) {
      openSessions.delete(session.id);
    },
    onAuth(auth, _session, callback) {
      if (auth.method === 'LOGIN' && auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('nobody@')) return callback(Object.assign(new Error(`Mailbox ${address.address} unavailable`), { responseCode: 550 }));
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (options.holdData || session.envelope.rcptTo.some((rcpt) => rcpt.address.startsWith('hold@'))) {
          held.push(() => callback(new Error('closing')));
          return;
        }
        simpleParser(Buffer.concat(chunks)).then((mail) => {
          if (mail.subject?.startsWith('REJECT ')) return callback(Object.assign(new Error(mail.subject.slice('REJECT '.length)), { responseCode: 554 }));
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            secure: session.secure,
            user: session.user as string | undefined,
            mail,
          });
          callback();
        }, callback);
      });
    },
  });
  // A client that goes away mid-session (a stopped step) leaves the server writing to a closed
  // socket: that is the client's doing, not a failure of the test.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port, received, openSessions,
    root: (password = SMTP_PASSWORD) => `smtp:\n  host: 127.0.0.1\n  port: "${port}"\n  username: ${SMTP_USER}\n  password: "${password}"\n`,
    close: async () => {
      for (const release of held) release();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP server that accepts connections and never says a word (an SMTP server that hangs). */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl in a temp folder. */
export async function selfSignedCertificate(): Promise<{ key: Buffer; cert: Buffer; certPath: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-smtp-cert-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: 'ignore' });
  return { key: await readFile(keyPath), cert: await readFile(certPath), certPath, remove: () => rm(dir, { recursive: true, force: true }) };
}
