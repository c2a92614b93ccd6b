// /dags: definitions (list, create, read, edit, validate, rename, delete, suspend, search, tags).
import { AppError, dagEvent, dagNameProblem, type DagFile, type RunSummaryRow } from '../../core/index.ts';
import { minimalSpec, type ParseResult } from '../../definition/index.ts';
import { dagDetails, dagSummary, emptyRunDetails, emptyRunSummary, localDagsOf, nextRunView, runDetailsParts, runSummary } from '../present.ts';
import { enumQuery, intQuery, stringQuery } from '../query.ts';
import {
  CreatedDagResponse, DagDetailsResponse, DagListResponse, DagRunHistoryResponse, DagRunResponse, DagSpecResponse,
  ErrorsResponse, SearchResponse, TagsResponse, ValidateResponse,
} from '../response-schemas.ts';
import { CreateDagBody, RenameBody, SpecBody, SuspendBody, ValidateBody, parseBody } from '../schemas.ts';
import type { Router } from '../router.ts';
import type { CatalogEntry } from '../../catalog/index.ts';
import { empty, json, type ApiDeps, type HttpRequest, type HttpResponse } from '../types.ts';
import { storedRunResponse } from './dag-runs.ts';
import { PageBodies } from '../page-bodies.ts';

interface Loaded {
  file: DagFile;
  result: ParseResult;
}

async function loadAll(deps: ApiDeps): Promise<Loaded[]> {
  const files = await deps.dags.list();
  return Promise.all(files.map(async (file) => ({ file, result: await deps.catalog.parseStored(file) })));
}

/** A stored DAG by its path parameter; 404 when the name is invalid or no file has it. */
export async function requireDag(deps: ApiDeps, fileName: string) {
  const loaded = await deps.catalog.loadDag(fileName);
  if (!loaded) throw new AppError('not_found', `DAG ${fileName} not found`);
  return loaded;
}

function fileErrors(loaded: Loaded[]): string[] {
  return loaded.flatMap(({ file, result }) => result.errors.map((error) => `${file.fileName}: ${error}`));
}

/** A listed definition's `dag`, made once per parse of its file (entries are replaced, never changed). */
const summaries = new WeakMap<CatalogEntry, ReturnType<typeof dagSummary>>();

function listItem(entry: CatalogEntry, latest: RunSummaryRow | undefined, suspended: boolean, nextRun: number | undefined) {
  let dag = summaries.get(entry);
  if (!dag) summaries.set(entry, dag = dagSummary(entry.dag, entry.fileName));
  return {
    fileName: entry.fileName,
    dag,
    latestDAGRun: latest ? runSummary(latest) : emptyRunSummary(entry.dag?.name ?? entry.fileName),
    suspended,
    nextRun: nextRunView(nextRun),
    errors: entry.errors,
  };
}

interface RenderedItem {
  latest: RunSummaryRow | undefined;
  suspended: boolean;
  nextRun: number | undefined;
  json: Buffer;
}

/**
 * List items as JSON, by entry, kept while what they show is the same: a page of 100 is then
 * joined rather than rendered (JSON.stringify of 70 KB was a fifth of a listing's time). The newest
 * run is compared by row: the store gives the same row object while no run was written.
 */
const renderedItems = new WeakMap<CatalogEntry, RenderedItem>();

function listItemJson(deps: ApiDeps, entry: CatalogEntry, nextRun: number | undefined): Buffer {
  const latest = deps.runs.latestSummary(entry.dag?.name ?? entry.fileName);
  const suspended = deps.runs.isSuspended(entry.fileName);
  const kept = renderedItems.get(entry);
  if (kept && kept.latest === latest && kept.suspended === suspended && kept.nextRun === nextRun) return kept.json;
  const json = Buffer.from(JSON.stringify(listItem(entry, latest, suspended, nextRun)));
  renderedItems.set(entry, { latest, suspended, nextRun, json });
  return json;
}

const COMMA = Buffer.from(',');

/** Page bodies by catalog: a process may serve several homes (tests, embedders). */
const pageBodies = new WeakMap<ApiDeps['catalog'], PageBodies>();

/** `{"dags":[...items],"errors":...,"pagination":...}` from items already rendered. */
function listBody(deps: ApiDeps, key: string, items: Buffer[], errors: string[], pagination: object): Buffer {
  let pages = pageBodies.get(deps.catalog);
  if (!pages) pageBodies.set(deps.catalog, pages = new PageBodies());
  return pages.body(key, 'dags', items, `],"errors":${JSON.stringify(errors)},"pagination":${JSON.stringify(pagination)}}`);
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

const ListQuery = {
  page: intQuery('page', '1-based page, default 1', 1),
  perPage: intQuery('perPage', 'DAGs per page, default 50', 1, 1000),
  name: stringQuery('name', 'Only file names that contain it (case-insensitive)'),
  tag: stringQuery('tag', 'Only DAGs with this tag (case-insensitive)'),
  sort: enumQuery('sort', 'name (case-insensitive, the default) or nextRun (the soonest first, unscheduled DAGs last)', ['name', 'nextRun']),
  order: enumQuery('order', 'asc (the default) or desc', ['asc', 'desc']),
};

async function listDags(request: HttpRequest, deps: ApiDeps, verified = false): Promise<HttpResponse> {
  const page = ListQuery.page.read(request.query) ?? 1;
  const perPage = ListQuery.perPage.read(request.query) ?? 50;
  const nameFilter = ListQuery.name.read(request.query)?.toLowerCase();
  const tagFilter = ListQuery.tag.read(request.query)?.toLowerCase();
  const sort = ListQuery.sort.read(request.query) ?? 'name';
  const order = ListQuery.order.read(request.query) ?? 'asc';

  // Next runs are the scheduler's plan, made as the server starts: asked before it is made, wait.
  const [entries] = await Promise.all([deps.catalog.listing.entries(), deps.cron.ready()]);
  const matches = (entry: CatalogEntry) =>
    (!nameFilter || entry.lowerName.includes(nameFilter)) && (!tagFilter || entry.lowerTags.includes(tagFilter));
  // One instant for the whole answer; a DAG's next run is computed only when it is needed.
  const now = deps.clock.now();
  const nextRuns = new Map<CatalogEntry, number | undefined>();
  const nextRun = (entry: CatalogEntry) => {
    if (!nextRuns.has(entry)) nextRuns.set(entry, deps.cron.nextRun(entry.fileName, now));
    return nextRuns.get(entry);
  };
  let matching: readonly CatalogEntry[];
  if (sort === 'nextRun') matching = sortByNextRun(entries.filter(matches), nextRun, order === 'desc');
  else {
    const { byName } = derived(entries);
    // Unfiltered in name order, the common listing, takes its page from the order kept, copying nothing.
    matching = nameFilter || tagFilter ? byName.filter(matches) : byName;
    if (order === 'desc') matching = [...matching].reverse();
  }
  const shown = matching.slice((page - 1) * perPage, page * perPage);
  // The page's files are checked (a stat each, once per turn of the event loop): one edited by hand an instant ago is listed as it now is.
  if (!verified && !(await deps.catalog.listing.verify(shown))) return listDags(request, deps, true);
  const totalRecords = matching.length;
  const totalPages = Math.max(Math.ceil(totalRecords / perPage), 1);
  const items = shown.map((entry) => listItemJson(deps, entry, nextRun(entry)));
  const body = listBody(deps, JSON.stringify([page, perPage, nameFilter, tagFilter, sort, order]), items, derived(entries).errors, {
    totalRecords,
    currentPage: page,
    totalPages,
    nextPage: page < totalPages ? page + 1 : null,
    prevPage: page > 1 ? Math.min(page - 1, totalPages) : null,
  });
  return { status: 200, headers: { 'content-type': 'application/json' }, body };
}

async function createDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(CreateDagBody, request.body);
  const problem = dagNameProblem(body.name);
  if (problem) throw new AppError('bad_request', problem);
  const spec = body.spec ?? minimalSpec();
  if (body.spec !== undefined) {
    const { errors } = await deps.catalog.check(spec, { fileName: body.name });
    if (errors.length > 0) throw new AppError('bad_request', errors.join('; '), { errors });
  }
  await deps.dags.write(body.name, spec, 'create');
  await deps.runs.appendEvents([dagEvent('created', body.name)]);
  await deps.cron.dagChanged(body.name);
  return json({ name: body.name }, 201);
}

async function getDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  await deps.cron.ready();
  const name = result.dag?.name ?? fileName;
  const latest = deps.runs.latest(name);
  const head = { dag: result.dag ? dagDetails(result.dag) : { name }, localDags: localDagsOf(result) };
  const tail = {
    suspended: deps.runs.isSuspended(fileName),
    nextRun: nextRunView(deps.cron.nextRun(fileName)),
    missedRuns: deps.cron.missedRuns(fileName),
    errors: await storedErrors(deps, fileName, result),
  };
  // The latest run's details as present.ts keeps them, between the fields around it in their order.
  const details = latest ? runDetailsParts(latest) : [Buffer.from(JSON.stringify(emptyRunDetails(name)))];
  const body = Buffer.concat([
    Buffer.from(`${JSON.stringify(head).slice(0, -1)},"latestDAGRun":`), ...details, Buffer.from(`,${JSON.stringify(tail).slice(1)}`),
  ]);
  return { status: 200, headers: { 'content-type': 'application/json' }, body };
}

/** A stored DAG's problems, with the call cycles its file is in (a file edited by hand may be). */
async function storedErrors(deps: ApiDeps, fileName: string, result: ParseResult): Promise<string[]> {
  return [...result.errors, ...(await deps.catalog.callCycles(fileName, result))];
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
  const { errors } = await deps.catalog.check(body.spec, { fileName });
  // Problems are answered with 200 and the file is left as it was (docs/api.md).
  if (errors.length === 0) {
    await deps.dags.write(fileName, body.spec, 'replace');
    await deps.runs.appendEvents([dagEvent('updated', fileName)]);
    await deps.cron.dagChanged(fileName);
  }
  return json({ errors });
}

async function deleteDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  if (dagNameProblem(fileName) || !(await deps.dags.remove(fileName))) throw new AppError('not_found', `DAG ${fileName} not found`);
  await deps.runs.appendEvents([dagEvent('deleted', fileName)]);
  await deps.cron.dagChanged(fileName);
  return empty(204);
}

async function validateDag(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(ValidateBody, request.body);
  if (body.spec === undefined) return json({ valid: false, errors: ['spec is required'] });
  if (body.name !== undefined && dagNameProblem(body.name)) return json({ valid: false, errors: [`name: ${dagNameProblem(body.name)}`] });
  // With a name, the spec is checked as that DAG file's next text: a call back to it is a cycle.
  const { result, errors } = await deps.catalog.check(body.spec, { defaultName: body.name ?? 'validated-dag', fileName: body.name });
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
  const renamed = [dagEvent('renamed', fileName, body.newFileName)];
  if (deps.runs.isSuspended(fileName)) {
    await deps.runs.setSuspended(body.newFileName, true);
    await deps.runs.setSuspended(fileName, false, renamed);
  } else {
    await deps.runs.appendEvents(renamed);
  }
  await deps.cron.dagRenamed(fileName, body.newFileName);
  return empty(200);
}

async function suspendDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const body = await parseBody(SuspendBody, request.body);
  await requireDag(deps, fileName);
  await deps.runs.setSuspended(fileName, body.suspend, [dagEvent(body.suspend ? 'suspended' : 'resumed', fileName)]);
  deps.cron.suspendChanged(fileName, body.suspend);
  // A resumed DAG's queued runs may start now.
  if (!body.suspend) deps.engine.queuesChanged();
  return empty(200);
}

const SearchText = stringQuery('q', 'The text to find in DAG files (case-insensitive)', { required: true });

async function searchDags(request: HttpRequest, deps: ApiDeps) {
  const needle = SearchText.read(request.query)!.toLowerCase();
  const loaded = await loadAll(deps);
  const results = loaded.flatMap(({ file, result }) => {
    const matches = file.text.split('\n').flatMap((line, index) =>
      line.toLowerCase().includes(needle) ? [{ line, lineNumber: index + 1, startLine: index + 1 }] : []);
    return matches.length > 0 ? [{ name: file.fileName, dag: dagSummary(result.dag, file.fileName), matches }] : [];
  });
  return json({ results, errors: fileErrors(loaded) });
}

/** Tags by catalog answer: the same while no file changed. */
const tagsOf = new WeakMap<readonly CatalogEntry[], string[]>();

async function listTags(_request: HttpRequest, deps: ApiDeps) {
  const entries = await deps.catalog.listing.entries();
  let tags = tagsOf.get(entries);
  if (!tags) tagsOf.set(entries, tags = [...new Set(entries.flatMap(({ dag }) => dag?.tags ?? []))].sort());
  return json({ tags, errors: derived(entries).errors });
}

/** A DAG's history as last rendered, by its parse (a new text is a new parse) and the runs' generation. */
const histories = new WeakMap<ParseResult, { generation: number | undefined; body: Buffer }>();

async function dagRunsOfDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  const generation = deps.runs.runsGeneration;
  let kept = generation === undefined ? undefined : histories.get(result);
  if (kept === undefined || kept.generation !== generation) {
    const name = result.dag?.name ?? fileName;
    const records = deps.runs.listByName(name, 30);
    // By name, once per record: searching every record's nodes for each step name made a DAG of
    // 10,000 steps cost 10,000 x 10,000 comparisons per run shown.
    const stepNames = new Set(result.dag?.steps.map((step) => step.name) ?? []);
    const statuses = records.map((record) => {
      const byName = new Map<string, number>();
      for (const node of record.nodes) {
        // The first node of a name, as a search from the start finds it.
        if (!byName.has(node.step.name)) byName.set(node.step.name, node.status);
        stepNames.add(node.step.name);
      }
      return byName;
    });
    const gridData = [...stepNames].map((stepName) => ({ name: stepName, history: statuses.map((byName) => byName.get(stepName) ?? 0) }));
    const parts: Buffer[] = [Buffer.from('{"dagRuns":[')];
    records.forEach((record, index) => {
      if (index > 0) parts.push(COMMA);
      parts.push(...runDetailsParts(record));
    });
    parts.push(Buffer.from(`],"gridData":${JSON.stringify(gridData)}}`));
    kept = { generation, body: Buffer.concat(parts) };
    if (generation !== undefined) histories.set(result, kept);
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, body: kept.body };
}

async function dagRunOfDag(request: HttpRequest, deps: ApiDeps) {
  const { fileName, dagRunId } = request.params;
  const { result } = await requireDag(deps, fileName);
  return storedRunResponse(deps, result.dag?.name ?? fileName, dagRunId, ['dagRun']);
}

async function stopAll(request: HttpRequest, deps: ApiDeps) {
  const { fileName } = request.params;
  const { result } = await requireDag(deps, fileName);
  await deps.engine.stopAll(result.dag?.name ?? fileName);
  return json({ errors: [] });
}

export function dagRoutes(router: Router): void {
  router
    .add('GET', '/dags', listDags, { permission: 'read',
      operationId: 'listDAGs', summary: 'List DAG definitions, a page at a time', tag: 'dags',
      query: Object.values(ListQuery),
      responses: { 200: { description: 'A page of DAGs; `errors` names the files that could not be read', body: DagListResponse } },
    })
    .add('POST', '/dags', createDag, { permission: 'write',
      operationId: 'createNewDAG', summary: 'Create a DAG file (a minimal one without spec)', tag: 'dags',
      body: CreateDagBody,
      responses: { 201: { description: 'Created', body: CreatedDagResponse } },
      errors: ['bad_request', 'already_exists', 'insufficient_storage'],
    })
    .add('POST', '/dags/validate', validateDag, { permission: 'read',
      operationId: 'validateDAGSpec', summary: 'Validate a spec without storing it', tag: 'dags',
      description: 'Problems answer 200 with valid false; with `name`, the spec is checked as that DAG file\'s next text.',
      body: ValidateBody,
      responses: { 200: { description: 'The verdict and every problem', body: ValidateResponse } },
    })
    .add('GET', '/dags/search', searchDags, { permission: 'read',
      operationId: 'searchDAGs', summary: 'Find text in DAG files', tag: 'dags',
      query: [SearchText],
      responses: { 200: { description: 'Each file with matching lines', body: SearchResponse } },
      errors: ['bad_request'],
    })
    .add('GET', '/dags/tags', listTags, { permission: 'read',
      operationId: 'getAllDAGTags', summary: 'Every tag of the DAGs', tag: 'dags',
      responses: { 200: { description: 'Unique tags, sorted', body: TagsResponse } },
    })
    .add('GET', '/dags/:fileName', getDag, { permission: 'read',
      operationId: 'getDAGDetails', summary: 'A DAG with its latest run, schedule and problems', tag: 'dags',
      responses: { 200: { description: 'The DAG', body: DagDetailsResponse } },
      errors: ['not_found'],
    })
    .add('DELETE', '/dags/:fileName', deleteDag, { permission: 'write',
      operationId: 'deleteDAG', summary: 'Delete a DAG file (its runs stay)', tag: 'dags',
      responses: { 204: { description: 'Deleted' } },
      errors: ['not_found'],
    })
    .add('GET', '/dags/:fileName/spec', getSpec, { permission: 'read',
      operationId: 'getDAGSpec', summary: 'A DAG file\'s YAML', tag: 'dags',
      responses: { 200: { description: 'The spec and its problems', body: DagSpecResponse } },
      errors: ['not_found'],
    })
    .add('PUT', '/dags/:fileName/spec', putSpec, { permission: 'write',
      operationId: 'updateDAGSpec', summary: 'Replace a DAG file\'s YAML', tag: 'dags',
      description: 'A spec with problems answers 200 with them in `errors` and leaves the file as it was.',
      body: SpecBody,
      responses: { 200: { description: 'Stored when `errors` is empty', body: ErrorsResponse } },
      errors: ['bad_request', 'not_found', 'insufficient_storage'],
    })
    .add('POST', '/dags/:fileName/rename', renameDag, { permission: 'write',
      operationId: 'renameDAG', summary: 'Rename a DAG file (its run history keeps the old name)', tag: 'dags',
      body: RenameBody,
      responses: { 200: { description: 'Renamed' } },
      errors: ['bad_request', 'not_found', 'already_exists', 'insufficient_storage'],
    })
    .add('POST', '/dags/:fileName/suspend', suspendDag, { permission: 'run',
      operationId: 'updateDAGSuspensionState', summary: 'Suspend or resume a DAG\'s schedule', tag: 'dags',
      body: SuspendBody,
      responses: { 200: { description: 'Done' } },
      errors: ['bad_request', 'not_found', 'insufficient_storage'],
    })
    .add('GET', '/dags/:fileName/dag-runs', dagRunsOfDag, { permission: 'read',
      operationId: 'getDAGDAGRunHistory', summary: 'A DAG\'s 30 latest runs and their steps\' statuses', tag: 'dags',
      responses: { 200: { description: 'The runs, newest first, and one grid row per step', body: DagRunHistoryResponse } },
      errors: ['not_found'],
    })
    .add('GET', '/dags/:fileName/dag-runs/:dagRunId', dagRunOfDag, { permission: 'read',
      operationId: 'getDAGDAGRunDetails', summary: 'A run of a DAG', tag: 'dags',
      responses: { 200: { description: 'The run', body: DagRunResponse } },
      errors: ['not_found'],
    })
    .add('POST', '/dags/:fileName/stop-all', stopAll, { permission: 'run',
      operationId: 'stopAllDAGRuns', summary: 'Stop every running run of a DAG', tag: 'dags',
      responses: { 200: { description: 'Every stopped run is recorded', body: ErrorsResponse } },
      errors: ['not_found'],
    });
}
