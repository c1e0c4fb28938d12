// Connection settings for the API and the worker, from the standard Temporal variables
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE)
// through @temporalio/envconfig, so pointing at a cluster or Temporal Cloud needs no code.
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ConnectionOptions } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';

/**
 * The variables that pick and authenticate a cluster besides TEMPORAL_ADDRESS. A process
 * pointed at a local dev server must not inherit them: credentials meant for a cluster
 * elsewhere would be sent to it, or switch on TLS it does not speak.
 */
export const TEMPORAL_CONNECTION_VARS = [
  'TEMPORAL_API_KEY',
  'TEMPORAL_PROFILE',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
];

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** Options for Connection.connect (the API's client). */
  connectionOptions: ConnectionOptions;
  /** The same settings for NativeConnection.connect (the worker). */
  nativeConnectionOptions: NativeConnectionOptions;
}

export function loadTemporalSettings(env: Record<string, string | undefined> = process.env): TemporalSettings {
  const overrideEnvVars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars });
  const address = connectionOptions.address ?? 'localhost:7233';
  return {
    address,
    namespace: namespace ?? 'default',
    // envconfig yields one settings object (address, tls, apiKey, metadata) valid for both.
    connectionOptions: { ...connectionOptions, address } as ConnectionOptions,
    nativeConnectionOptions: { ...connectionOptions, address },
  };
}
