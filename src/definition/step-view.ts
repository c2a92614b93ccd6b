// The step object shown inside run nodes and DAG details (as the API shows it).
import { MASK, isNixShell, type Condition, type ConditionView, type Dag, type RepeatPolicy, type RepeatPolicyView, type Step, type StepView } from '../core/index.ts';
import { splitWords } from './command.ts';
import { nixShellFound } from './nix-shell.ts';

export function stepView(step: Step): StepView {
  const view: StepView = { name: step.name, executorConfig: { type: step.executor.type, config: passwordMasked(step.executor.config) } };
  if (step.id) view.id = step.id;
  if (step.description) view.description = step.description;
  view.dir = step.dir;
  if (step.command !== undefined) {
    const [command = '', ...args] = splitWords(step.command);
    view.command = command;
    view.args = args;
    view.commands = [{ command, args }];
  }
  if (step.commands !== undefined) {
    view.commands = step.commands.map((line) => {
      const [command = '', ...args] = splitWords(line);
      return { command, args };
    });
    [view.command, view.args] = [view.commands[0].command, view.commands[0].args];
  }
  if (step.script !== undefined) view.script = step.script;
  if (step.depends.length > 0) view.depends = step.depends;
  if (step.output) view.output = step.output;
  if (step.call !== undefined) {
    view.run = step.call;
    view.call = step.call;
  }
  if (step.params !== undefined) view.params = typeof step.params === 'string' ? step.params : JSON.stringify(step.params);
  if (step.parallel) view.parallel = step.parallel;
  if (step.stdout !== undefined) view.stdout = step.stdout;
  if (step.stderr !== undefined) view.stderr = step.stderr;
  if (step.mailOnError) view.mailOnError = true;
  if (step.timeoutSec !== undefined) view.timeoutSec = step.timeoutSec;
  if (step.preconditions.length > 0) view.preconditions = step.preconditions.map(conditionView);
  if (step.repeatPolicy) view.repeatPolicy = repeatPolicyView(step.repeatPolicy);
  return view;
}

export function conditionView(condition: Condition): ConditionView {
  const view: ConditionView = { condition: condition.condition ?? condition.command ?? '' };
  if (condition.expected !== undefined) view.expected = condition.expected;
  if (condition.negate) view.negate = true;
  if (condition.error !== undefined) view.error = condition.error;
  return view;
}

function repeatPolicyView(policy: RepeatPolicy): RepeatPolicyView {
  const view: RepeatPolicyView = { repeat: policy.repeat, interval: policy.intervalSec };
  if (policy.limit !== undefined) view.limit = policy.limit;
  if (policy.backoff !== undefined) view.backoff = policy.backoff;
  if (policy.maxIntervalSec !== undefined) view.maxIntervalSec = policy.maxIntervalSec;
  if (policy.condition !== undefined) {
    view.condition = { condition: policy.condition, ...(policy.expected !== undefined ? { expected: policy.expected } : {}) };
  }
  if (policy.exitCode.length > 0) view.exitCode = policy.exitCode;
  return view;
}

/**
 * A password written into an executor's config (ssh) is shown masked, as a secret's value is; a
 * reference to a variable (`${SSH_PASS}`) reveals nothing and stays as written.
 */
function passwordMasked(config: Record<string, unknown>): Record<string, unknown> {
  const password = config.password;
  if (typeof password !== 'string' || password === '' || /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(password)) return config;
  return { ...config, password: MASK };
}

/** The executors this build runs; a run of a DAG that uses another is refused at its start. */
const RUNNABLE_EXECUTORS = new Set(['shell', 'command', 'dag', 'jq', 'mail', 'ssh', 'http', 'archive', 'docker', 'container', 'workflow-action', 'github-action', 'github_action', 'gha']);

/**
 * Why a run of this DAG cannot be carried out here, as `field: problem` lines: an executor this
 * build does not run, or packages (`shellPackages`) without a nix-shell to install them.
 */
export function runProblems(dag: Dag): string[] {
  const problems: string[] = [];
  const steps = [...dag.steps.map((step) => ({ step, at: `steps.${step.name}` })), ...Object.entries(dag.handlerOn).map(([kind, step]) => ({ step: step!, at: `handlerOn.${kind}` }))];
  for (const { step, at } of steps) {
    if (step.shellPackages.length > 0) {
      const shell = step.shell ?? dag.shell;
      if (!isNixShell(shell)) problems.push(`${at}.shellPackages: packages are installed by nix-shell: set shell: nix-shell`);
      else if (!nixShellFound(shell![0])) problems.push(`${at}.shellPackages: nix-shell not found`);
    }
    if (!RUNNABLE_EXECUTORS.has(step.executor.type)) problems.push(`${at}.executor (${step.executor.type}): this troupe build cannot run it`);
  }
  return problems;
}

/** The definition POST /dags writes when no spec is given. */
export function minimalSpec(): string {
  return 'steps:\n  - name: step1\n    command: echo hello\n';
}

export function exampleSpec(): string {
  return [
    'description: An example written on first start; edit or delete it freely.',
    'tags: [example]',
    'params:',
    '  - WHO: world',
    'steps:',
    '  - name: greet',
    '    command: echo "hello, ${WHO}"',
    '  - name: list',
    '    command: ls -la',
    '',
  ].join('\n');
}
