// The Temporal UI server's own HTTP API: the endpoints the Web UI's pages call for their
// data (it proxies Temporal's HTTP API), with payloads decoded. What a page shows comes
// from these answers, so the test reads them where rendering the page is not reliable.
export interface UiServer {
  /** Workflow IDs a visibility query finds (every page of the list). */
  list(query: string): Promise<string[]>;
  /** The execution as the workflow page shows it: status, static summary and details. */
  describe(workflowId: string): Promise<{ status: string; summary: unknown; details: unknown }>;
  /**
   * The timeline: activity summaries in history order (a regular activity's on its
   * scheduled event, a local activity's on its marker), and the workflow's result.
   */
  history(workflowId: string): Promise<{ activitySummaries: unknown[]; result: unknown }>;
  /** A query through the UI server, as the page's User Metadata tab sends it. */
  query(workflowId: string, queryType: string): Promise<unknown>;
}

interface Payload {
  metadata?: { encoding?: string };
  data?: string;
}

/** A JSON payload (the SDK's default converter), or undefined when there is none. */
function decode(payload: Payload | undefined): unknown {
  if (!payload?.data) return undefined;
  const encoding = Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString('utf8');
  if (encoding !== 'json/plain') throw new Error(`a payload encoded as ${encoding}, not json/plain`);
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

/** The marker a local activity's outcome (and its summary) is recorded in; other markers are not activities. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

export function uiServer(baseUrl: string, namespace = 'default'): UiServer {
  const api = `${baseUrl}/api/v1/namespaces/${encodeURIComponent(namespace)}`;
  const json = async <T>(url: string, init?: RequestInit): Promise<T> => {
    const res = await fetch(url, init);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${init?.method ?? 'GET'} ${url} → ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  const workflow = (workflowId: string) => `${api}/workflows/${encodeURIComponent(workflowId)}`;

  return {
    async list(query) {
      const ids: string[] = [];
      let token = '';
      do {
        const page = await json<{ executions?: Array<{ execution: { workflowId: string } }>; nextPageToken?: string }>(
          `${api}/workflows?query=${encodeURIComponent(query)}&pageSize=500${token ? `&nextPageToken=${encodeURIComponent(token)}` : ''}`,
        );
        ids.push(...(page.executions ?? []).map((e) => e.execution.workflowId));
        token = page.nextPageToken ?? '';
      } while (token);
      return ids;
    },
    async describe(workflowId) {
      const res = await json<{
        workflowExecutionInfo: { status: string };
        executionConfig?: { userMetadata?: { summary?: Payload; details?: Payload } };
      }>(workflow(workflowId));
      const metadata = res.executionConfig?.userMetadata;
      return { status: res.workflowExecutionInfo.status, summary: decode(metadata?.summary), details: decode(metadata?.details) };
    },
    async history(workflowId) {
      type Event = {
        eventType: string;
        userMetadata?: { summary?: Payload };
        markerRecordedEventAttributes?: { markerName?: string };
        workflowExecutionCompletedEventAttributes?: { result?: { payloads?: Payload[] } };
      };
      const res = await json<{ history: { events: Event[] } }>(`${workflow(workflowId)}/history`);
      const events = res.history.events;
      return {
        activitySummaries: events
          .filter(
            (e) =>
              e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED' ||
              e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER,
          )
          .map((e) => decode(e.userMetadata?.summary)),
        result: decode(
          events.find((e) => e.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes?.result
            ?.payloads?.[0],
        ),
      };
    },
    async query(workflowId, queryType) {
      // The UI server guards its non-GET routes with a double-submit CSRF cookie, as the
      // Web UI sends it: the token it set, in a header.
      const settings = await fetch(`${baseUrl}/api/v1/settings`);
      await settings.body?.cancel();
      const token = settings.headers
        .getSetCookie()
        .map((c) => /^_csrf=([^;]+)/.exec(c)?.[1])
        .find(Boolean);
      if (!token) throw new Error('the UI server set no _csrf cookie');
      const res = await json<{ queryResult?: { payloads?: Payload[] } }>(
        `${workflow(workflowId)}/query/${encodeURIComponent(queryType)}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': token, cookie: `_csrf=${token}` },
          body: JSON.stringify({ query: { queryType } }),
        },
      );
      return decode(res.queryResult?.payloads?.[0]);
    },
  };
}
