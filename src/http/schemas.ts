// Request body schemas (TypeBox). TypeBox and the compiled validators load with the first request
// that carries a body, from the bundle `npm ci` makes (vendor/typebox.mjs, see
// scripts/bundle-typebox.mjs): the package's ~700 modules cost ~190 ms and ~29 MB to load, the
// bundle ~15 ms and ~8 MB (measured). Unknown fields are accepted: Dagu clients send extras.
import type { Static, TSchema } from 'typebox';
import { existsSync } from 'node:fs';
import { AppError, MAX_DAG_NAME_LENGTH, MAX_QUEUE_NAME_LENGTH, MAX_RUN_ID_LENGTH } from '../core/index.ts';
import { MAX_BODY_BYTES } from './types.ts';

export type TypeBuilder = (typeof import('typebox'))['Type'];
type Validator = ReturnType<(typeof import('typebox/compile'))['Compile']>;

/** A schema, built from TypeBox's builder when it is first needed. */
export interface BodySchema<T extends TSchema> {
  build(Type: TypeBuilder): T;
}

export const bodySchema = <T extends TSchema>(build: (Type: TypeBuilder) => T): BodySchema<T> => ({ build });

// Every string has a maximum length, so that what a request holds is bounded field by field, not
// only by the body's size: the rule's own where the route answers 400 beyond it anyway (DAG names,
// run ids, queue names), the body's size for definitions and params, TEXT_LENGTH for the rest.
const NAME = { maxLength: MAX_DAG_NAME_LENGTH };
const RUN_ID = { maxLength: MAX_RUN_ID_LENGTH };
const QUEUE = { maxLength: MAX_QUEUE_NAME_LENGTH };
const LONG = { maxLength: MAX_BODY_BYTES };
/** Step names, and a DAG name to validate (answered `valid: false` when it breaks the name rule). */
export const TEXT_LENGTH = 1024;
const TEXT = { maxLength: TEXT_LENGTH };

export const CreateDagBody = bodySchema((Type) => Type.Object({ name: Type.String(NAME), spec: Type.Optional(Type.String(LONG)) }));
export const SpecBody = bodySchema((Type) => Type.Object({ spec: Type.String(LONG) }));
export const ValidateBody = bodySchema((Type) => Type.Object({ spec: Type.Optional(Type.String(LONG)), name: Type.Optional(Type.String(TEXT)) }));
export const RenameBody = bodySchema((Type) => Type.Object({ newFileName: Type.String(NAME) }));
export const SuspendBody = bodySchema((Type) => Type.Object({ suspend: Type.Boolean() }));
export const StartBody = bodySchema((Type) => Type.Object({
  params: Type.Optional(Type.String(LONG)),
  dagRunId: Type.Optional(Type.String(RUN_ID)),
  dagName: Type.Optional(Type.String(NAME)),
  singleton: Type.Optional(Type.Boolean()),
}));
/** The longest a start-sync request waits, in seconds: a day. */
export const MAX_SYNC_TIMEOUT_SEC = 86_400;
export const StartSyncBody = bodySchema((Type) => Type.Object({
  params: Type.Optional(Type.String(LONG)),
  dagRunId: Type.Optional(Type.String(RUN_ID)),
  dagName: Type.Optional(Type.String(NAME)),
  singleton: Type.Optional(Type.Boolean()),
  timeout: Type.Integer({ minimum: 1, maximum: MAX_SYNC_TIMEOUT_SEC, description: 'How many seconds to wait for the run to end (1 to 86400); the run goes on after it' }),
}));
export const EnqueueBody = bodySchema((Type) => Type.Object({
  params: Type.Optional(Type.String(LONG)),
  dagRunId: Type.Optional(Type.String(RUN_ID)),
  dagName: Type.Optional(Type.String(NAME)),
  queue: Type.Optional(Type.String(QUEUE)),
  singleton: Type.Optional(Type.Boolean()),
}));
export const InlineEnqueueBody = bodySchema((Type) => Type.Object({
  spec: Type.Optional(Type.String(LONG)),
  name: Type.Optional(Type.String({ ...NAME, description: 'The DAG name when the spec has none of its own' })),
  params: Type.Optional(Type.String(LONG)),
  dagRunId: Type.Optional(Type.String(RUN_ID)),
  queue: Type.Optional(Type.String(QUEUE)),
  singleton: Type.Optional(Type.Boolean()),
}));
export const RescheduleBody = bodySchema((Type) => Type.Object({ dagRunId: Type.Optional(Type.String(RUN_ID)), dagName: Type.Optional(Type.String(NAME)) }));
export const QueueLimitBody = bodySchema((Type) => Type.Object({ maxConcurrency: Type.Integer() }));
export const RetryBody = bodySchema((Type) => Type.Object({ dagRunId: Type.Optional(Type.String(RUN_ID)), stepName: Type.Optional(Type.String(TEXT)) }));
/** troupe: history removed by hand (`POST /dag-runs/cleanup`). */
export const CleanupBody = bodySchema((Type) => Type.Object({
  retentionDays: Type.Integer({ minimum: 0, description: 'Runs that finished more than this many days ago go; 0: every finished run' }),
  dryRun: Type.Optional(Type.Boolean({ description: 'Only answer what would go' })),
  name: Type.Optional(Type.String({ minLength: 1, ...NAME, description: 'Only runs of this DAG name; every DAG\'s without it' })),
}));
export const StepStatusBody = bodySchema((Type) => Type.Object({ status: Type.Integer() }));
export const InlineRunBody = bodySchema((Type) => Type.Object({
  spec: Type.Optional(Type.String(LONG)),
  name: Type.Optional(Type.String(NAME)),
  params: Type.Optional(Type.String(LONG)),
  dagRunId: Type.Optional(Type.String(RUN_ID)),
  singleton: Type.Optional(Type.Boolean()),
}));

let typebox: Promise<{ Type: TypeBuilder; Compile: (typeof import('typebox/compile'))['Compile'] }> | undefined;
const compiled = new Map<BodySchema<TSchema>, Validator>();

/** vendor/ sits at the package root, two levels above src/http and dist/http. */
const bundle = new URL('../../vendor/typebox.mjs', import.meta.url);

async function loadTypebox(): Promise<{ Type: TypeBuilder; Compile: (typeof import('typebox/compile'))['Compile'] }> {
  if (existsSync(bundle)) return (await import(bundle.href)) as { Type: TypeBuilder; Compile: (typeof import('typebox/compile'))['Compile'] };
  const [{ Type }, { Compile }] = await Promise.all([import('typebox'), import('typebox/compile')]);
  return { Type, Compile };
}

/** TypeBox's builder, loaded as the validators are (the OpenAPI document builds every schema with it). */
export async function typeBuilder(): Promise<TypeBuilder> {
  typebox ??= loadTypebox();
  return (await typebox).Type;
}

async function validatorOf(schema: BodySchema<TSchema>): Promise<Validator> {
  const ready = compiled.get(schema);
  if (ready) return ready;
  typebox ??= loadTypebox();
  const { Type, Compile } = await typebox;
  const validator = compiled.get(schema) ?? Compile(schema.build(Type));
  compiled.set(schema, validator);
  return validator;
}

/** Returns the body typed by the schema, or throws 400 naming every problem. */
export async function parseBody<T extends TSchema>(schema: BodySchema<T>, body: unknown): Promise<Static<T>> {
  const value = body === undefined ? {} : body;
  const validator = await validatorOf(schema);
  if (validator.Check(value)) return value as Static<T>;
  const problems = [...validator.Errors(value)].map((error) => {
    const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'required') return `${(error.params as { requiredProperties?: string[] }).requiredProperties?.join(', ') ?? 'a field'} is required`;
    return field ? `${field} ${error.message}` : `body ${error.message}`;
  });
  throw new AppError('bad_request', problems.join('; '), { errors: problems });
}
