import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's own line for each request received and answered, at `debug` instead of `info`: the
 * router answers a request per task (a submission, a long-poll), so at `info` these are two log
 * lines per task, which cost the router more than routing does. What a service has to say about
 * a request it says itself (a registration, a replay); an error reply keeps fastify's `error`
 * line. Fastify's `logController` option is the place for this.
 */
export class DebugRequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      super.requestCompleted(error, request, reply);
      return;
    }
    if (this.isLogDisabled(request)) return;
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
