export { parseDag, type ParseOptions, type ParseResult } from './dag-parser.ts';
export { formatIssue, type SpecIssue } from './issues.ts';
export { parseYamlMap } from './yaml-source.ts';
export { splitWords } from './command.ts';
export { expandVariables, evaluateEnv, filterSystemEnv, type ExpandScope } from './expand.ts';
export { paramsFromRequest, mergeParams, paramsJson, paramsList, paramsRecord } from './params.ts';
export { dependencyNames } from './graph.ts';
export { stepView, conditionView, fieldsNotRunYet, minimalSpec, exampleSpec } from './step-view.ts';
export { parseDotenv } from './dotenv.ts';
