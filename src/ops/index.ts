export { TroupeMetrics, type MetricsSources } from './metrics.ts';
export { engineSources, type EngineParts } from './engine-sources.ts';
export { ResourceHistory, RETENTION_MS, SAMPLE_INTERVAL_MS, type ResourceHistoryOptions, type ResourceSample, type ResourceSeries } from './resource-history.ts';
export { parseDuration } from './duration.ts';
