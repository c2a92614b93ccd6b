// validate and dry: a DAG read and checked as the engine would, without running anything. They read
// the DAG files alone, so they answer the same whether or not a server holds the home.
import { dirname } from 'node:path';
import type { Dag, Step } from '../../core/index.ts';
import { mergeParams, paramsFromRequest, paramsRecord } from '../../definition/index.ts';
import { checkDefinition } from '../../command-home.ts';
import { dagSpec, paramsOf } from '../dag-arg.ts';
import { EXIT_FAILED, EXIT_OK } from '../errors.ts';
import { printJson, table } from '../output.ts';
import { homeConfig, type CommonOptions } from '../target.ts';

async function checked(dag: string, options: CommonOptions) {
  const { dagsDir } = await homeConfig(options);
  const { spec, fileName, path } = dagSpec(dag, dagsDir);
  // A file outside the DAGs folder calls DAGs beside it, as a stored one calls the folder's.
  const { result, errors } = await checkDefinition(dirname(path), spec, { fileName });
  return { dag: result.dag, errors, path };
}

export async function validate(dag: string, options: CommonOptions): Promise<number> {
  const { dag: parsed, errors, path } = await checked(dag, options);
  if (options.json) printJson({ valid: errors.length === 0, name: parsed?.name, errors });
  else if (errors.length === 0) process.stdout.write(`${path}: valid (DAG ${parsed?.name}, ${parsed?.steps.length} steps)\n`);
  else process.stdout.write(`${path}: ${errors.length} problem${errors.length === 1 ? '' : 's'}\n${errors.map((error) => `  ${error}`).join('\n')}\n`);
  return errors.length === 0 ? EXIT_OK : EXIT_FAILED;
}

/** The plan of a run: its params and its steps in the order they may run, nothing executed. */
export async function dry(dag: string, words: string[], options: CommonOptions & { params?: string }): Promise<number> {
  const { dag: parsed, errors } = await checked(dag, options);
  if (!parsed || errors.length > 0) {
    if (options.json) printJson({ valid: false, errors });
    else process.stdout.write(`not runnable: ${errors.length} problem${errors.length === 1 ? '' : 's'}\n${errors.map((error) => `  ${error}`).join('\n')}\n`);
    return EXIT_FAILED;
  }
  const params = paramsRecord(mergeParams(parsed.params, paramsFromRequest(paramsOf(options.params, words) ?? '')));
  const stages = stagesOf(parsed);
  if (options.json) {
    printJson({ valid: true, name: parsed.name, params, stages: stages.map((stage) => stage.map((step) => ({ name: step.name, depends: step.depends, runs: whatItRuns(step) }))) });
    return EXIT_OK;
  }
  const rows = stages.flatMap((stage, index) => stage.map((step) => [String(index + 1), step.name, step.depends.join(', ') || '-', whatItRuns(step)]));
  const paramText = Object.entries(params).map(([key, value]) => `${key}=${value}`).join(' ');
  process.stdout.write(`dry run of DAG ${parsed.name}: nothing is executed\n${paramText ? `params: ${paramText}\n` : ''}\n${table(['STAGE', 'STEP', 'DEPENDS ON', 'RUNS'], rows)}\n`);
  return EXIT_OK;
}

/** The steps by stage: each stage's steps depend only on the stages before it. */
function stagesOf(dag: Dag): Step[][] {
  const stageOf = new Map<string, number>();
  const byName = new Map(dag.steps.map((step) => [step.name, step]));
  const stage = (step: Step, seen: Set<string>): number => {
    const known = stageOf.get(step.name);
    if (known !== undefined) return known;
    seen.add(step.name);
    const depth = Math.max(-1, ...step.depends.map((name) => {
      const upstream = byName.get(name);
      return upstream && !seen.has(name) ? stage(upstream, seen) : -1;
    })) + 1;
    stageOf.set(step.name, depth);
    return depth;
  };
  const stages: Step[][] = [];
  for (const step of dag.steps) (stages[stage(step, new Set())] ??= []).push(step);
  return stages.filter((entries) => entries !== undefined);
}

function whatItRuns(step: Step): string {
  if (step.call) return `sub DAG ${step.call}`;
  const text = step.command ?? step.commands?.join('; ') ?? (step.script ? 'a script' : '');
  const kind = step.executor.type && step.executor.type !== 'command' && step.executor.type !== 'shell' ? `${step.executor.type}: ` : '';
  return `${kind}${text}`.replace(/\s+/g, ' ').slice(0, 80);
}
