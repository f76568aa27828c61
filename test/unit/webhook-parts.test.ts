import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { MAX_FORM_FIELDS, mapHookInputs, parseHookBody } from '../../src/modules/webhooks/hook-inputs';
import { rateWindow } from '../../src/modules/webhooks/hook-rate';
import { signatureMatches } from '../../src/modules/webhooks/hook-signature';
import { resolvePointer } from '../../src/modules/webhooks/json-pointer';
import { PayloadTooLargeError, RequestValidationError } from '../../src/errors';
import { loggedPath } from '../../src/http/logged-path';

describe('webhook parts', () => {
  it("resolves RFC 6901 pointers, their escapes and array indexes, and only a document's own members", () => {
    // RFC 6901 section 5's examples.
    const doc = {
      foo: ['bar', 'baz'],
      '': 0,
      'a/b': 1,
      'c%d': 2,
      'e^f': 3,
      'g|h': 4,
      'i\\j': 5,
      'k"l': 6,
      ' ': 7,
      'm~n': 8,
    };
    assert.deepEqual(resolvePointer(doc, ''), doc);
    assert.deepEqual(resolvePointer(doc, '/foo'), ['bar', 'baz']);
    assert.equal(resolvePointer(doc, '/foo/0'), 'bar');
    assert.equal(resolvePointer(doc, '/'), 0);
    assert.equal(resolvePointer(doc, '/a~1b'), 1);
    assert.equal(resolvePointer(doc, '/m~0n'), 8);
    assert.equal(resolvePointer(doc, '/ '), 7);
    for (const nothing of ['/foo/2', '/foo/-', '/foo/01', '/nope', '/foo/0/x', '/__proto__', '/constructor'])
      assert.equal(resolvePointer(doc, nothing), undefined, nothing);
    assert.equal(resolvePointer({ a: null }, '/a'), null);
  });

  it('matches a signature only for the exact bytes, secret, algorithm and prefix', () => {
    const raw = Buffer.from('{"a": 1}\n');
    const spec = { algorithm: 'hmac-sha256' as const, prefix: 'sha256=' };
    const good = `sha256=${createHmac('sha256', 's3cret').update(raw).digest('hex')}`;
    assert.ok(signatureMatches(spec, 's3cret', raw, good));
    assert.ok(!signatureMatches(spec, 'other', raw, good));
    assert.ok(!signatureMatches(spec, 's3cret', Buffer.from('{"a": 1}'), good));
    assert.ok(!signatureMatches(spec, 's3cret', raw, good.slice(7)));
    assert.ok(!signatureMatches(spec, 's3cret', raw, `${good}0`));
    assert.ok(!signatureMatches({ ...spec, algorithm: 'hmac-sha1' }, 's3cret', raw, good));
    const sha1 = `sha1=${createHmac('sha1', 's3cret').update(raw).digest('hex')}`;
    assert.ok(signatureMatches({ algorithm: 'hmac-sha1', prefix: 'sha1=' }, 's3cret', raw, sha1));
  });

  it('reads a form of MAX_FORM_FIELDS fields, one field sent that often as an array, and refuses one more with a 413', () => {
    const FORM = 'application/x-www-form-urlencoded';
    const most = Array.from({ length: MAX_FORM_FIELDS }, (_, i) => `a=${i}`).join('&');
    const fields = parseHookBody(Buffer.from(most), FORM) as { a: string[] };
    assert.equal(fields.a.length, MAX_FORM_FIELDS);
    assert.deepEqual(fields.a.slice(0, 3), ['0', '1', '2']);
    assert.throws(
      () => parseHookBody(Buffer.from(`${most}&a=x`), FORM),
      (err: unknown) => err instanceof PayloadTooLargeError && /at most 1000 fields/.test(err.message),
    );
  });

  it('keeps a form field called __proto__ as a field: the parsed body keeps its prototype and holds every field', () => {
    const body = parseHookBody(Buffer.from('__proto__=x&__proto__=y&a=1'), 'application/x-www-form-urlencoded');
    assert.equal(Object.getPrototypeOf(body), Object.prototype);
    assert.deepEqual(Object.entries(body as object), [
      ['__proto__', ['x', 'y']],
      ['a', '1'],
    ]);
  });

  it('parses form bodies (repeated fields as arrays) and maps fields, naming what does not fit', () => {
    assert.deepEqual(parseHookBody(Buffer.from('a=1&b=x+y&a=2'), 'application/x-www-form-urlencoded'), {
      a: ['1', '2'],
      b: 'x y',
    });
    assert.deepEqual(parseHookBody(Buffer.from(''), 'application/json'), {});
    assert.deepEqual(mapHookInputs({ x: 1 }, null, ['first', 'second']), { first: { x: 1 } });
    assert.deepEqual(mapHookInputs({ p: { t: 'T' } }, { title: '/p/t' }, ['title']), { title: 'T' });
    assert.throws(
      () => mapHookInputs({}, { title: '/p/t' }, ['title']),
      (err: unknown) => err instanceof RequestValidationError && /input field 'title'/.test(err.message),
    );
    assert.throws(
      () => mapHookInputs({ p: 1 }, { nope: '/p' }, ['title']),
      (err: unknown) => err instanceof RequestValidationError && /'nope'/.test(err.message),
    );
  });

  it('counts rates in fixed windows: per second from 1 up, longer windows below', () => {
    assert.deepEqual(rateWindow(10, 12_345), { start: 12_000, windowMs: 1000, allowed: 10, retryAfterSeconds: 1 });
    assert.equal(rateWindow(2.5, 0).allowed, 2);
    const slow = rateWindow(0.2, 12_345);
    assert.deepEqual(slow, { start: 10_000, windowMs: 5000, allowed: 1, retryAfterSeconds: 3 });
  });

  it('keeps hook and approval tokens out of logged paths, and other paths as they are', () => {
    assert.equal(loggedPath('/api/hooks/AbC-123_xyz'), '/api/hooks/…');
    assert.equal(loggedPath('/approve/eyJyIjoiUjEifQ.c2lnbmF0dXJl'), '/approve/…');
    assert.equal(loggedPath('/approve/eyJyIjoiUjEifQ.c2lnbmF0dXJl/'), '/approve/…/');
    assert.equal(loggedPath('/api/run/R12/'), '/api/run/R12/');
  });
});
