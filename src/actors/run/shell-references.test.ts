import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandRunningCommands, ShellReferences } from './shell-references.ts';

const SECRET = 's3cret-value';
const env = { TOKEN: SECRET, AUTH: `Bearer ${SECRET}`, CONFIG: JSON.stringify({ key: SECRET, user: 'ann' }), NAME: 'world' };
const scope = { get: (name: string) => (env as Record<string, string>)[name] ?? (name === '1' ? SECRET : undefined) };

test('references stay for the shell, secrets or not, in every quoting', () => {
  const references = new ShellReferences([SECRET], env);
  assert.equal(references.shellCode('curl -H "$AUTH" -u $TOKEN ${NAME} "x ${NAME}"', scope, ['sh']), 'curl -H "${AUTH}" -u ${TOKEN} ${NAME} "x ${NAME}"');
  assert.deepEqual(references.env, {});
  assert.equal(references.environment(), env);
});

test('a slice or a JSON field gets a variable of its own', () => {
  const references = new ShellReferences([SECRET], env);
  assert.equal(references.shellCode('echo ${CONFIG.user}', scope, ['sh']), 'echo ${TROUPE_VALUE_1}');
  assert.deepEqual(references.env, { TROUPE_VALUE_1: 'ann' });
});

test('slices, JSON fields and positional params get variables of their own, one per value', () => {
  const references = new ShellReferences([SECRET], env);
  const code = references.shellCode('echo ${TOKEN:0:3} ${CONFIG.key} $1', scope, ['bash']);
  assert.equal(code, 'echo ${TROUPE_VALUE_1} ${TROUPE_VALUE_2} ${TROUPE_VALUE_2}');
  assert.deepEqual(references.env, { TROUPE_VALUE_1: 's3c', TROUPE_VALUE_2: SECRET });
  assert.equal(references.environment().TROUPE_VALUE_2, SECRET);
});

test('a generated variable never takes a name the environment has', () => {
  const references = new ShellReferences([], { ...env, TROUPE_VALUE_1: 'server' });
  assert.equal(references.shellCode('echo ${NAME:0:2}', scope, ['sh']), 'echo ${TROUPE_VALUE_2}');
});

test('inside single quotes the reference is put in double quotes; a comment keeps it as written', () => {
  const references = new ShellReferences([SECRET], env);
  assert.equal(references.shellCode(`echo 'token: \${TOKEN}!' # \${TOKEN} \${NAME}`, scope, ['sh']), `echo 'token: '"\${TOKEN}"'!' # \${TOKEN} \${NAME}`);
});

test('a quoted here-document gets a value, unless it is a secret or could end the document', () => {
  const values = { ...env, MULTI: 'a\nEOF\nrm x', END: 'xEOFx' };
  const lookup = { get: (name: string) => (values as Record<string, string>)[name] };
  const references = new ShellReferences([SECRET], values);
  assert.equal(references.shellCode(`cat <<'EOF'\n$TOKEN $NAME\n$MULTI $END\nEOF\ncat <<EOF\n$TOKEN $NAME\nEOF`, lookup, ['sh']),
    `cat <<'EOF'\n$TOKEN world\n$MULTI $END\nEOF\ncat <<EOF\n\${TOKEN} \${NAME}\nEOF`);
});

test('an interpreter that is not a POSIX shell gets the values (a documented limit)', () => {
  assert.equal(new ShellReferences([SECRET], env).shellCode('print("$TOKEN")', scope, ['python3']), `print("${SECRET}")`);
  assert.equal(new ShellReferences([], env).shellCode('print("$NAME")', scope, ['python3']), 'print("world")');
});

test('quote rules hold: next to a single quote as written, between double quotes expanded by the shell', () => {
  const values = { ...env, DOC: '{"a": "$x"}' };
  const lookup = { get: (name: string) => (values as Record<string, string>)[name] };
  for (const secrets of [[], [SECRET]]) {
    const references = new ShellReferences(secrets, values);
    assert.equal(references.shellCode(`echo '$NAME' "\${DOC}" "\${TOKEN}" x\${DOC}'`, lookup, ['sh']), `echo '$NAME' "\${DOC}" "\${TOKEN}" x\${DOC}'`);
  }
  // Another interpreter's double-quoted string: only its quote and backslash are escaped.
  assert.equal(new ShellReferences([], values).shellCode('print("${DOC}")', lookup, ['python3']), 'print("{\\"a\\": \\"$x\\"}")');
  // Backtick commands in values have no quote rules: inside single quotes the shell still expands.
  assert.equal(new ShellReferences([], values).shellCode(`echo '$NAME'`, lookup, ['sh'], false), `echo ''"\${NAME}"''`);
});

test('backtick commands get references through their environment; a value never brings a command', async () => {
  const ran: Array<[string, Record<string, string>]> = [];
  const run = async (command: string, commandEnv: Record<string, string>) => {
    ran.push([command, commandEnv]);
    return 'out';
  };
  const value = await expandRunningCommands('$NAME `check ${TOKEN:0:3}` $TOKEN', env, { values: [SECRET], shell: ['sh'] }, run);
  assert.equal(value, `world out ${SECRET}`);
  assert.equal(ran[0][0], 'check ${TROUPE_VALUE_1}');
  assert.equal(ran[0][1].TROUPE_VALUE_1, 's3c');
  ran.length = 0;
  assert.equal(await expandRunningCommands('`echo $NAME`', env, { values: [], shell: ['sh'] }, run), 'out');
  assert.equal(ran[0][0], 'echo ${NAME}');
  ran.length = 0;
  assert.equal(await expandRunningCommands('a ${CMD} b', { CMD: '`touch x`' }, { values: [], shell: ['sh'] }, run), 'a `touch x` b');
  assert.deepEqual(ran, []);
});

test("a fallback is the definition's code: the shell runs it when the variable is unset or empty; a set variable is a reference", () => {
  const references = new ShellReferences([], env);
  assert.equal(references.shellCode('echo ${NOPE:-$(date +%F)} "${NOPE:-x $NAME}" ${NAME:-fb} ${1:-one}', scope, ['sh']),
    'echo ${NOPE:-$(date +%F)} "${NOPE:-x ${NAME}}" ${NAME} ${TROUPE_VALUE_1}');
  assert.deepEqual(references.env, { TROUPE_VALUE_1: SECRET });
  // Inside single quotes the shell expands nothing: the fallback's value is written as a value.
  assert.equal(new ShellReferences([], env).shellCode(`echo 'x \${NOPE:-fb} y'`, scope, ['sh']), `echo 'x '"\${TROUPE_VALUE_1}"' y'`);
});
