import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateKeyBody,
  CreateKeyReply,
  ErrorReply,
  KeyParams,
  KeysReply,
  type KeyView,
} from '@agent-reach/protocol';
import { httpError, type ApiKeyRecord, type ApiKeyStore } from '@agent-reach/service-kit';

const tags = ['keys'];
const operatorOnly = { roles: ['operator'] as const };

function view(record: ApiKeyRecord): KeyView {
  return {
    key_id: record.keyId,
    tenant: record.tenant,
    role: record.role,
    capabilities: [...record.capabilities],
    label: record.label,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    rate_per_s: record.ratePerS,
    max_inflight: record.maxInflight,
  };
}

/** API keys (docs/SECURITY.md): make one, list them, revoke one. Operators only. */
export const keysRoutes: FastifyPluginAsyncTypebox<{ store: ApiKeyStore }> = async (
  app,
  { store },
) => {
  app.post(
    '/v1/keys',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Make an API key; the reply shows the key this once',
        body: CreateKeyBody,
        response: { 201: CreateKeyReply, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.expires_at !== undefined && body.expires_at <= Date.now()) {
        throw httpError('INVALID_BODY', 'body/expires_at is in the past (epoch ms expected)');
      }
      const { record, key } = await store.create({
        tenant: body.tenant,
        role: body.role,
        capabilities: body.capabilities ?? ['*'],
        label: body.label ?? '',
        expiresAt: body.expires_at ?? null,
        ratePerS: body.rate_per_s ?? null,
        maxInflight: body.max_inflight ?? null,
      });
      request.log.info(
        {
          key_id: record.keyId,
          tenant: record.tenant,
          role: record.role,
          by: request.principal?.keyId,
        },
        'api key created',
      );
      const { created_at: _created, ...rest } = view(record);
      return reply.code(201).send({ ...rest, key });
    },
  );

  app.get(
    '/v1/keys',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Every API key, without secrets',
        response: { 200: KeysReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async () => ({ items: (await store.list()).map(view) }),
  );

  app.delete(
    '/v1/keys/:key_id',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Revoke an API key: every router and registry-sync refuses it within a second',
        params: KeyParams,
        response: {
          204: { type: 'null', description: 'Revoked' },
          400: ErrorReply,
          401: ErrorReply,
          403: ErrorReply,
          404: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      const { key_id } = request.params;
      if (!(await store.revoke(key_id))) throw httpError('NOT_FOUND', `no API key ${key_id}`);
      request.log.info({ key_id, by: request.principal?.keyId }, 'api key revoked');
      return reply.code(204).send();
    },
  );
};
