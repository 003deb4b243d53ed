import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CapabilityParams,
  ErrorReply,
  ShadowSettingsBody,
  ShadowSettingsView,
} from '@agent-reach/protocol';
import type { ShadowSettingsStore } from '@agent-reach/dispatch';
import { httpError } from '@agent-reach/service-kit';

const tags = ['capabilities'];
const operatorOnly = { roles: ['operator'] as const };

/**
 * A capability's shadow settings (docs/PROTOCOL.md §7): the share of its tasks mirrored to its
 * agents in observation mode, and how their results are compared. Operators only. Every router
 * and registry-sync instance follows a change within two seconds.
 */
export const capabilitiesRoutes: FastifyPluginAsyncTypebox<{
  shadows: ShadowSettingsStore;
}> = async (app, { shadows }) => {
  app.put(
    '/v1/capabilities/:capability/shadow',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: "Set a capability's shadow rate and comparison",
        params: CapabilityParams,
        body: ShadowSettingsBody,
        response: { 200: ShadowSettingsView, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => {
      const { capability } = request.params;
      const put = await shadows.put(capability, request.body);
      if ('error' in put) throw httpError('INVALID_BODY', put.error);
      request.log.info(
        { capability, rate: put.rate, by: request.principal?.keyId },
        'shadow settings changed',
      );
      return { capability, ...put, source: 'capability' as const };
    },
  );

  app.get(
    '/v1/capabilities/:capability/shadow',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: "A capability's shadow settings in force (REACH_SHADOW_RATE without its own)",
        params: CapabilityParams,
        response: { 200: ShadowSettingsView, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => ({
      capability: request.params.capability,
      ...(await shadows.get(request.params.capability)),
    }),
  );

  app.delete(
    '/v1/capabilities/:capability/shadow',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: "Drop a capability's own shadow settings: REACH_SHADOW_RATE holds again",
        params: CapabilityParams,
        response: { 200: ShadowSettingsView, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => {
      const { capability } = request.params;
      await shadows.remove(capability);
      request.log.info({ capability, by: request.principal?.keyId }, 'shadow settings dropped');
      return { capability, ...(await shadows.get(capability)) };
    },
  );
};
