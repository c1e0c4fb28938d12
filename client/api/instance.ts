// The API's Fastify instance as the modules that install into it see it: pino as its
// logger, TypeBox as its type provider.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../common/logger.js';

export type ApiInstance = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, TypeBoxTypeProvider>;
