import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, definitionHash } from '../../src/db/definition-hash';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('definition-hash', () => {
  describe('canonicalJson', () => {
    it('sorts keys at every depth and writes no whitespace', () => {
      const value = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } };
      assert.equal(canonicalJson(value), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    });

    it('keeps array order', () => {
      assert.equal(canonicalJson([3, 1, 2]), '[3,1,2]');
      assert.equal(canonicalJson([{ b: 1, a: 2 }, 'x']), '[{"a":2,"b":1},"x"]');
    });

    it('writes primitives as JSON and undefined as null', () => {
      assert.equal(canonicalJson('x'), '"x"');
      assert.equal(canonicalJson(1.5), '1.5');
      assert.equal(canonicalJson(true), 'true');
      assert.equal(canonicalJson(null), 'null');
      assert.equal(canonicalJson(undefined), 'null');
    });

    it('drops undefined object values but keeps nulls', () => {
      assert.equal(canonicalJson({ a: undefined, b: null }), '{"b":null}');
    });

    it('escapes unicode, quotes and keys with "." and "$" as JSON does', () => {
      const value = { 'a.b': 1, $set: { 'x"y': 'é😀' }, 名前: '\n' };
      assert.equal(canonicalJson(value), '{"$set":{"x\\"y":"é😀"},"a.b":1,"名前":"\\n"}');
      assert.deepEqual(JSON.parse(canonicalJson(value)), value);
    });
  });

  describe('definitionHash', () => {
    it('is the SHA-256 of the canonical JSON, as 64 lowercase hex digits', () => {
      const hash = definitionHash({ b: [1, 2], a: 'x' });
      assert.match(hash, /^[0-9a-f]{64}$/);
      assert.equal(hash, sha256('{"a":"x","b":[1,2]}'));
    });

    it('ignores key order at every depth', () => {
      const one = {
        nodes: [
          { id: 'n1', config: { llm_info: { model: 'm', temperature: 0.5 }, title: 't' }, coordinates: { x: 1, y: 2 } },
        ],
        links: [{ source_id: 'a', target_id: 'b' }],
        spur_type: 'workflow',
      };
      const two = {
        spur_type: 'workflow',
        links: [{ target_id: 'b', source_id: 'a' }],
        nodes: [
          { coordinates: { y: 2, x: 1 }, config: { title: 't', llm_info: { temperature: 0.5, model: 'm' } }, id: 'n1' },
        ],
      };
      assert.equal(definitionHash(one), definitionHash(two));
    });

    it('depends on array order', () => {
      assert.notEqual(
        definitionHash({ nodes: [{ id: 'a' }, { id: 'b' }] }),
        definitionHash({ nodes: [{ id: 'b' }, { id: 'a' }] }),
      );
    });

    it('hashes unicode and "."/"$" keys stably', () => {
      const a = { 'a.b': { $in: ['ü', '日本'] }, $x: '😀' };
      const b = { $x: '😀', 'a.b': { $in: ['ü', '日本'] } };
      assert.equal(definitionHash(a), definitionHash(b));
      assert.equal(definitionHash(a), sha256('{"$x":"😀","a.b":{"$in":["ü","日本"]}}'));
      // A dotted key is not the same as the nested path it resembles.
      assert.notEqual(definitionHash({ 'a.b': 1 }), definitionHash({ a: { b: 1 } }));
    });

    it('gives different hashes for different values', () => {
      const hashes = [
        { a: 1 },
        { a: '1' },
        { a: 2 },
        { a: null },
        {},
        { a: true },
        { a: 'true' },
        { a: [1] },
        { a: { b: 1 } },
        { b: 1 },
        { a: 'é' },
        { a: 'e' },
      ].map(definitionHash);
      assert.equal(new Set(hashes).size, hashes.length);
    });

    it('treats an undefined value like an absent key', () => {
      assert.equal(definitionHash({ a: 1, b: undefined }), definitionHash({ a: 1 }));
    });

    it('is deterministic across calls', () => {
      const def = { nodes: [], links: [], test_inputs: [], spur_type: 'chatbot' };
      assert.equal(definitionHash(def), definitionHash(structuredClone(def)));
      assert.equal(definitionHash(def), sha256('{"links":[],"nodes":[],"spur_type":"chatbot","test_inputs":[]}'));
    });
  });
});
