// One message through nodemailer's SMTP transport, with bounded waits and an abort signal: the
// send ends in a result (accepted) or an error carrying the server's own answer, never hangs.
import type { MailMessageSpec, SmtpServer } from './mail-config.ts';

/**
 * Waits in ms: for the TCP connection, for the server's greeting, and for any reply after that (a
 * server may take its time to accept a large message: RFC 5321 allows minutes).
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 120_000 } as const;

export interface Delivery {
  accepted: string[];
  rejected: Array<{ recipient: string; response: string }>;
  messageId: string;
  response: string;
}

export type SendOutcome = { kind: 'sent'; delivery: Delivery } | { kind: 'failed'; message: string } | { kind: 'aborted' };

export async function sendMail(server: SmtpServer, mail: MailMessageSpec, signal: AbortSignal): Promise<SendOutcome> {
  // Loaded by the first mail of a worker thread, not with every thread.
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host: server.host,
    port: server.port,
    // 465 is TLS from the start; any other port upgrades with STARTTLS when the server offers it.
    // The server's certificate is verified (Node's CAs and NODE_EXTRA_CA_CERTS): a mail password
    // never goes to a server that could be anyone.
    secure: server.port === 465,
    ...(server.username !== undefined ? { auth: { user: server.username, pass: server.password ?? '' } } : {}),
    ...SMTP_TIMEOUTS,
    // A stop must not wait for a server that does not close its side.
    socketCloseTimeout: 0,
    logger: false,
  });
  try {
    const info = await transport.sendMail({
      ...(mail.from !== undefined ? { from: mail.from } : {}),
      to: mail.to,
      subject: mail.subject,
      ...(mail.html ? { html: mail.message } : { text: mail.message }),
      attachments: mail.attachments.map((path) => ({ path })),
      signal,
    });
    return {
      kind: 'sent',
      delivery: {
        accepted: info.accepted.map(String),
        rejected: (info.rejectedErrors ?? []).map((error) => ({ recipient: error.recipient ?? '', response: error.response ?? error.message })),
        messageId: info.messageId,
        response: info.response,
      },
    };
  } catch (error) {
    if (signal.aborted) return { kind: 'aborted' };
    return { kind: 'failed', message: describe(error as Error & { response?: string; rejectedErrors?: Error[] }) };
  } finally {
    transport.close();
  }
}

/** nodemailer's message names the command and usually quotes the reply; the reply is added when it does not. */
function describe(error: Error & { response?: string; rejectedErrors?: Array<Error & { response?: string }> }): string {
  const details = (error.rejectedErrors ?? []).map((rejected) => rejected.response ?? rejected.message);
  const parts = [error.message, ...details.filter((detail) => !error.message.includes(detail))];
  if (error.response && !parts.some((part) => part.includes(error.response!))) parts.push(`server said: ${error.response}`);
  return parts.join('; ');
}
