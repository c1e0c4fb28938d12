// Bodies are JSON and only JSON: a text/plain body is refused (415) rather than failing
// the schema. JSON is UTF-8 (RFC 8259). Decoding invalid bytes would turn them into
// U+FFFD, so two different requests could share one fingerprint: they are refused instead.
import type { ApiInstance } from '../instance.js';
import { isUtf8 } from 'node:buffer';
import { problems } from '../problems.js';

export function installJsonBody(app: ApiInstance): void {
  app.removeContentTypeParser(['text/plain']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(problems.invalidRequest('the body is not valid UTF-8', [{ field: 'body', message: 'is not valid UTF-8' }]), undefined);
      return;
    }
    parseJson(request, bytes.toString('utf8'), done);
  });
}
