// API keys (admin): /api-keys and /api-keys/{keyId}. A key's secret is answered once, at creation.
import { CreateApiKeyBody, UpdateApiKeyBody } from '../auth-schemas.ts';
import { ApiKeyResponse, ApiKeysResponse, CreatedApiKeyResponse } from '../response-schemas.ts';
import type { Router } from '../router.ts';
import { parseBody } from '../schemas.ts';
import { empty, json, type ApiDeps, type HttpRequest } from '../types.ts';
import { authOf } from './auth.ts';

function listKeys(_request: HttpRequest, deps: ApiDeps) {
  return json({ apiKeys: authOf(deps).accounts.listApiKeys() });
}

async function createKey(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(CreateApiKeyBody, request.body);
  return json(await authOf(deps).accounts.createApiKey(request.identity, body), 201);
}

function getKey(request: HttpRequest, deps: ApiDeps) {
  return json({ apiKey: authOf(deps).accounts.apiKey(request.params.keyId) });
}

async function updateKey(request: HttpRequest, deps: ApiDeps) {
  const body = await parseBody(UpdateApiKeyBody, request.body);
  return json({ apiKey: await authOf(deps).accounts.updateApiKey(request.params.keyId, body) });
}

async function deleteKey(request: HttpRequest, deps: ApiDeps) {
  await authOf(deps).accounts.deleteApiKey(request.params.keyId);
  return empty(204);
}

export function apiKeyRoutes(router: Router): void {
  router
    .add('GET', '/api-keys', listKeys, {
      permission: 'admin',
      operationId: 'listAPIKeys', summary: 'Every API key (without its secret)', tag: 'api-keys',
      responses: { 200: { description: 'The keys, oldest first', body: ApiKeysResponse } },
      errors: ['not_found'],
    })
    .add('POST', '/api-keys', createKey, {
      permission: 'admin',
      operationId: 'createAPIKey', summary: 'Create an API key with a role; the key is in this answer only', tag: 'api-keys',
      body: CreateApiKeyBody,
      responses: { 201: { description: 'Created', body: CreatedApiKeyResponse } },
      errors: ['bad_request', 'already_exists', 'not_found', 'insufficient_storage'],
    })
    .add('GET', '/api-keys/:keyId', getKey, {
      permission: 'admin',
      operationId: 'getAPIKey', summary: 'An API key (without its secret)', tag: 'api-keys',
      responses: { 200: { description: 'The key', body: ApiKeyResponse } },
      errors: ['not_found'],
    })
    .add('PATCH', '/api-keys/:keyId', updateKey, {
      permission: 'admin',
      operationId: 'updateAPIKey', summary: 'Rename an API key, or change its description or role', tag: 'api-keys',
      body: UpdateApiKeyBody,
      responses: { 200: { description: 'Updated', body: ApiKeyResponse } },
      errors: ['bad_request', 'not_found', 'already_exists', 'insufficient_storage'],
    })
    .add('DELETE', '/api-keys/:keyId', deleteKey, {
      permission: 'admin',
      operationId: 'deleteAPIKey', summary: 'Revoke an API key: it stops authenticating at once', tag: 'api-keys',
      responses: { 204: { description: 'Revoked; no body' } },
      errors: ['not_found', 'insufficient_storage'],
    });
}
