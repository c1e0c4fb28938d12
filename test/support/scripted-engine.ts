// A stand-in for Temporal's frontend on loopback that answers every call of the workflow
// service with the gRPC status a test scripts, for the answers a real server will not give
// on demand (wrong credentials, an overload, a namespace not set up). Real gRPC over HTTP/2:
// grpc-js, the SDK's retry interceptor and the SDK's error classes all run, so the API meets
// each answer exactly as the SDK raises it from a real server.
import { Metadata, Server, ServerCredentials, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import proto from '@temporalio/proto';

export interface EngineAnswer {
  code: number;
  details: string;
  /** A Temporal failure attached in `grpc-status-details-bin`, as the server attaches one. */
  failure?: { type: 'NamespaceNotFoundFailure' | 'ResourceExhaustedFailure'; value: Uint8Array };
}

export interface ScriptedEngine {
  address: string;
  /** What every call answers (GetSystemInfo always succeeds, so a connection can be made). */
  answer: EngineAnswer;
  /** The calls received, by method name, in order. */
  calls: string[];
  close(): Promise<void>;
}

const SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';
const identity = (bytes: Buffer) => bytes;

/** The service's methods by name: the package is a reflection root at run time, typed as static code. */
function serviceMethods(): Record<string, unknown> {
  return (proto.temporal.api.workflowservice.v1.WorkflowService as unknown as { methods: Record<string, unknown> }).methods;
}

export async function startScriptedEngine(): Promise<ScriptedEngine> {
  const server = new Server();
  const engine: ScriptedEngine = {
    address: '',
    answer: { code: 14, details: 'not scripted' },
    calls: [],
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
  const definition: Record<string, ServiceDefinition[string]> = {};
  const handlers: Record<string, (call: unknown, callback: (err: ServiceError | null, value?: Buffer) => void) => void> = {};
  for (const method of Object.keys(serviceMethods())) {
    // Requests and answers stay bytes: an empty message is a valid encoding of any answer.
    definition[method] = {
      path: `/${SERVICE}/${method}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    handlers[method] = (_call, callback) => {
      engine.calls.push(method);
      if (method === 'GetSystemInfo') return callback(null, Buffer.alloc(0));
      const { code, details, failure } = engine.answer;
      const metadata = new Metadata();
      if (failure) {
        const status = proto.google.rpc.Status.encode({
          code,
          message: details,
          details: [{ type_url: `type.googleapis.com/temporal.api.errordetails.v1.${failure.type}`, value: failure.value }],
        }).finish();
        metadata.set('grpc-status-details-bin', Buffer.from(status));
      }
      callback(Object.assign(new Error(details), { code, details, metadata }));
    };
  }
  server.addService(definition, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  engine.address = `127.0.0.1:${port}`;
  return engine;
}
