// Values the API reads straight off the workflow service (a visibility row, a close event),
// decoded as the SDK decodes them: payloads through the client's codecs, last codec first,
// then its payload converter, in the workflow's serialization context; timestamps to Dates
// at millisecond precision, as the SDK's describe() gives them.
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type proto from '@temporalio/proto';

export async function decodePayload(client: Client, namespace: string, workflowId: string, payload: Payload): Promise<unknown> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  const context = { type: 'workflow' as const, namespace, workflowId };
  let payloads = [payload];
  for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads, context);
  return payloadConverter.fromPayload(payloads[0]!, context);
}

export function decodeTimestamp(ts: proto.google.protobuf.ITimestamp | null | undefined): Date | undefined {
  if (!ts) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000));
}
