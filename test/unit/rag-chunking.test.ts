import assert from 'node:assert/strict';
import { getEncoding } from 'js-tiktoken';
import { chunkDocument, splitByTokens } from '../../src/parsing/documents/chunker';
import { hybridRank } from '../../src/rag/hybrid';
import { TextProcessingConfig } from '../../src/parsing/documents/text-processing';
import type { VectorHit } from '../../src/rag/vector-store';

const encoding = getEncoding('cl100k_base');
const text = Array.from({ length: 300 }, (_, i) => `Sentence number ${i} talks about item ${i * 3}.`).join(' ');

function hit(chunk_id: string, score: number): VectorHit {
  return {
    chunk_id,
    document_id: 'd',
    document_title: null,
    chunk_number: 0,
    page_number: null,
    text: chunk_id,
    score,
  };
}

describe('knowledge bases: chunking by tokens and hybrid ranking', () => {
  it('keeps every chunk within chunk_token_size tokens, cut at a sentence end past min_chunk_size_chars', () => {
    const config = TextProcessingConfig.parse({ chunk_token_size: 50, min_chunk_size_chars: 60 });
    const chunks = splitByTokens(text, config, 10_000);
    assert.ok(chunks.length > 10);
    for (const c of chunks) assert.ok(encoding.encode(c).length <= 50, c);
    for (const c of chunks.slice(0, -1)) assert.ok(c.endsWith('.'), `cut at a sentence end: ${c}`);
    // Nothing lost: the chunks put together are the text.
    assert.equal(chunks.join(' ').replace(/\s+/g, ' '), text);
  });

  it('stops at max_num_chunks and drops pieces no longer than min_chunk_length_to_embed', async () => {
    assert.equal(
      (
        await chunkDocument(
          { text, pages: null },
          TextProcessingConfig.parse({ chunk_token_size: 20, max_num_chunks: 4 }),
        )
      ).length,
      4,
    );
    assert.deepEqual(splitByTokens('ok.', TextProcessingConfig.parse({ min_chunk_length_to_embed: 5 }), 10), []);
  });

  it('numbers PDF chunks by page and applies the template to text and metadata', async () => {
    const config = TextProcessingConfig.parse({
      template: { enabled: true, template: '[{{ text }}]', metadata_template: { kind: 'k:{{ text|length }}' } },
    });
    const chunks = await chunkDocument(
      { text: 'one page text\n\nanother page', pages: ['one page text', 'another page'] },
      config,
    );
    assert.deepEqual(
      chunks.map((c) => [c.index, c.page_number, c.text, c.original_text]),
      [
        [0, 1, '[one page text]', 'one page text'],
        [1, 2, '[another page]', 'another page'],
      ],
    );
    assert.deepEqual(chunks[0]?.custom_metadata, { kind: 'k:13' });
  });

  it('ranks hybrid results by weighted cosine and BM25 normalised to the best match', () => {
    const ranked = hybridRank(
      [hit('a', 0.9), hit('b', 0.5)],
      [hit('b', 4), hit('c', 2)],
      { semantic: 0.5, keyword: 0.5 },
      3,
    );
    assert.deepEqual(
      ranked.map((h) => [h.chunk_id, Number(h.score.toFixed(3))]),
      [
        ['b', 0.75],
        ['a', 0.45],
        ['c', 0.25],
      ],
    );
    assert.equal(hybridRank([hit('a', 0.9)], [hit('b', 4)], { semantic: 1, keyword: 1 }, 1).length, 1);
  });
});
