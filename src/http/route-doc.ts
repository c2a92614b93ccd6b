// What a route declares of itself beside its handler, for the OpenAPI document (openapi.ts): its
// query parameters and body (the declarations the handler reads them through), the bodies of its
// success responses and the error codes it answers with. Path parameters come from the pattern.
import type { TSchema } from 'typebox';
import type { ErrorCode } from '../core/index.ts';
import type { QueryParam } from './query.ts';
import type { BodySchema } from './schemas.ts';

export interface SuccessResponse {
  description: string;
  /** The JSON body; absent for a response without a body. */
  body?: BodySchema<TSchema>;
  /** A body that is not JSON: its media type (the schema is a string). */
  text?: string;
  /** Headers the response carries (a redirect's Location, a Set-Cookie), by name: what each holds. */
  headers?: Record<string, string>;
}

export interface RouteDoc {
  /** Dagu's operationId where Dagu has the route, so that generated clients keep their names. */
  operationId: string;
  summary: string;
  description?: string;
  tag: 'system' | 'dags' | 'dag-runs' | 'queues' | 'monitoring' | 'auth' | 'users' | 'api-keys';
  query?: ReadonlyArray<QueryParam<unknown>>;
  body?: BodySchema<TSchema>;
  responses: Record<number, SuccessResponse>;
  /** The codes the route answers with beyond those every route may give (openapi.ts, commonErrors). */
  errors?: ErrorCode[];
  /** Where the route maps a code to another status than errors.ts does (errors.ts, statusOverrides). */
  statusOverrides?: Partial<Record<ErrorCode, number>>;
}

/** Path parameters by the name routes give them. */
export const PATH_PARAMETERS: Record<string, string> = {
  fileName: 'The DAG file name without .yaml (letters, digits, _, . and -; a name that breaks the rule is 404)',
  name: 'The DAG name of the run',
  dagRunId: 'The run id; `latest` names the DAG\'s newest run',
  subDagRunId: 'The id of a sub DAG run of the run, at any depth',
  stepName: 'The step name; the log routes also find a handler\'s node by its name (onInit, onSuccess, onFailure, onCancel, onExit)',
  queue: 'The custom queue\'s name',
  userId: 'The user\'s id',
  keyId: 'The API key\'s id',
};
