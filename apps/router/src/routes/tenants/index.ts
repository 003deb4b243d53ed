import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorReply,
  TenantParams,
  TenantsReply,
  TenantUpdate,
  TenantView,
} from '@agent-reach/protocol';
import type { TenantRecords } from '../../tenants/tenant-records.ts';

const tags = ['tenants'];
const operatorOnly = { roles: ['operator'] as const };

/**
 * Tenant records (docs/SECURITY.md, Tenants): each tenant's weight and bounds in a capability's
 * waiting room. Operators only.
 */
export const tenantsRoutes: FastifyPluginAsyncTypebox<{ records: TenantRecords }> = async (
  app,
  { records },
) => {
  app.put(
    '/v1/tenants/:tenant',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: "Change a tenant's record: the fields given; the others keep their values",
        params: TenantParams,
        body: TenantUpdate,
        response: { 200: TenantView, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => {
      const { tenant } = request.params;
      const view = await records.put(tenant, request.body);
      request.log.info(
        { tenant, fields: Object.keys(request.body), by: request.principal?.keyId },
        'tenant record changed',
      );
      return view;
    },
  );

  app.get(
    '/v1/tenants',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Every tenant with a record, by name',
        response: { 200: TenantsReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async () => ({ tenants: await records.list() }),
  );

  app.get(
    '/v1/tenants/:tenant',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: "A tenant's record; the defaults for a tenant with none",
        params: TenantParams,
        response: { 200: TenantView, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    // The record as this router applies it: at most cacheMs older than the stored one.
    async (request) => records.get(request.params.tenant),
  );
};
