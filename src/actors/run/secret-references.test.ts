import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandRunningCommands, SecretReferences } from './secret-references.ts';

const SECRET = 's3cret-value';
const env = { TOKEN: SECRET, AUTH: `Bearer ${SECRET}`, CONFIG: JSON.stringify({ key: SECRET, user: 'ann' }), NAME: 'world' };
const scope = { get: (name: string) => (env as Record<string, string>)[name] ?? (name === '1' ? SECRET : undefined) };

test('references carrying a secret stay for the shell; the others expand', () => {
  const references = new SecretReferences([SECRET], env);
  assert.equal(references.shellCode('curl -H "$AUTH" -u $TOKEN ${NAME}', scope, ['sh']), 'curl -H "${AUTH}" -u ${TOKEN} world');
  assert.deepEqual(references.env, {});
  assert.equal(references.environment(), env);
});

test('any part of a variable that holds a secret goes through the environment', () => {
  const references = new SecretReferences([SECRET], env);
  assert.equal(references.shellCode('echo ${CONFIG.user}', scope, ['sh']), 'echo ${TROUPE_SECRET_1}');
  assert.deepEqual(references.env, { TROUPE_SECRET_1: 'ann' });
});

test('slices, JSON fields and positional params get variables of their own, one per value', () => {
  const references = new SecretReferences([SECRET], env);
  const code = references.shellCode('echo ${TOKEN:0:3} ${CONFIG.key} $1', scope, ['bash']);
  assert.equal(code, 'echo ${TROUPE_SECRET_1} ${TROUPE_SECRET_2} ${TROUPE_SECRET_2}');
  assert.deepEqual(references.env, { TROUPE_SECRET_1: 's3c', TROUPE_SECRET_2: SECRET });
  assert.equal(references.environment().TROUPE_SECRET_2, SECRET);
});

test('inside single quotes the reference is put in double quotes; comments and quoted here-documents keep it as written', () => {
  const references = new SecretReferences([SECRET], env);
  assert.equal(references.shellCode(`echo 'token: \${TOKEN}!' # \${TOKEN}`, scope, ['sh']), `echo 'token: '"\${TOKEN}"'!' # \${TOKEN}`);
  assert.equal(references.shellCode(`cat <<'EOF'\n$TOKEN\nEOF\ncat <<EOF\n$TOKEN\nEOF`, scope, ['sh']), `cat <<'EOF'\n$TOKEN\nEOF\ncat <<EOF\n\${TOKEN}\nEOF`);
});

test('an interpreter that is not a POSIX shell gets the values (a documented limit)', () => {
  assert.equal(new SecretReferences([SECRET], env).shellCode('print("$TOKEN")', scope, ['python3']), `print("${SECRET}")`);
});

test('without secrets the code expands as before', () => {
  assert.equal(new SecretReferences([], env).shellCode(`echo 'a $TOKEN b'`, scope, ['sh']), `echo 'a ${SECRET} b'`);
});

test('quote rules hold with and without secrets: next to a single quote as written, between double quotes escaped', () => {
  const values = { ...env, DOC: '{"a": "$x"}' };
  const lookup = { get: (name: string) => (values as Record<string, string>)[name] };
  for (const secrets of [[], [SECRET]]) {
    const references = new SecretReferences(secrets, values);
    assert.equal(references.shellCode(`echo '$NAME' "\${DOC}" "\${TOKEN}" x\${DOC}'`, lookup, ['sh']),
      `echo '$NAME' "{\\"a\\": \\"\\$x\\"}" "${secrets.length ? '${TOKEN}' : SECRET}" x\${DOC}'`);
  }
  // Another interpreter's double-quoted string: only its quote and backslash are escaped.
  assert.equal(new SecretReferences([], values).shellCode('print("${DOC}")', lookup, ['python3']), 'print("{\\"a\\": \\"$x\\"}")');
  // Backtick commands in values are expanded as values are: no quote rules.
  assert.equal(new SecretReferences([], values).shellCode(`echo '$NAME'`, lookup, ['sh'], false), `echo 'world'`);
});

test('backtick commands get references carrying a secret through their environment', async () => {
  const ran: Array<[string, Record<string, string>]> = [];
  const run = async (command: string, commandEnv: Record<string, string>) => {
    ran.push([command, commandEnv]);
    return 'out';
  };
  const value = await expandRunningCommands('$NAME `check ${TOKEN:0:3}` $TOKEN', env, { values: [SECRET], shell: ['sh'] }, run);
  assert.equal(value, `world out ${SECRET}`);
  assert.equal(ran[0][0], 'check ${TROUPE_SECRET_1}');
  assert.equal(ran[0][1].TROUPE_SECRET_1, 's3c');
  // No secret in sight: expanded first, as before.
  ran.length = 0;
  assert.equal(await expandRunningCommands('`echo $NAME`', env, { values: [SECRET], shell: ['sh'] }, run), 'out');
  assert.equal(ran[0][0], 'echo world');
});
