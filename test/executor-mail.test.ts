// the mail executor and the run notifications, against a real SMTP server
// (smtp-server on a loopback port, AUTH LOGIN required), over the real troupe server via HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedFetch, startTestServer, waitUntil, type TestServer, stepError } from './helpers.ts';
import { startCli, exited } from './cli-process.ts';
import { SMTP_PASSWORD, SMTP_USER, selfSignedCertificate, startSilentServer, startSmtp, type SmtpFixture } from './smtp-fixture.ts';

const node = (dagRun: any, step: string) => dagRun.nodes.find((n: any) => n.step.name === step);

describe('the mail executor', () => {
  let server: TestServer;
  let smtp: SmtpFixture;
  let files: string;
  before(async () => {
    server = await startTestServer();
    smtp = await startSmtp();
    files = await mkdtemp(join(tmpdir(), 'troupe-mail-files-'));
    await mkdir(join(files, 'sub'));
    await writeFile(join(files, 'report.txt'), 'report body\n');
    await writeFile(join(files, 'sub', 'data.csv'), 'a,b\n1,2\n');
  });
  after(async () => {
    await server.close();
    await smtp.close();
    await rm(files, { recursive: true, force: true });
  });

  const run = async (name: string, spec: string) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return server.startAndWait(name);
  };
  const stderrLog = async (name: string, dagRunId: string, step: string) =>
    (await server.call('GET', `/dag-runs/${name}/${dagRunId}/steps/${step}/log?stream=stderr`)).body.content as string;
  const receivedBy = (subject: string) => smtp.received.filter((message) => message.mail.subject === subject);

  test('a mail step delivers to each recipient with its subject, body, content type and attachments (paths relative to the working directory)', async () => {
    const spec = [
      smtp.root(),
      'steps:',
      '  - name: plain',
      `    dir: ${files}`,
      '    executor:',
      '      type: mail',
      '      config:',
      '        from: troupe@example.com',
      '        to: ops@example.com',
      '        subject: nightly ${KIND}',
      '        message: "all good\\nsee attached"',
      '        attachments: [report.txt, sub/data.csv]',
      '    output: SENT',
      '  - name: html',
      '    executor:',
      '      type: mail',
      '      config:',
      '        from: troupe@example.com',
      '        to: [a@example.com, b@example.com]',
      '        subject: html report',
      '        message: "<h1>Report</h1><p>fine</p>"',
      '        contentType: text/html',
      'env:',
      '  - KIND: backup',
    ].join('\n');
    const dagRun = await run('mail_deliver', spec);
    assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes.map((n: any) => n.error)));

    const [plain] = receivedBy('nightly backup');
    assert.ok(plain, 'the plain message arrived');
    assert.deepEqual([plain.from, plain.to, plain.user], ['troupe@example.com', ['ops@example.com'], SMTP_USER]);
    assert.equal(plain.mail.text?.trimEnd(), 'all good\nsee attached');
    assert.equal(plain.mail.html, false);
    assert.deepEqual(plain.mail.attachments.map((a) => [a.filename, a.content.toString()]), [['report.txt', 'report body\n'], ['data.csv', 'a,b\n1,2\n']]);
    const log = await server.stepLog('mail_deliver', dagRun.dagRunId, 'plain');
    assert.match(log, /^sent to: ops@example\.com$/m);
    assert.match(log, /^subject: nightly backup$/m);
    assert.ok(log.includes(`message-id: ${plain.mail.messageId}`), log);
    assert.match(log, /^server: 250 /m);
    const outputs = (await server.call('GET', `/dag-runs/mail_deliver/${dagRun.dagRunId}/outputs`)).body.outputs;
    assert.equal(outputs.sent, log.trim());

    const [html] = receivedBy('html report');
    assert.ok(html, 'the html message arrived');
    assert.deepEqual(html.to, ['a@example.com', 'b@example.com']);
    assert.equal((html.mail.html as string).trimEnd(), '<h1>Report</h1><p>fine</p>');
    assert.equal((html.mail.headers.get('content-type') as { value: string }).value, 'text/html');
    assert.match(await server.stepLog('mail_deliver', dagRun.dagRunId, 'html'), /^sent to: a@example\.com, b@example\.com$/m);
  });

  test('a missing attachment fails the step with a clear error and sends nothing', async () => {
    const spec = [
      smtp.root(),
      'steps:',
      '  - name: send',
      `    dir: ${files}`,
      '    executor:',
      '      type: mail',
      '      config: {from: troupe@example.com, to: ops@example.com, subject: missing attachment, message: x, attachments: [nothere.txt]}',
    ].join('\n');
    const dagRun = await run('mail_missing', spec);
    assert.equal(node(dagRun, 'send').status, 2);
    assert.equal(node(dagRun, 'send').error, stepError('send', `mail: attachment ${join(files, 'nothere.txt')} cannot be read: no such file`));
    assert.match(await stderrLog('mail_missing', dagRun.dagRunId, 'send'), /nothere\.txt cannot be read: no such file/);
    assert.equal(receivedBy('missing attachment').length, 0);
    // It ran, so it has its stdout log, empty, as a failed shell step's.
    const stdout = await stat(node(dagRun, 'send').stdout);
    assert.deepEqual([stdout.isFile(), stdout.size], [true, 0]);
  });

  test('a refused login fails the step with the server\'s answer; the password appears in no log or response', async () => {
    const wrong = 'wrong-Pa55-0b7e4c11';
    const spec = [smtp.root(wrong), 'steps:', '  - name: send', '    executor:', '      type: mail',
      '      config: {from: troupe@example.com, to: ops@example.com, subject: bad login, message: x}'].join('\n');
    const dagRun = await run('mail_auth', spec);
    const send = node(dagRun, 'send');
    assert.equal(send.status, 2);
    assert.match(send.error, /535 Invalid username or password/);
    const stderr = await stderrLog('mail_auth', dagRun.dagRunId, 'send');
    assert.match(stderr, /535 Invalid username or password/);
    const responses = [
      JSON.stringify(dagRun), stderr,
      (await server.call('GET', `/dag-runs/mail_auth/${dagRun.dagRunId}/log`)).text,
      (await server.call('GET', '/dags/mail_auth')).text,
      (await server.call('GET', '/dag-runs?name=mail_auth')).text,
    ];
    for (const text of responses) assert.ok(!text.includes(wrong), `the password leaked: ${text}`);
  });

  test('the smtp password may come from a secret: the mail is sent, and the password is masked wherever the step writes', async () => {
    process.env.MAIL_TEST_SMTP_PASSWORD = SMTP_PASSWORD;
    try {
      const spec = [smtp.root('${SMTP_PASS}'), 'secrets:', '  - name: SMTP_PASS', '    provider: env', '    key: MAIL_TEST_SMTP_PASSWORD',
        'steps:', '  - name: send', '    executor:', '      type: mail',
        '      config: {from: troupe@example.com, to: ops@example.com, subject: "from a secret ${SMTP_PASS}", message: x}', '    output: SENT'].join('\n');
      const dagRun = await run('mail_secret', spec);
      assert.equal(dagRun.status, 4, JSON.stringify(dagRun.nodes[0].error));
      assert.equal(receivedBy(`from a secret ${SMTP_PASSWORD}`).length, 1);
      const log = await server.stepLog('mail_secret', dagRun.dagRunId, 'send');
      assert.match(log, /^subject: from a secret \*{7}$/m);
      const outputs = await server.call('GET', `/dag-runs/mail_secret/${dagRun.dagRunId}/outputs`);
      for (const text of [log, outputs.text, JSON.stringify(dagRun)]) assert.ok(!text.includes(SMTP_PASSWORD), text);
    } finally {
      delete process.env.MAIL_TEST_SMTP_PASSWORD;
    }
  });

  test('a rejected recipient fails the step with the server\'s answer; the accepted ones get the message', async () => {
    const spec = [smtp.root(), 'steps:', '  - name: send', '    executor:', '      type: mail',
      '      config: {from: troupe@example.com, to: [ok@example.com, nobody@example.com], subject: one refused, message: x}',
      '  - name: all',
      '    depends: []',
      '    executor:', '      type: mail',
      '      config: {from: troupe@example.com, to: nobody@example.com, subject: all refused, message: x}',
    ].join('\n');
    const dagRun = await run('mail_rcpt', spec);
    const send = node(dagRun, 'send');
    assert.equal(send.status, 2);
    assert.match(send.error, /nobody@example\.com: 550 Mailbox nobody@example\.com unavailable/);
    assert.deepEqual(receivedBy('one refused').map((message) => message.to), [['ok@example.com']]);
    assert.match(await server.stepLog('mail_rcpt', dagRun.dagRunId, 'send'), /^rejected: nobody@example\.com$/m);
    const all = node(dagRun, 'all');
    assert.equal(all.status, 2);
    assert.match(all.error, /550 Mailbox nobody@example\.com unavailable/);
    assert.equal(receivedBy('all refused').length, 0);
  });

  test('a refused connection and a missing smtp server fail the step with their reason', async () => {
    const closed = await startSilentServer();
    await closed.close();
    const spec = [`smtp:\n  host: 127.0.0.1\n  port: "${closed.port}"`, 'steps:', '  - name: send', '    executor:', '      type: mail',
      '      config: {from: troupe@example.com, to: ops@example.com, subject: refused, message: x}'].join('\n');
    const refused = node(await run('mail_refused', spec), 'send');
    assert.equal(refused.status, 2);
    assert.match(refused.error, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closed.port}`));

    const none = node(await run('mail_no_server', 'steps:\n  - name: send\n    executor:\n      type: mail\n      config: {to: ops@example.com}\n'), 'send');
    assert.equal(none.error, stepError('send', 'mail: no SMTP server: the DAG\'s smtp.host is not set'));
  });

  test('a server that never answers fails the step at the greeting timeout, with nodemailer\'s reason', async () => {
    const silent = await startSilentServer();
    try {
      const spec = [`smtp:\n  host: 127.0.0.1\n  port: "${silent.port}"`, 'steps:', '  - name: send', '    executor:', '      type: mail',
        '      config: {from: troupe@example.com, to: ops@example.com, subject: silent, message: x}'].join('\n');
      const send = node(await run('mail_silent', spec), 'send');
      assert.equal(send.status, 2);
      assert.match(send.error, /Greeting never received/);
    } finally {
      await silent.close();
    }
  });

  test('a stop aborts the sending: the SMTP session is closed and the step is aborted', async () => {
    const holding = await startSmtp({ holdData: true });
    try {
      const spec = [holding.root(), 'steps:', '  - name: send', '    executor:', '      type: mail',
        '      config: {from: troupe@example.com, to: ops@example.com, subject: held, message: x}'].join('\n');
      assert.equal((await server.call('POST', '/dags', { name: 'mail_stop', spec })).status, 201);
      const { dagRunId } = (await server.call('POST', '/dags/mail_stop/start', {})).body;
      assert.ok(await waitUntil(() => holding.openSessions.size === 1), 'the step opened its SMTP session');
      assert.equal((await server.call('POST', `/dag-runs/mail_stop/${dagRunId}/stop`)).status, 200);
      const dagRun = await server.waitForRun('mail_stop', dagRunId);
      assert.equal(dagRun.statusLabel, 'aborted');
      assert.equal(node(dagRun, 'send').statusLabel, 'aborted');
      assert.ok(await waitUntil(() => holding.openSessions.size === 0), 'the SMTP session was closed');
    } finally {
      await holding.close();
    }
  });

  test('a server whose STARTTLS certificate is not trusted is refused before any login', async () => {
    const certificate = await selfSignedCertificate();
    const tlsServer = await startSmtp({ tls: certificate });
    try {
      const spec = [tlsServer.root(), 'steps:', '  - name: send', '    executor:', '      type: mail',
        '      config: {from: troupe@example.com, to: ops@example.com, subject: untrusted, message: x}'].join('\n');
      const send = node(await run('mail_untrusted', spec), 'send');
      assert.equal(send.status, 2);
      assert.match(send.error, /self[- ]signed certificate/);
      assert.equal(tlsServer.received.length, 0);
    } finally {
      await tlsServer.close();
      await certificate.remove();
    }
  });
});

test('with its certificate in NODE_EXTRA_CA_CERTS, a STARTTLS server gets the message over TLS with AUTH LOGIN', async (t) => {
  const certificate = await selfSignedCertificate();
  const tlsServer = await startSmtp({ tls: certificate });
  const home = await mkdtemp(join(tmpdir(), 'troupe-mail-tls-'));
  t.after(async () => {
    await tlsServer.close();
    await certificate.remove();
    await rm(home, { recursive: true, force: true });
  });
  const troupe = await startCli(['--home', home, '--port', '0'], { NODE_EXTRA_CA_CERTS: certificate.certPath });
  t.after(async () => {
    troupe.child.kill('SIGTERM');
    await exited(troupe.child);
  });
  const spec = [tlsServer.root(), 'steps:', '  - name: send', '    executor:', '      type: mail',
    '      config: {from: troupe@example.com, to: ops@example.com, subject: over tls, message: secret stuff}'].join('\n');
  const post = (path: string, body: unknown) => checkedFetch(`${troupe.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal((await post('/dags', { name: 'mail_tls', spec })).status, 201);
  const { dagRunId } = await (await post('/dags/mail_tls/start', {})).json() as { dagRunId: string };
  let dagRun: any;
  assert.ok(await waitUntil(async () => {
    dagRun = (await (await checkedFetch(`${troupe.base}/dag-runs/mail_tls/${dagRunId}`)).json() as any).dagRun;
    return ![0, 1, 5].includes(dagRun.status);
  }, 30_000));
  assert.equal(dagRun.statusLabel, 'succeeded', JSON.stringify(dagRun.nodes[0].error));
  assert.equal(tlsServer.received.length, 1);
  assert.deepEqual([tlsServer.received[0].secure, tlsServer.received[0].user, tlsServer.received[0].mail.text?.trimEnd()], [true, SMTP_USER, 'secret stuff']);
  assert.ok(!JSON.stringify(dagRun).includes(SMTP_PASSWORD));
});

describe('run notifications (mailOn, errorMail, infoMail, mailOnError)', () => {
  let server: TestServer;
  let smtp: SmtpFixture;
  before(async () => {
    server = await startTestServer();
    smtp = await startSmtp();
  });
  after(async () => {
    await server.close();
    await smtp.close();
  });

  const mailRoot = (password?: string) => [
    smtp.root(password).trimEnd(),
    'mailOn:',
    '  failure: true',
    '  success: true',
    'errorMail:',
    '  from: troupe@example.com',
    '  to: [oncall@example.com, lead@example.com]',
    '  prefix: "[ERR]"',
    '  attachLogs: true',
    'infoMail:',
    '  from: troupe@example.com',
    '  to: ${TEAM}',
    '  prefix: "[${STAGE}]"',
    'env:',
    '  - STAGE: INFO',
    '  - TEAM: team@example.com',
  ].join('\n');
  const run = async (name: string, spec: string) => {
    const created = await server.call('POST', '/dags', { name, spec });
    assert.equal(created.status, 201, created.text);
    return server.startAndWait(name);
  };
  const mailsFor = (name: string) => smtp.received.filter((message) => message.mail.subject?.includes(` ${name} (`));

  test('a failed run sends errorMail: prefix, DAG name and status in the subject, an HTML report of the run, and its logs attached', async () => {
    const spec = [mailRoot(), 'steps:', '  - name: hello', '    command: echo hello', '  - name: broken', '    command: echo oops >&2; exit 3'].join('\n');
    const dagRun = await run('notify_failure', spec);
    assert.equal(dagRun.statusLabel, 'failed');
    assert.ok(await waitUntil(() => mailsFor('notify_failure').length > 0), 'the error mail arrived');
    const [mail] = mailsFor('notify_failure');
    assert.equal(mail.mail.subject, '[ERR] notify_failure (failed)');
    assert.deepEqual([mail.from, mail.to], ['troupe@example.com', ['oncall@example.com', 'lead@example.com']]);
    const html = mail.mail.html as string;
    for (const text of ['notify_failure', dagRun.dagRunId, 'FAILED', '<td>hello</td>', '<td>broken</td>', 'echo oops &gt;&amp;2; exit 3', 'exit status 3']) {
      assert.ok(html.includes(text), `the report shows ${text}`);
    }
    const attached = new Map(mail.mail.attachments.map((a) => [a.filename, a.content.toString()]));
    // The run log is the one whose lines name the run.
    assert.ok([...attached.values()].some((content) => content.includes(dagRun.dagRunId)), `the run log is attached: ${[...attached.keys()]}`);
    assert.ok([...attached.values()].includes('hello\n'), 'the first step\'s stdout log is attached');
    assert.ok([...attached.values()].includes('oops\n'), 'the failed step\'s stderr log is attached');
    // No infoMail for a failed run.
    assert.equal(mailsFor('notify_failure').length, 1);
  });

  test('a successful run sends infoMail (its prefix and address expanded), without logs when attachLogs is not set', async () => {
    const dagRun = await run('notify_success', [mailRoot(), 'steps:', '  - name: hello', '    command: echo hello'].join('\n'));
    assert.equal(dagRun.statusLabel, 'succeeded');
    assert.ok(await waitUntil(() => mailsFor('notify_success').length > 0), 'the info mail arrived');
    const [mail] = mailsFor('notify_success');
    assert.equal(mail.mail.subject, '[INFO] notify_success (succeeded)');
    assert.deepEqual(mail.to, ['team@example.com']);
    assert.ok((mail.mail.html as string).includes('SUCCEEDED'));
    assert.equal(mail.mail.attachments.length, 0);
  });

  test('mailOnError: a failing step sends errorMail when it fails, while the run is still running', async () => {
    const spec = [
      smtp.root().trimEnd(),
      'errorMail:',
      '  from: troupe@example.com',
      '  to: oncall@example.com',
      '  prefix: "[STEP]"',
      'steps:',
      '  - name: flaky',
      '    command: exit 4',
      '    mailOnError: true',
      '    continueOn:',
      '      failure: true',
      '  - name: after',
      '    command: echo after',
    ].join('\n');
    const dagRun = await run('notify_step', spec);
    assert.deepEqual(dagRun.nodes.map((n: any) => n.statusLabel), ['failed', 'succeeded']);
    assert.ok(await waitUntil(() => mailsFor('notify_step').length > 0), 'the step\'s error mail arrived');
    const [mail] = mailsFor('notify_step');
    assert.equal(mail.mail.subject, '[STEP] notify_step (running)');
    assert.ok((mail.mail.html as string).includes('exit status 4'));
    // mailOn is not set: the run's end sends nothing more.
    assert.equal(mailsFor('notify_step').length, 1);
  });

  test('a notification that cannot be sent says why in the run log, the password masked', async () => {
    const wrong = 'notify-wrong-Pa55-31f0';
    const dagRun = await run('notify_unsent', [mailRoot(wrong), 'steps:', '  - name: hello', '    command: echo hello'].join('\n'));
    assert.equal(dagRun.statusLabel, 'succeeded');
    let runLog = '';
    assert.ok(await waitUntil(async () => {
      runLog = (await server.call('GET', `/dag-runs/notify_unsent/${dagRun.dagRunId}/log`)).body.content;
      return runLog.includes('notification mail was not sent');
    }), runLog);
    assert.match(runLog, /535 Invalid username or password/);
    assert.ok(!runLog.includes(wrong));
    assert.equal(mailsFor('notify_unsent').length, 0);
  });
});
