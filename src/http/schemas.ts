// Request body schemas (TypeBox). TypeBox and the compiled validators load with the first request
// that carries a body: importing TypeBox costs about 25 MB of RSS here (measured: a bare Node 20
// process 39 MB, after `import 'typebox/compile'` 68 MB), which a server that only runs scheduled or
// embedded work never needs. Unknown fields are accepted: Dagu clients send extras.
import type { Static, TSchema } from 'typebox';
import { AppError } from '../core/index.ts';

type TypeBuilder = (typeof import('typebox'))['Type'];
type Validator = ReturnType<(typeof import('typebox/compile'))['Compile']>;

/** A schema, built from TypeBox's builder when it is first needed. */
export interface BodySchema<T extends TSchema> {
  build(Type: TypeBuilder): T;
}

const bodySchema = <T extends TSchema>(build: (Type: TypeBuilder) => T): BodySchema<T> => ({ build });

export const CreateDagBody = bodySchema((Type) => Type.Object({ name: Type.String(), spec: Type.Optional(Type.String()) }));
export const SpecBody = bodySchema((Type) => Type.Object({ spec: Type.String() }));
export const ValidateBody = bodySchema((Type) => Type.Object({ spec: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }));
export const RenameBody = bodySchema((Type) => Type.Object({ newFileName: Type.String() }));
export const SuspendBody = bodySchema((Type) => Type.Object({ suspend: Type.Boolean() }));
export const StartBody = bodySchema((Type) => Type.Object({
  params: Type.Optional(Type.String()),
  dagRunId: Type.Optional(Type.String()),
  dagName: Type.Optional(Type.String()),
  singleton: Type.Optional(Type.Boolean()),
}));
export const InlineRunBody = bodySchema((Type) => Type.Object({
  spec: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  params: Type.Optional(Type.String()),
  dagRunId: Type.Optional(Type.String()),
  singleton: Type.Optional(Type.Boolean()),
}));

let typebox: Promise<{ Type: TypeBuilder; Compile: (typeof import('typebox/compile'))['Compile'] }> | undefined;
const compiled = new Map<BodySchema<TSchema>, Validator>();

async function validatorOf(schema: BodySchema<TSchema>): Promise<Validator> {
  const ready = compiled.get(schema);
  if (ready) return ready;
  typebox ??= Promise.all([import('typebox'), import('typebox/compile')]).then(([{ Type }, { Compile }]) => ({ Type, Compile }));
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
