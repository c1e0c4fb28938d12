// Errors of the HTTP parser (a header section over 16 KiB, a control character in a
// header, a request that did not arrive in time) are raised before any route runs, on the
// bare socket. They are answered as problem details too, written by hand, and then the
// connection is closed. The raw request is never logged, since it holds the Authorization
// header.
import type { ConnectionError, FastifyBaseLogger } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEM_CONTENT_TYPE, type Problem } from '../../../common/http/problem.js';
import { problems } from '../problems.js';

function problemFor(err: ConnectionError): Problem {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return problems.requestTimeout();
  if (err.code === 'HPE_HEADER_OVERFLOW') return problems.headersTooLarge();
  return problems.invalidRequest('the request is not valid HTTP/1.1', []);
}

/** A complete HTTP/1.1 answer carrying `problem`, for a socket no reply object owns. */
export function rawProblemResponse(problem: Problem): string {
  const body = JSON.stringify(problem.body());
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Fastify's clientErrorHandler. */
export function clientErrorHandler(this: { log: FastifyBaseLogger }, err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A late request is worth an operator's eye (a slow client, or a starved instance); the
  // parser's complaints about malformed input are not.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') this.log.info({ code: err.code }, 'request did not arrive in time');
  else this.log.debug({ code: err.code }, 'client error');
  if (socket.writable) socket.write(rawProblemResponse(problemFor(err)));
  socket.destroy();
}
