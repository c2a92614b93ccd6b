// The DAG a start runs: refused with every problem of its definition, call cycles included.
import { AppError, type Dag } from '../core/index.ts';
import type { ParseResult } from '../definition/index.ts';

export function usableDag(result: ParseResult, cycles: string[] = []): Dag {
  const errors = [...result.errors, ...cycles];
  if (!result.dag || errors.length > 0) {
    throw new AppError('bad_request', errors.join('; ') || 'invalid DAG definition', { errors });
  }
  return result.dag;
}
