// The `event` field of the log lines that tools count: faults a sandbox injected, the start
// and end of each HTTP request, downstream calls that failed. Messages are for people and
// may be reworded; these names are for machines and stay put, so a tool reads a field
// rather than a substring of a sentence.
export const LogEvent = {
  /** An HTTP request arrived (API and sandboxes). */
  requestReceived: 'request_received',
  /** Its answer was sent, or the response stream failed: it is no longer in flight. */
  requestFinished: 'request_finished',
  /** The server reset the connection without an answer (an injected fault): no longer in flight either. */
  requestCut: 'request_cut',
  /** A sandbox injected a fault; `fault` names it as `PUT /_faults` does. */
  faultInjected: 'fault_injected',
  /** A worker's call to a downstream service failed; `result` says how (refused, unavailable). */
  downstreamCallFailed: 'downstream_call_failed',
  /** A worker refused an operation's program before any call: it lacks a service or activity the program needs. */
  programRefused: 'program_refused',
} as const;

export type LogEventName = (typeof LogEvent)[keyof typeof LogEvent];
