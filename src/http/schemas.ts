// Request body schemas (TypeBox), compiled once. Unknown fields are accepted: Dagu clients send extras.
import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { AppError } from '../core/index.ts';

export const CreateDagBody = Type.Object({ name: Type.String(), spec: Type.Optional(Type.String()) });
export const SpecBody = Type.Object({ spec: Type.String() });
export const ValidateBody = Type.Object({ spec: Type.Optional(Type.String()), name: Type.Optional(Type.String()) });
export const RenameBody = Type.Object({ newFileName: Type.String() });
export const SuspendBody = Type.Object({ suspend: Type.Boolean() });
export const StartBody = Type.Object({
  params: Type.Optional(Type.String()),
  dagRunId: Type.Optional(Type.String()),
  dagName: Type.Optional(Type.String()),
  singleton: Type.Optional(Type.Boolean()),
});
export const InlineRunBody = Type.Object({
  spec: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  params: Type.Optional(Type.String()),
  dagRunId: Type.Optional(Type.String()),
  singleton: Type.Optional(Type.Boolean()),
});

const compiled = new Map<TSchema, ReturnType<typeof Compile>>();

/** Returns the body typed by the schema, or throws 400 naming every problem. */
export function parseBody<T extends TSchema>(schema: T, body: unknown): Static<T> {
  const value = body === undefined ? {} : body;
  let validator = compiled.get(schema);
  if (!validator) {
    validator = Compile(schema);
    compiled.set(schema, validator);
  }
  if (validator.Check(value)) return value as Static<T>;
  const problems = [...validator.Errors(value)].map((error) => {
    const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'required') return `${(error.params as { requiredProperties?: string[] }).requiredProperties?.join(', ') ?? 'a field'} is required`;
    return field ? `${field} ${error.message}` : `body ${error.message}`;
  });
  throw new AppError('bad_request', problems.join('; '), { errors: problems });
}
