// /dags: definitions (list, create, read, edit, validate, rename, delete, suspend, search, tags).
import { AppError, dagNameProblem, type DagFile } from '../../core/index.ts';
import { minimalSpec, type ParseResult } from '../../definition/index.ts';
import { dagDetails, dagSummary, emptyRunSummary, localDagsOf, nextRunView, runDetails, runSummary } from '../present.ts';
import { intParam, stringParam } from '../query.ts';
import { CreateDagBody, RenameBody, SpecBody, SuspendBody, ValidateBody, parseBody } from '../schemas.ts';
import type { Router } from '../router.ts';
import type { CatalogEntry } from '../../actors/index.ts';
import { empty, json, type ApiDeps, type HttpRequest } from '../types.ts';

interface Loaded {
  file: DagFile;
  result: ParseResult;
}

async function loadAll(deps: ApiDeps): Promise<Loaded[]> {
  const files = await deps.dags.list();
  return Promise.all(files.map(async (file) => ({ file, result: await deps.engine.definitions.parseStored(file) })));
}

/** A stored DAG by its path parameter; 404 when the name is invalid or no file has it. */
export async function requireDag(deps: ApiDeps, fileName: string) {
  const loaded = await deps.engine.definitions.loadDag(fileName);
  if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
  return loaded;
}

function fileErrors(loaded: Loaded[]): string[] {
  return loaded.flatMap(({ file, result }) => result.errors.map((error) => `${file.fileName}: ${error}`));
}

/** A listed definition's `dag`, made once per parse of its file (entries are replaced, never changed). */
const summaries = new WeakMap<CatalogEntry, ReturnType<typeof dagSummary>>();

function listItem(deps: ApiDeps, entry: CatalogEntry, nextRun: number | undefined) {
  const name = entry.dag?.name ?? entry.fileName;
  const latest = deps.runs.latestSummary(name);
  let dag = summaries.get(entry);
  if (!dag) summaries.set(entry, dag = dagSummary(entry.dag, entry.fileName));
  return {
    fileName: entry.fileName,
    dag,
    latestDAGRun: latest ? runSummary(latest) : emptyRunSummary(name),
    suspended: deps.runs.isSuspended(entry.fileName),
    nextRun: nextRunView(nextRun),
    errors: entry.errors,
  };
}

// One collator for every comparison: a localeCompare call builds one each time (2,700 per sort of 300).
const collator = new Intl.Collator();
const byFileName = (a: CatalogEntry, b: CatalogEntry) => collator.compare(a.lowerName, b.lowerName);

/** What every listing of the same catalog answer shares: the catalog gives the same array while no file changed. */
const derivedOf = new WeakMap<readonly CatalogEntry[], { byName: CatalogEntry[]; errors: string[] }>();

function derived(entries: readonly CatalogEntry[]) {
  let known = derivedOf.get(entries);
  if (!known) {
    known = {
      byName: [...entries].sort(byFileName),
      errors: entries.flatMap(({ fileName, errors }) => errors.map((error) => `${fileName}: ${error}`)),
    };
    derivedOf.set(entries, known);
  }
  return known;
}

/**
 * `sort=nextRun`: the soonest first (ties by name), then the unscheduled (and suspended) by name.
 * `desc` reverses each part; the unscheduled stay last either way.
 */
function sortByNextRun(loaded: CatalogEntry[], nextRun: (entry: CatalogEntry) => number | undefined, descending: boolean): CatalogEntry[] {
  const scheduled = loaded.filter((entry) => nextRun(entry) !== undefined).sort((a, b) => nextRun(a)! - nextRun(b)! || byFileName(a, b));
  const unscheduled = loaded.filter((entry) => nextRun(entry) === undefined).sort(byFileName);
  if (descending) {
    scheduled.reverse();
    unscheduled.reverse();
  }
  return [...scheduled, ...unscheduled];
}

async function listDags(request: HttpRequest, deps: ApiDeps) {
  const page = intParam(request.query, 'page', 1) ?? 1;
  const perPage = intParam(request.query, 'perPage', 1, 1000) ?? 50;
  const nameFilter = stringParam(request.query, 'name')?.toLowerCase();
  const tagFilter = stringParam(request.query, 'tag')?.toLowerCase();
  const sort = stringParam(request.query, 'sort') ?? 'name';
  const order = stringParam(request.query, 'order') ?? 'asc';
  if (sort !== 'name' && sort !== 'nextRun') throw new AppError('bad_request', 'sort must be name or nextRun');
  if (order !== 'asc' && order !== 'desc') throw new AppError('bad_request', 'order must be asc or desc');

  // Next runs are the scheduler's plan, made as the server starts: asked before it is made, wait.
  const [entries] = await Promise.all([deps.engine.definitions.catalog.entries(), deps.cron.ready()]);
  const matches = (entry: CatalogEntry) =>
    (!nameFilter || entry.lowerName.includes(nameFilter)) && (!tagFilter || entry.lowerTags.includes(tagFilter));
  // One instant for the whole answer; a DAG's next run is computed only when it is needed.
  const now = deps.clock.now();
  const nextRuns = new Map<CatalogEntry, number | undefined>();
  const nextRun = (entry: CatalogEntry) => {
    if (!nextRuns.has(entry)) nextRuns.set(entry, deps.cron.nextRun(entry.fileName, now));
    return nextRuns.get(entry);
  };
  let matching: CatalogEntry[];
  if (sort === 'nextRun') matching = sortByNextRun(entries.filter(matches), nextRun, order === 'desc');
  else {
    matching = derived(entries).byName.filter(matches);
    if (order === 'desc') matching.reverse();
  }
  const totalRecords = matching.length;
  const totalPages = Math.max(Math.ceil(totalRecords / perPage), 1);
  const items = matching.slice((page - 1) * perPage, page * perPage).map((entry) => listItem(deps, entry, nextRun(entry)));
  return json({
    dags: items,
    errors: derived(entries).errors,
    pagination: {
      totalRecords,
      currentPage: page,
      totalPages,
      nextPage: page < totalPages ? page + 1 : null,
      prevPage: page > 1 ? Math.min(page - 1, totalPages) : null,
    },
  });
}

async function createDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(CreateDagBody, request.body);
  const problem = dagNameProblem(body.name);
  if (problem) throw new AppError('bad_request', problem);
  const spec = body.spec ?? minimalSpec();
  if (body.spec !== undefined) {
    const { errors } = await deps.engine.definitions.check(spec, { fileName: body.name });
    if (errors.length > 0) throw new AppError('bad_request', errors.join('; '), { errors });
  }
  await deps.dags.write(body.name, spec, 'create');
  await deps.cron.dagChanged(body.name);
  return json({ name: body.name }, 201);
}

async function getDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  await deps.cron.ready();
  const name = result.dag?.name ?? fileName;
  const latest = deps.runs.latest(name);
  return json({
    dag: result.dag ? dagDetails(result.dag) : { name },
    localDags: localDagsOf(result),
    latestDAGRun: latest ? runDetails(latest) : { ...emptyRunSummary(name), nodes: [], preconditions: [] },
    suspended: deps.runs.isSuspended(fileName),
    nextRun: nextRunView(deps.cron.nextRun(fileName)),
    missedRuns: deps.cron.missedRuns(fileName),
    errors: await storedErrors(deps, fileName, result),
  });
}

/** A stored DAG's problems, with the call cycles its file is in (a file edited by hand may be). */
async function storedErrors(deps: ApiDeps, fileName: string, result: ParseResult): Promise<string[]> {
  return [...result.errors, ...(await deps.engine.definitions.callCycles(fileName, result))];
}

async function getSpec(request: HttpRequest, deps: ApiDeps) {
  const { result, text } = await requireDag(deps, request.params.fileName);
  const errors = await storedErrors(deps, request.params.fileName, result);
  return json({ dag: result.dag ? dagDetails(result.dag) : { name: request.params.fileName }, spec: text, errors });
}

async function putSpec(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const body = await parseBody(SpecBody, request.body);
  await requireDag(deps, fileName);
  const { errors } = await deps.engine.definitions.check(body.spec, { fileName });
  // Problems are answered with 200 and the file is left as it was (docs/api.md).
  if (errors.length === 0) {
    await deps.dags.write(fileName, body.spec, 'replace');
    await deps.cron.dagChanged(fileName);
  }
  return json({ errors });
}

async function deleteDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  if (dagNameProblem(fileName) || !(await deps.dags.remove(fileName))) throw new AppError('not_found', `DAG ${fileName} not found`);
  await deps.cron.dagChanged(fileName);
  return empty(204);
}

async function validateDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(ValidateBody, request.body);
  if (body.spec === undefined) return json({ valid: false, errors: ['spec is required'] });
  if (body.name !== undefined && dagNameProblem(body.name)) return json({ valid: false, errors: [`name: ${dagNameProblem(body.name)}`] });
  // With a name, the spec is checked as that DAG file's next text: a call back to it is a cycle.
  const { result, errors } = await deps.engine.definitions.check(body.spec, { defaultName: body.name ?? 'validated-dag', fileName: body.name });
  return json({ valid: errors.length === 0, errors, ...(result.dag ? { dag: dagDetails(result.dag) } : {}) });
}

async function renameDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const body = await parseBody(RenameBody, request.body);
  const problem = dagNameProblem(body.newFileName);
  if (problem) throw new AppError('bad_request', problem);
  await requireDag(deps, fileName);
  await deps.dags.rename(fileName, body.newFileName);
  // Run history stays under the old name (as in Dagu since 1.25.0); the flag moves.
  if (deps.runs.isSuspended(fileName)) {
    await deps.runs.setSuspended(body.newFileName, true);
    await deps.runs.setSuspended(fileName, false);
  }
  await deps.cron.dagRenamed(fileName, body.newFileName);
  return empty(200);
}

async function suspendDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const body = await parseBody(SuspendBody, request.body);
  await requireDag(deps, fileName);
  await deps.runs.setSuspended(fileName, body.suspend);
  deps.cron.suspendChanged(fileName, body.suspend);
  // A resumed DAG's queued runs may start now.
  if (!body.suspend) deps.engine.queuesChanged();
  return empty(200);
}

async function searchDags(request: HttpRequest, deps: ApiDeps) {
  const q = stringParam(request.query, 'q');
  if (q === undefined) throw new AppError('bad_request', 'query parameter q is required');
  const needle = q.toLowerCase();
  const loaded = await loadAll(deps);
  const results = loaded.flatMap(({ file, result }) => {
    const matches = file.text.split('\n').flatMap((line, index) =>
      line.toLowerCase().includes(needle) ? [{ line, lineNumber: index + 1, startLine: index + 1 }] : []);
    return matches.length > 0 ? [{ name: file.fileName, dag: dagSummary(result.dag, file.fileName), matches }] : [];
  });
  return json({ results, errors: fileErrors(loaded) });
}

async function listTags(_request: HttpRequest, deps: ApiDeps) {
  const loaded = await loadAll(deps);
  const tags = [...new Set(loaded.flatMap(({ result }) => result.dag?.tags ?? []))].sort();
  return json({ tags, errors: fileErrors(loaded) });
}

async function dagRunsOfDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  const name = result.dag?.name ?? fileName;
  const records = deps.runs.listByName(name, 30);
  const stepNames = result.dag?.steps.map((step) => step.name) ?? [];
  for (const record of records) for (const node of record.nodes) if (!stepNames.includes(node.step.name)) stepNames.push(node.step.name);
  const gridData = stepNames.map((stepName) => ({
    name: stepName,
    history: records.map((record) => record.nodes.find((node) => node.step.name === stepName)?.status ?? 0),
  }));
  return json({ dagRuns: records.map(runDetails), gridData });
}

async function dagRunOfDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName, dagRunId } = request.params;
  const { result } = await requireDag(deps, fileName);
  return json({ dagRun: runDetails(deps.engine.findRun(result.dag?.name ?? fileName, dagRunId)) });
}

async function stopAll(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  await deps.engine.stopAll(result.dag?.name ?? fileName);
  return json({ errors: [] });
}

export function dagRoutes(router: Router): void {
  router
    .add('GET', '/dags', listDags)
    .add('POST', '/dags', createDag)
    .add('POST', '/dags/validate', validateDag)
    .add('GET', '/dags/search', searchDags)
    .add('GET', '/dags/tags', listTags)
    .add('GET', '/dags/:fileName', getDag)
    .add('DELETE', '/dags/:fileName', deleteDag)
    .add('GET', '/dags/:fileName/spec', getSpec)
    .add('PUT', '/dags/:fileName/spec', putSpec)
    .add('POST', '/dags/:fileName/rename', renameDag)
    .add('POST', '/dags/:fileName/suspend', suspendDag)
    .add('GET', '/dags/:fileName/dag-runs', dagRunsOfDag)
    .add('GET', '/dags/:fileName/dag-runs/:dagRunId', dagRunOfDag)
    .add('POST', '/dags/:fileName/stop-all', stopAll);
}
